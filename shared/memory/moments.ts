/**
 * The moments of a training step at which a stage's memory can peak, and what is live at each (docs/engine-memory.md
 * #moments). A stage's peak is the largest moment, not the sum of every term's own peak: the loss's copies of the
 * logits, the recomputation working set, FSDP2's re-gathered root and the gradients of engines that free them after
 * the optimizer step (`zero_grad(set_to_none=True)`) never all coexist.
 *
 * - forward: the saved activations and, on the last stage, the model's logits inside the forward.
 * - loss: the loss's forward and backward copies of the logits (shared/memory/loss.ts).
 * - head backward: FSDP2 gathers the root (embedding, norm, head) again at the start of the backward — the all-gather
 *   output and the unsharded parameters copied out of it coexist for a moment (torch fully_shard
 *   foreach_all_gather_copy_out) — next to the logits' 16-bit gradient.
 * - layers' backward: the recomputation working set, the gathered units and their unsharded gradients.
 * - end of backward: every gradient, the activations freed.
 * - optimizer step: Megatron's fp32 copy of a 16-bit main_grad shard.
 */
import type { MemoryContext } from './context';

export type MomentName = 'forward' | 'loss forward' | 'loss backward' | 'head backward' | 'layers backward' | 'end of backward' | 'optimizer step'
  // Pipeline stages only (shared/memory/pipelineMoments.ts).
  | 'first gather' | 'embedding backward' | 'gradient reduce';

/** Bytes of each memory term live at one moment. */
export interface MomentTerms {
  name: MomentName;
  parameters: number; gradients: number; optimizerStates: number; masterWeights: number; gradAccumBuffer: number;
  fp8WeightCache: number; gatheredParameters: number; commBuffers: number;
  activations: number; embeddingActivations: number; logits: number;
  /** Tensors the backward makes that are neither gradients nor recomputed activations (torch's "temporaries"). */
  temporaries: number;
}

/**
 * What the moments read from one stage (bytes, per rank). Mutable: each StageNumbers keeps one and refills it, so the
 * planner's fast path allocates nothing per layout.
 */
export interface MomentInputs {
  first: boolean; last: boolean;
  parameters: number; gradients: number; optimizerStates: number; masterWeights: number;
  gradAccumBuffer: number; fp8WeightCache: number; commBuffers: number;
  /** ZeRO-3/FSDP1/DeepSpeed gathered bytes as `gatheredParameterBytes` gives them (0 below stage 3). */
  gathered: number;
  /** FSDP2: the root's gathered bytes (embedding, final norm, head of the stage) and one block's. */
  rootBytes: number; unitBytes: number; headBytes: number;
  /** FSDP2: one block's sharded gradient bytes (the last block's reduce-scatter is still in flight at the end). */
  unitShardedGrad: number;
  /** Saved activations of the in-flight micro-batches (layers and embedding), and the recomputation working set. */
  layerActivations: number; embeddingActivations: number; working: number;
  /** Last stage: output-layer inputs, the loss's forward, saved and backward bytes, the model's logits. */
  head: number; lossForward: number; lossSaved: number; lossBackward: number; logits: number;
  /**
   * Bytes the optimizer step adds: Megatron's fp32 copy of a 16-bit main_grad shard (`main_grad.float()`, 4 bytes per
   * master parameter; a plan's fp32 gradient buffer term is that copy and then exists only at the step), else 0.
   */
  stepCopy: number;
}

/** A zeroed MomentInputs to refill. */
export function newMomentInputs(): MomentInputs {
  return {
    first: false, last: false, parameters: 0, gradients: 0, optimizerStates: 0, masterWeights: 0, gradAccumBuffer: 0,
    fp8WeightCache: 0, commBuffers: 0, gathered: 0, rootBytes: 0, unitBytes: 0, headBytes: 0, unitShardedGrad: 0,
    layerActivations: 0, embeddingActivations: 0, working: 0, head: 0, lossForward: 0, lossSaved: 0, lossBackward: 0,
    logits: 0, stepCopy: 0,
  };
}

/** Engines that drop gradients after the optimizer step (torch `zero_grad(set_to_none=True)`): gradients exist from the backward on. */
export function gradientsFreedAfterStep(c: Pick<MemoryContext, 'regime' | 'style'>): boolean {
  return c.style !== 'megatron-distopt' && (c.regime === 'amp' || c.regime === 'fsdp2' || c.regime === 'bf16-true' || c.regime === 'fp32');
}

/** Room for every moment of a stage's step (refilled by stageMoments, or pipelineMoments on a pipeline stage). */
export const MAX_MOMENTS = 16;

/** A zeroed moment. */
export function zeroMoment(name: MomentName = 'forward'): MomentTerms {
  return {
    name, parameters: 0, gradients: 0, optimizerStates: 0, masterWeights: 0, gradAccumBuffer: 0, fp8WeightCache: 0,
    gatheredParameters: 0, commBuffers: 0, activations: 0, embeddingActivations: 0, logits: 0, temporaries: 0,
  };
}

/** Scratch moments for one stage. */
export function newMoments(): MomentTerms[] {
  return Array.from({ length: MAX_MOMENTS }, () => zeroMoment());
}

/** The sum of a moment's terms. */
export function momentTotal(m: MomentTerms): number {
  return m.parameters + m.gradients + m.optimizerStates + m.masterWeights + m.gradAccumBuffer + m.fp8WeightCache
    + m.gatheredParameters + m.commBuffers + m.activations + m.embeddingActivations + m.logits + m.temporaries;
}

