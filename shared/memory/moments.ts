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
 * - optimizer step: Megatron's fp32 copy of a 16-bit main_grad shard; torch's foreach Adam list of square roots.
 *
 * With gradient accumulation every moment of a later micro-batch also holds the gradients the earlier ones left.
 */
import type { MemoryContext } from './context';

export type MomentName = 'forward start' | 'forward' | 'loss forward' | 'loss backward' | 'head backward' | 'head gradient' | 'layers backward'
  | 'embedding gradient' | 'end of backward' | 'root reduce' | 'optimizer step'
  // DeepSpeed's reductions (shared/memory/deepspeedMoments.ts).
  | 'head reduction' | 'gradient reduction' | 'gradient partition'
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
  /** The engine's transient copies (DeepSpeed's reduction, norm and step copies; torch's "temporaries"). */
  engineCopies: number;
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
  /** FSDP2: the root's sharded gradient bytes (assigned after its reduce-scatter, the step's last). */
  rootShardedGrad: number;
  /** FSDP2: reduce-scatter input bytes per gathered byte (reduce dtype / param dtype, MixedPrecisionPolicy). */
  reduceRatio: number;
  /**
   * The backward of one block (shared/memory/blocks.ts blockBackwardBytes and neighbours): the saved activations one
   * layer frees, the gradient bytes a finished block leaves (dynamic-gradient engines), the first weight gradient and
   * activation gradients coexisting with everything saved, and the head's gradient.
   */
  layerSaved: number; blockGrad: number; weightGrad: number; actGrads: number; headGrad: number;
  /**
   * Saves a MoE layer's backward has freed by the time it makes its stacked experts' up-projection gradient (weightGrad
   * then is that layer's expert gradients): the MLP's saves on the routed copies and the down projection's output.
   */
  expertSavesFreed: number;
  /**
   * The head's weight gradient as it is made (torch files it as a temporary until AccumulateGrad assigns it): with the
   * logits' gradient in the model dtype, or under autocast its 16-bit result and fp32 cast together.
   */
  headGradCreate: number;
  /** Autocast's weight cache of the checkpointed layers, alive until the forward (and loss) leave autocast. */
  forwardCache: number;
  /** DoRA's weight-norm transient of one layer's forward, at the last block (shared/memory/loraSaves.ts doraForwardTransientBytes). */
  doraTransient: number;
  /**
   * A 4-bit base's dequantized weight (shared/memory/quantizedTransients.ts): the largest of the forward's (the last
   * block's linear, or on the last stage the quantized head's beside the logits, whichever moment is higher), the
   * layers' backward's and the head's backward's.
   */
  dequantForward: number; dequantBlock: number; dequantHead: number;
  /** What the previous micro-batch's output keeps alive through this forward: that output and its graph's held inputs. */
  previousHeld: number;
  /**
   * The last stage: what the forward leaves cached that the loss's vocabulary-sized requests cannot use (FSDP2's root
   * copies and a checkpointed block's forward transients; shared/memory/allocator.ts firstStepLossCacheBytes), 0 when
   * the loss's tensors are not the step's largest.
   */
  lossForwardCache: number;
  /**
   * The first stage's embedding gradient as the backward makes it (a temporary until AccumulateGrad assigns it): a tied
   * head's gradient, the embedding's and their sum at once; and what of it Megatron keeps as a `.grad` until its DDP
   * hook adds it to main_grad.
   */
  embedGrad: number; embedGradKept: number;
  /**
   * Megatron's model: the embedding output's gradient as the embedding's weight gradient is made, and the head's and
   * final norm's input gradients next to the logits' gradient (shared/memory/activations.ts); 0 for other models.
   */
  embedOutputGrad: number; headInputGrad: number;
  /** Of those, what is still held at the optimizer step (a DTensor embedding's whole-vocabulary gradient). */
  embedGradAtStep: number;
  /** The embedding's (and a tied head's) final gradient bytes among the stage's gradients. */
  embedGradFinal: number;
  /**
   * FSDP2: the embedding's unsharded gradient as the backward makes it (a DTensor vocab-sharded embedding under TP makes
   * the whole vocabulary's dense gradient, then keeps its own rows), and the head's unsharded gradient that a DTensor
   * head still holds while the root's reduce-scatter output is cast.
   */
  embedGradMade: number; headGradHeld: number;
  /** FSDP2: the embedding's dense gradient alone, a temporary until AccumulateGrad assigns it. */
  embedDense: number;
  /** FSDP2: the root's reduce-scatter output in the reduce dtype (one shard), before its cast to the sharded dtype. */
  rootReduceOutput: number;
  /**
   * FSDP2 without resharding after forward (`reshard_after_forward=False`, the SHARD_GRAD_OP of FSDP1): the stage's
   * groups stay gathered from their forward to their backward: root + every block; 0 when they reshard.
   */
  kept: number;
  /** The loss runs inside the model's forward (transformers' `model(..., labels=)`): FSDP2's root is still gathered. */
  lossInRoot: boolean;
  /**
   * HSDP: every block's reduced shard in the reduce dtype, kept as the replicas' all-reduce input until the backward
   * ends (FSDPParamGroup._all_reduce_state, released in finalize_backward).
   */
  replicaHeld: number;
  /** Saved activations of the in-flight micro-batches (layers and embedding), and the recomputation working set. */
  layerActivations: number; embeddingActivations: number; working: number;
  /** The recomputation working set at the second block of the backward (0 when that block was not checkpointed). */
  working1: number;
  /** Last stage: output-layer inputs, the loss's forward, saved and backward bytes, the model's logits. */
  head: number; lossForward: number; lossSaved: number; lossBackward: number; logits: number;
  /**
   * Bytes the optimizer step adds: Megatron's fp32 copy of a 16-bit main_grad shard (`main_grad.float()`, 4 bytes per
   * master parameter; a plan's fp32 gradient buffer term is that copy and then exists only at the step), else 0.
   */
  stepCopy: number;
  /**
   * Gradient accumulation (more than one micro-batch per step): every micro-batch after the first runs beside what the
   * earlier ones left (the gradients here; DeepSpeed's partitions and buckets, shared/memory/deepspeedMoments.ts).
   */
  accumulating: boolean;
  /**
   * The gradients a later micro-batch runs beside: every gradient of the stage (`gradients`), or under FSDP2 with the
   * sync left to the last micro-batch (`set_requires_gradient_sync(False)`) the unsharded gradients of every group in
   * the reduce dtype (torch fully_shard FSDPParam.to_accumulated_grad_if_needed).
   */
  carriedGrads: number;
  /** The carried gradients are FSDP2's unsharded ones: no sharded gradient exists before the last micro-batch reduces. */
  carriedUnsharded: boolean;
  /**
   * Bytes torch's foreach Adam/AdamW makes at the step beside the states: the square roots of every exp_avg_sq as one
   * list (torch/optim/adam.py `_multi_tensor_adam`, `exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)`),
   * one state's bytes; 0 for the fused and for-loop steps.
   */
  stepTemp: number;
}

