/**
 * The estimate as torch's memory categories (MemTracker: parameters, gradients, optimizer states, activations,
 * temporaries, other) with the peak of each on its own and the peak of the total, so that it can be set beside the
 * fake-tensor oracle (validation/torch/oracleCompare.ts). Tensor bytes only: the CUDA context and allocator
 * fragmentation are outside torch's tensor accounting.
 */
import type { StageMemory } from '../plan/result';

export interface CategoryPeaks {
  readonly parameters: number;
  readonly gradients: number;
  readonly optimizer: number;
  readonly activations: number;
  readonly temporaries: number;
  /** Engine buffers outside modules and optimizers (DDP buckets, DeepSpeed ipg buckets). */
  readonly other: number;
  readonly total: number;
}

/** Per-category peaks of one stage of the estimate. */
export function stageCategoryPeaks(s: StageMemory): CategoryPeaks {
  if (s.peaks) return s.peaks;
  const t = (n: keyof StageMemory['terms']) => s.terms[n]?.bytes ?? 0;
  return {
    parameters: t('parameters') + t('gatheredParameters'),
    gradients: t('gradients') + t('gradAccumBuffer'),
    optimizer: t('optimizerStates') + t('masterWeights'),
    activations: t('activations') + t('embeddingActivations') + t('logits'),
    temporaries: 0,
    other: t('commBuffers'),
    total: Math.max(0, s.peakAllocatedBytes - t('cudaContext')),
  };
}