/** One moment's states and saved activations (the moment then adds what is its own). */
export function fill(m: MomentTerms, name: MomentName, x: MomentInputs, withGrads: boolean, fsdp2: boolean): MomentTerms {
  m.name = name;
  m.parameters = x.parameters; m.optimizerStates = x.optimizerStates; m.masterWeights = x.masterWeights;
  m.fp8WeightCache = x.fp8WeightCache; m.commBuffers = x.commBuffers;
  m.gradients = withGrads ? x.gradients : 0;
  m.gradAccumBuffer = withGrads && x.stepCopy === 0 ? x.gradAccumBuffer : 0;
  m.gatheredParameters = fsdp2 ? 0 : x.gathered;
  m.activations = x.layerActivations; m.embeddingActivations = x.embeddingActivations;
  m.logits = 0; m.temporaries = 0;
  return m;
}

/** Writes every moment of the stage's step, in step order, into `out` (newMoments); returns how many there are. */
export function stageMoments(c: Pick<MemoryContext, 'regime' | 'style' | 'zstage' | 'reshard'>, x: MomentInputs, out: MomentTerms[]): number {
  const dynamicGrads = gradientsFreedAfterStep(c);
  const fsdp2 = c.style === 'fsdp2' && c.zstage >= 3 && c.reshard;
  let n = 0;
  const freed = !dynamicGrads;
  // Forward, at the last block (and the head on the last stage): root and one block gathered with the next prefetched.
  const fwd = fill(out[n++], 'forward', x, freed, fsdp2);
  if (fsdp2) fwd.gatheredParameters = x.rootBytes + 2 * x.unitBytes;
  if (x.last) fwd.logits = x.head + x.logits;
  if (x.last) {
    // The loss runs after the model's forward returned (FSDP2 has resharded the root and the blocks): its forward
    // copies of the logits, then its backward's, next to what the forward saved for it.
    fill(out[n++], 'loss forward', x, freed, fsdp2).logits = x.head + x.lossForward;
    const lossB = fill(out[n++], 'loss backward', x, freed, fsdp2);
    lossB.logits = x.head + x.lossSaved;
    lossB.temporaries = Math.max(0, x.lossBackward - x.lossSaved);
    // The head's backward: the logits' gradient in the model dtype; FSDP2 gathers the root again (two copies briefly).
    const head = fill(out[n++], 'head backward', x, freed, fsdp2);
    head.logits = x.head;
    head.temporaries = x.logits;
    if (fsdp2) head.gatheredParameters = 2 * x.rootBytes + x.unitBytes;
  }
  // The layers' backward: recomputation, a gathered block with the next prefetched and its unsharded gradient; engines
  // that free gradients hold the head's gradient and the blocks' gradients reduced so far (counted whole: an upper bound).
  const layers = fill(out[n++], 'layers backward', x, true, fsdp2);
  layers.activations = x.layerActivations + x.working;
  if (fsdp2) {
    layers.gatheredParameters = x.rootBytes + 2 * x.unitBytes;
    layers.gradients += x.headBytes + x.unitBytes;
  }
  // The end of the backward: every gradient; FSDP2 still holds the root gathered with its unsharded gradients, and the
  // last block's reduce-scatter input waits for its result (FSDP2 assigns a group's sharded gradients one group later).
  const end = fill(out[n++], 'end of backward', x, true, fsdp2);
  end.activations = 0;
  end.embeddingActivations = 0;
  if (fsdp2) {
    end.gatheredParameters = x.rootBytes;
    end.gradients = Math.max(0, x.gradients - x.unitShardedGrad) + x.rootBytes;
    end.temporaries = x.unitBytes;
  }
  // The optimizer step: Megatron hands the optimizer an fp32 copy of a 16-bit main_grad shard
  // (megatron/core/optimizer/distrib_optimizer.py copies `main_grad.float()` to each master shard's grad).
  if (x.stepCopy > 0) {
    const step = fill(out[n++], 'optimizer step', x, true, fsdp2);
    step.activations = 0; step.embeddingActivations = 0;
    step.gradAccumBuffer = x.stepCopy;
  }
  return n;
}

/** torch's memory categories (MemTracker) with the peak of each on its own. */
export interface CategoryBytes { parameters: number; gradients: number; optimizer: number; activations: number; temporaries: number; other: number }

/** Raises `peaks` to a moment's bytes as torch's memory categories, for the fake-tensor oracle. */
export function raiseCategoryPeaks(m: MomentTerms, peaks: CategoryBytes): void {
  // At the optimizer step the fp32 gradient copy is the master shards' .grad: torch files it with the optimizer.
  const step = m.name === 'optimizer step' ? m.gradAccumBuffer : 0;
  peaks.parameters = Math.max(peaks.parameters, m.parameters + m.gatheredParameters);
  peaks.gradients = Math.max(peaks.gradients, m.gradients + m.gradAccumBuffer - step);
  peaks.optimizer = Math.max(peaks.optimizer, m.optimizerStates + m.masterWeights + step);
  peaks.activations = Math.max(peaks.activations, m.activations + m.embeddingActivations + m.logits);
  peaks.temporaries = Math.max(peaks.temporaries, m.temporaries);
  peaks.other = Math.max(peaks.other, m.commBuffers + m.fp8WeightCache);
}