/** A zeroed MomentInputs to refill. */
export function newMomentInputs(): MomentInputs {
  return {
    first: false, last: false, parameters: 0, gradients: 0, optimizerStates: 0, masterWeights: 0, gradAccumBuffer: 0,
    fp8WeightCache: 0, commBuffers: 0, gathered: 0, rootBytes: 0, unitBytes: 0, headBytes: 0, unitShardedGrad: 0,
    rootShardedGrad: 0, reduceRatio: 1, layerSaved: 0, blockGrad: 0, weightGrad: 0, actGrads: 0, headGrad: 0, expertSavesFreed: 0,
    headGradCreate: 0, forwardCache: 0, doraTransient: 0, dequantForward: 0, dequantBlock: 0, dequantHead: 0, previousHeld: 0, lossForwardCache: 0, embedGrad: 0, embedGradKept: 0, embedOutputGrad: 0, headInputGrad: 0, embedGradAtStep: 0, embedGradFinal: 0, embedGradMade: 0, headGradHeld: 0, embedDense: 0, rootReduceOutput: 0, replicaHeld: 0, lossInRoot: false, kept: 0,
    layerActivations: 0, embeddingActivations: 0, working: 0, working1: 0, head: 0, lossForward: 0, lossSaved: 0, lossBackward: 0,
    logits: 0, stepCopy: 0, accumulating: false, carriedGrads: 0, carriedUnsharded: false, stepTemp: 0,
  };
}

