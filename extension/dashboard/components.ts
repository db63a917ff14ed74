/** Maps the core's memory terms onto the dashboard's stacked-bar components (pure, no vscode). */
import type { MemoryTermName, StageMemory } from '../../shared/plan/result';
import type { MemoryComponent, StageBar } from '../../shared/protocol';

/**
 * Which bar component each core term belongs to. Master weights count as optimizer states, as in the ZeRO paper's
 * K = 12 bytes per parameter for mixed-precision Adam (Rajbhandari et al. 2020, §3.1).
 */
export const TERM_COMPONENT: Readonly<Record<MemoryTermName, MemoryComponent>> = {
  parameters: 'parameters',
  gradients: 'gradients',
  gradAccumBuffer: 'gradients',
  optimizerStates: 'optimizer',
  masterWeights: 'optimizer',
  activations: 'activations',
  embeddingActivations: 'activations',
  logits: 'logits',
  commBuffers: 'buffers',
  engineCopies: 'buffers',
  gatheredParameters: 'buffers',
  fp8WeightCache: 'parameters',
  cudaContext: 'overhead',
  fragmentation: 'overhead',
};

/** A finite non-negative number, else 0 (the dashboards never draw NaN, ∞ or negative figures). */
export const clean = (x: unknown): number => (typeof x === 'number' && Number.isFinite(x) && x > 0 ? x : 0);

/** Sums one stage's terms per component. */
export function stageBar(s: StageMemory): StageBar {
  const bytes: Partial<Record<MemoryComponent, number>> = {};
  for (const [name, term] of Object.entries(s.terms)) {
    if (!term) continue;
    const c = TERM_COMPONENT[name as MemoryTermName];
    if (!c) continue;
    bytes[c] = (bytes[c] ?? 0) + clean(term.bytes);
  }
  return {
    stage: Number.isInteger(s.stage) && s.stage >= 0 ? s.stage : 0,
    bytes,
    peakAllocatedBytes: clean(s.peakAllocatedBytes),
    peakReservedBytes: clean(s.peakReservedBytes),
  };
}