/** Engines that drop gradients after the optimizer step (torch `zero_grad(set_to_none=True)`): gradients exist from the backward on. */
export function gradientsFreedAfterStep(c: Pick<MemoryContext, 'regime' | 'style' | 'zstage'>): boolean {
  // DeepSpeed ZeRO-1/2 free their gradient partitions at the step (shared/memory/deepspeed.ts); ZeRO-3's persist.
  if (c.style === 'deepspeed' && c.regime === 'deepspeed') return c.zstage >= 1 && c.zstage < 3;
  return c.style !== 'megatron-distopt' && (c.regime === 'amp' || c.regime === 'fsdp2' || c.regime === 'bf16-true' || c.regime === 'fp32');
}

/** Room for every moment of a stage's step (refilled by stageMoments, or pipelineMoments on a pipeline stage). */
export const MAX_MOMENTS = 17;

/** A zeroed moment. */
export function zeroMoment(name: MomentName = 'forward'): MomentTerms {
  return {
    name, parameters: 0, gradients: 0, optimizerStates: 0, masterWeights: 0, gradAccumBuffer: 0, fp8WeightCache: 0,
    gatheredParameters: 0, commBuffers: 0, activations: 0, embeddingActivations: 0, logits: 0, temporaries: 0, engineCopies: 0,
  };
}

/** Scratch moments for one stage. */
export function newMoments(): MomentTerms[] {
  return Array.from({ length: MAX_MOMENTS }, () => zeroMoment());
}

/** The sum of a moment's terms. */
export function momentTotal(m: MomentTerms): number {
  return m.parameters + m.gradients + m.optimizerStates + m.masterWeights + m.gradAccumBuffer + m.fp8WeightCache
    + m.gatheredParameters + m.commBuffers + m.activations + m.embeddingActivations + m.logits + m.temporaries + m.engineCopies;
}

/** One moment's states and saved activations (the moment then adds what is its own). */
export function fill(m: MomentTerms, name: MomentName, x: MomentInputs, withGrads: boolean, fsdp2: boolean): MomentTerms {
  m.name = name;
  m.parameters = x.parameters; m.optimizerStates = x.optimizerStates; m.masterWeights = x.masterWeights;
  m.fp8WeightCache = x.fp8WeightCache; m.commBuffers = x.commBuffers;
  m.gradients = withGrads ? x.gradients : 0;
  m.gradAccumBuffer = withGrads && x.stepCopy === 0 ? x.gradAccumBuffer : 0;
  m.gatheredParameters = fsdp2 ? x.kept : x.gathered;
  m.activations = x.layerActivations; m.embeddingActivations = x.embeddingActivations;
  m.logits = 0; m.temporaries = 0; m.engineCopies = 0;
  return m;
}

/** Writes every moment of the stage's step, in step order, into `out` (newMoments); returns how many there are. */
export function stageMoments(c: Pick<MemoryContext, 'regime' | 'style' | 'zstage' | 'reshard'>, x: MomentInputs, out: MomentTerms[]): number {
  const dynamicGrads = gradientsFreedAfterStep(c);
  // DeepSpeed's gradients in the backward are its buckets' and partitions' (shared/memory/deepspeedMoments.ts).
  const blockGrads = dynamicGrads && c.style !== 'deepspeed';
  // FSDP2 (fully_shard), resharding after forward (ZeRO-3 style) or keeping every group gathered until its backward.
  const fsdp2 = c.style === 'fsdp2' && c.zstage >= 2;
  const reshard = fsdp2 && x.kept === 0;
  let n = 0;
  // Gradient accumulation: a micro-batch after the first runs its forward and backward beside every gradient the
  // earlier ones left. Autograd adds a later gradient into `.grad` in place (torch AccumulateGrad), FSDP2 adds the
  // reduce-scattered shard into the sharded `.grad` (_fsdp_collectives.py foreach_reduce), and the engine drops them
  // only after the step (`zero_grad(set_to_none=True)`), so the step peaks in a later micro-batch.
  const carried = blockGrads && x.accumulating;
  const held = !dynamicGrads || carried;
  // A moment before the backward: the states, and the gradients the earlier micro-batches left when accumulating.
  const preBackward = (name: MomentName): MomentTerms => {
    const m = fill(out[n++], name, x, held, fsdp2);
    if (carried) m.gradients = x.carriedGrads;
    return m;
  };
  // FSDP2 (torch fully_shard, FSDPParamGroup.unshard / wait_for_unshard): a group's all-gather output lives until the
  // next group's parameters are copied out, so the forward starts with the root and the first block twice.
  if (fsdp2 && x.rootBytes > 0 && x.first) {
    const start = preBackward('forward start');
    start.gatheredParameters = 2 * x.rootBytes + 2 * x.unitBytes;
    start.activations = 0;
  }
  // Forward, at the last block (and the head on the last stage): root and one block gathered with the next prefetched.
  const fwd = preBackward('forward');
  if (reshard) fwd.gatheredParameters = x.rootBytes + 2 * x.unitBytes;
  fwd.activations += x.forwardCache + x.doraTransient + x.dequantForward + x.previousHeld;
  if (x.last) fwd.logits = x.head + x.logits;
  if (x.last) {
    // The loss runs after the model's forward returned (FSDP2 has resharded the root and the blocks): its forward
    // copies of the logits, then its backward's, next to what the forward saved for it.
    const lossF = preBackward('loss forward');
    lossF.logits = x.head + x.lossForward;
    lossF.activations += x.forwardCache;
    // A loss inside the root's forward (transformers) runs with the root gathered, and the root's pre-backward hook
    // gathers it again before the loss's backward (its all-gather output and copy-out next to the saved loss).
    const rootFirst = fsdp2 && x.lossInRoot;
    if (rootFirst && reshard) {
      lossF.gatheredParameters = x.rootBytes;
      const regather = preBackward('head backward');
      regather.logits = x.head + x.lossSaved;
      regather.gatheredParameters = 2 * x.rootBytes;
    }
    const lossB = preBackward('loss backward');
    lossB.logits = x.head + x.lossSaved;
    lossB.temporaries = Math.max(0, x.lossBackward - x.lossSaved);
    if (rootFirst && reshard) lossB.gatheredParameters = x.rootBytes + x.unitBytes;
    // The head's backward: the logits' gradient in the model dtype; FSDP2 gathers the root again (its all-gather
    // output and the parameters copied out of it coexist), then computes the head's unsharded weight gradient with
    // the last block prefetched.
    if (!rootFirst) {
      const head = preBackward('head backward');
      head.logits = x.head;
      head.temporaries = x.logits + x.headInputGrad + x.dequantHead;
      if (reshard) head.gatheredParameters = 2 * x.rootBytes;
    }
    const grad = preBackward('head gradient');
    grad.logits = x.head;
    grad.temporaries = x.headGradCreate;
    if (reshard) grad.gatheredParameters = x.rootBytes + x.unitBytes;
  }
  // The layers' backward, at the first block (everything saved, the recomputation working set) and at the second
  // (one layer freed, the first block's gradients kept: FSDP2 holds a group's reduce-scatter input until the next
  // group reduces, reduce_scatter_max_input_buffers): a block's first weight gradient and activation gradients, the
  // next block prefetched (FSDP2).
  for (let k = 0; k < 2; k++) {
    const lb = fill(out[n++], 'layers backward', x, true, fsdp2);
    lb.activations = x.layerActivations + (k === 0 ? x.working : x.working1) - k * x.layerSaved - x.expertSavesFreed;
    lb.temporaries = x.actGrads + x.dequantBlock;
    // A block's new gradients: on a replicated engine each weight's is added into the accumulated one as it is made
    // (one weight gradient beside them all); FSDP2 reduce-scatters the block's unsharded gradients as before, or,
    // after micro-batches without the sync, adds them into the unsharded ones it kept and reduces those.
    if (carried && x.carriedUnsharded) lb.gradients = x.carriedGrads + x.weightGrad + k * x.unitShardedGrad;
    else if (carried) lb.gradients = x.carriedGrads + x.weightGrad + (fsdp2 ? x.headGrad + k * x.blockGrad : 0);
    else if (blockGrads) lb.gradients = x.headGrad + x.weightGrad + k * x.blockGrad;
    if (reshard) lb.gatheredParameters = x.rootBytes + 2 * x.unitBytes;
    else if (fsdp2) lb.gatheredParameters = Math.max(x.rootBytes, x.kept - k * x.unitBytes);
  }
  // The end of the backward: every gradient. FSDP2 reduces the root last: first the root's unsharded gradients are made
  // next to every block's sharded gradient and the last block's reduce-scatter input; then, the root resharded, its
  // reduce-scatter input coexists with its unsharded gradients (the copy-in) or with its reduce-scatter output and the
  // output's fp32 cast (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py foreach_reduce). A stage without the
  // root ends on its first block's reduction. Megatron's embedding gradient is made as a `.grad` in the parameter dtype
  // (a temporary until assigned), then added to main_grad by the DDP hook and dropped (megatron/core/distributed:
  // the param hook's `main_grad.add_(grad)`).
  if (x.embedGrad > 0) {
    const emb = fill(out[n++], 'embedding gradient', x, true, fsdp2);
    emb.activations = 0;
    emb.temporaries = x.embedGrad + x.embedOutputGrad;
    // Engines whose gradients appear in the backward do not hold the embedding's (or a tied head's) gradient yet,
    // unless an earlier micro-batch left it.
    if (blockGrads && !carried) emb.gradients = Math.max(0, emb.gradients - x.embedGradFinal);
    // Beside an accumulated gradient the new one is made as a gradient (torch's MemTracker files it so).
    if (carried) { emb.gradients += x.embedGrad; emb.temporaries -= x.embedGrad; }
  }
  const end = fill(out[n++], 'end of backward', x, true, fsdp2);
  end.activations = 0;
  end.embeddingActivations = 0;
  end.gradients += x.embedGradKept;
  if (fsdp2) {
    end.gatheredParameters = x.rootBytes;
    // The root's sharded gradient is assigned after its reduce-scatter, the step's last, unless an earlier
    // micro-batch left it (not under no_sync: the earlier micro-batches left unsharded gradients, reduced here).
    const blocks = carried && !x.carriedUnsharded ? x.gradients : Math.max(0, x.gradients - x.rootShardedGrad);
    if (x.rootBytes > 0) {
      const before = blocks + x.replicaHeld + x.unitBytes * x.reduceRatio + x.headBytes;
      end.gradients = before + x.embedGradMade;
      if (x.embedDense > 0) {
        const emb = fill(out[n++], 'embedding gradient', x, true, fsdp2);
        emb.activations = 0; emb.embeddingActivations = 0; emb.gatheredParameters = x.rootBytes;
        emb.gradients = before;
        emb.temporaries = x.embedDense;
        if (carried) { emb.gradients += x.embedDense; emb.temporaries = 0; }
      }
      const reduce = fill(out[n++], 'root reduce', x, true, fsdp2);
      reduce.activations = 0; reduce.embeddingActivations = 0; reduce.gatheredParameters = 0;
      const input = x.rootBytes * x.reduceRatio;
      reduce.gradients = blocks + x.replicaHeld + input + Math.max(x.rootBytes, x.rootReduceOutput + x.rootShardedGrad + x.headGradHeld);
    } else {
      end.gatheredParameters = 0;
      end.gradients = Math.max(0, x.gradients - x.unitShardedGrad) + x.unitBytes * (1 + x.reduceRatio);
    }
  }
  // The optimizer step: Megatron hands the optimizer an fp32 copy of a 16-bit main_grad shard
  // (megatron/core/optimizer/distrib_optimizer.py copies `main_grad.float()` to each master shard's grad).
  // torch's foreach Adam makes one more state's bytes for the square roots (torch's MemTracker files them with the
  // optimizer), beside every gradient and state; FSDP2 has resharded every group.
  if (x.stepCopy > 0 || x.stepTemp > 0) {
    const step = fill(out[n++], 'optimizer step', x, true, fsdp2);
    step.activations = 0; step.embeddingActivations = 0;
    if (x.stepCopy > 0) step.gradAccumBuffer = x.stepCopy;
    if (x.stepTemp > 0) step.gatheredParameters = 0;
    step.optimizerStates += x.stepTemp;
    step.gradients += x.embedGradAtStep;
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
  peaks.temporaries = Math.max(peaks.temporaries, m.temporaries + m.engineCopies);
  peaks.other = Math.max(peaks.other, m.commBuffers + m.fp8WeightCache);
}
