/**
 * The moments of a pipeline stage's step (docs/engine-memory.md#pipeline), in place of shared/memory/moments.ts's for
 * stages of a torch or Megatron pipeline: the schedule's in-flight micro-batches, its receive buffers and cached
 * outputs, and — FSDP2 under torch pipelining — the stage kept gathered, the unsharded gradients accumulated over the
 * micro-batches and reduce-scattered after the last one. Terms: shared/memory/pipeline.ts. Allocation-free: inputs and
 * moments are the stage record's scratch.
 */
import { blockOutputTransientBytes } from './activations';
import type { MemoryContext } from './context';
import { fill, gradientsFreedAfterStep, type MomentInputs, type MomentTerms } from './moments';
import {
  cachedBoundaryBytes, freshGradBytes, fsdp2AccumulatedGradBytes, fsdp2ChunkGatherPeak, fsdp2ReduceScatterBytes,
  fsdp2PrefetchGatherPeak, fsdp2UnshardedBytes, inFlightChunkPasses, keptLossCount,
  receiveBufferBytes, receivedGradientBytes, stageBoundaryBytes, unshardedChunks, type PipelineEngine,
} from './pipeline';

/** What the pipeline moments read besides MomentInputs (bytes per rank). */
export interface PipelineInputs {
  engine: PipelineEngine;
  /** In-flight chunk passes at the peak, and whether a backward precedes a forward at that count (steady 1F1B). */
  passes: number; steady: boolean;
  /**
   * Boundary tensors cached by `passes` passes (torch), the receive buffers, the last stage's logits held by torch's
   * schedule through the loss (the stage output in `fwd_cache`) and the previous micro-batch's during the next forward.
   */
  cached: number; recv: number; heldLogits: number; prevLogits: number;
  /** Losses kept besides the current one (torch GPipe) and the bytes each keeps (head inputs, logits, saved copy). */
  kept: number; keptEach: number;
  /**
   * Megatron: the last block's output made next to its MLP output at the end of a forward (shared/memory/activations.ts),
   * and the output gradient received for the micro-batch whose backward runs (shared/memory/pipeline.ts).
   */
  blockEnd: number; recvGrad: number;
  /**
   * A fresh gradient made next to the accumulated ones: the first stage's embedding gradient, and (autograd
   * accumulating into `.grad`) the last stage's head gradient; each is a temporary when made, then a gradient
   * (Megatron's `.grad` before its hook, FSDP2's 16-bit gradient before the upcast, autograd's out-of-place sum).
   */
  embGrad: number; headGrad: number;
  /** The fresh gradient is a separate tensor even in the first backward (Megatron's `.grad`, FSDP2's 16-bit gradients). */
  alwaysFresh: boolean;
  /** FSDP2 under torch pipelining. */
  fsdp2: boolean;
  unsharded: number; accumulated: number;
  /** 16-bit gradients of the groups live in a layer's backward (gradients), or the accumulation's transient (temporaries). */
  fresh: number; freshTemp: number; headFresh: number;
  /** Bytes gathered beyond the shards at the first forward's worst moment. */
  firstGather: number;
  /** The gradient reduce of the chunk with the largest total, and of the one with the largest temporaries. */
  reduceGathered: number; reduceGrads: number; reduceTemps: number;
  tempGathered: number; tempGrads: number; tempTemps: number;
  /**
   * The FSDP2 terms above (unsharded … tempTemps) read only the stage's states and the layout, not the micro batch,
   * accumulation or recomputation: kept while the stage record's states are (shared/memory/stage.ts
   * computeStageStates clears it), so the planner's fast path computes them once per layout family.
   */
  statesKept: boolean;
}

/** A zeroed PipelineInputs to refill. */
export function newPipelineInputs(): PipelineInputs {
  return {
    engine: 'other', passes: 1, steady: true, cached: 0, recv: 0, heldLogits: 0, prevLogits: 0, kept: 0, keptEach: 0, blockEnd: 0, recvGrad: 0, embGrad: 0, headGrad: 0, alwaysFresh: false,
    fsdp2: false, unsharded: 0, accumulated: 0, fresh: 0, freshTemp: 0, headFresh: 0, firstGather: 0, reduceGathered: 0,
    reduceGrads: 0, reduceTemps: 0, tempGathered: 0, tempGrads: 0, tempTemps: 0, statesKept: false,
  };
}

/** What a stage record gives the pipeline moments. */
export interface PipelineStage { stage: number; layers: number; first: boolean; last: boolean; paramsPerRank: number; unitBytes: number }

/** Layers of the k-th of a rank's v chunks (an even split, the remainder on the first chunks). */
const chunkLayers = (layers: number, v: number, k: number) => Math.floor(layers / v) + (k < layers % v ? 1 : 0);

/** Fills `pi` for stage `o` whose moment inputs `x` are filled (fillLossParts included). */
export function fillPipelineInputs(c: MemoryContext, o: PipelineStage, x: MomentInputs, pi: PipelineInputs): PipelineInputs {
  const p = c.pp, v = c.vpp, m = c.m, engine = c.ppEngine;
  pi.engine = engine;
  pi.passes = inFlightChunkPasses(engine, c.schedule, p, v, m, o.stage);
  pi.steady = pi.passes < m * v;
  const boundary = stageBoundaryBytes(c.b, c.sLocal, c.h, c.actBytes, c.sp ? c.tp : 1);
  pi.cached = cachedBoundaryBytes(engine, p, v, o.stage, pi.passes, boundary);
  pi.recv = receiveBufferBytes(engine, p, v, m, o.stage, boundary);
  // torch keeps the last stage's output (the logits) in `fwd_cache` until its backward, and its 1F1B loop holds the
  // previous micro-batch's output until the next forward returns.
  pi.heldLogits = engine === 'torch' && o.last ? x.logits : 0;
  pi.prevLogits = pi.steady ? pi.heldLogits : 0;
  pi.kept = o.last ? keptLossCount(engine, c.schedule, m) : 0;
  pi.keptEach = x.head + x.logits + x.lossSaved;
  // The end of a Megatron block's forward (the oracle's Megatron model, probe/oracle/megatron.py, allocates it as TE
  // and megatron-core do; torchtitan's and transformers' blocks end otherwise and are not modelled here).
  pi.blockEnd = c.impl === 'megatron' && o.layers > 0 ? blockOutputTransientBytes(c) : 0;
  pi.recvGrad = receivedGradientBytes(engine, v, o.last, boundary);
  const fsdp2 = engine === 'torch' && c.style === 'fsdp2' && c.zstage >= 3;
  pi.fsdp2 = fsdp2;
  // The dtype a fresh gradient is made in: FSDP2's param dtype, Megatron's 16-bit weights, else the gradient dtype.
  const half = fsdp2 ? c.gatherB : c.regime === 'megatron' ? c.paramB : c.gradB;
  pi.embGrad = o.first ? freshGradBytes(c.embedRank, half) : 0;
  const accumulatesInReduceDtype = fsdp2 && c.reduceB !== c.gatherB;
  // Megatron's head writes its weight gradient into main_grad (gradient_accumulation_fusion): no fresh tensor.
  pi.headGrad = o.last && engine === 'torch' && !accumulatesInReduceDtype ? freshGradBytes(c.headRank, half) : 0;
  // autograd's AccumulateGrad takes the first gradient as `.grad` itself: a second tensor only when accumulating.
  pi.alwaysFresh = c.regime === 'megatron' || fsdp2;
  if (pi.statesKept) return pi;
  pi.statesKept = true;
  pi.unsharded = pi.accumulated = pi.fresh = pi.freshTemp = pi.headFresh = pi.firstGather = 0;
  pi.reduceGathered = pi.reduceGrads = pi.reduceTemps = pi.tempGathered = pi.tempGrads = pi.tempTemps = 0;
  if (!fsdp2) return pi;
  const unit = c.gatherB > 0 ? o.unitBytes / c.gatherB : 0;
  const rootFirst = o.first ? c.embedRank + c.positions : 0, rootLast = o.last ? c.finalNorm + c.headRank + c.mtpRank : 0;
  const runtime = c.schedule === 'interleaved' && v > 1;
  pi.unsharded = fsdp2UnshardedBytes(o.paramsPerRank * (runtime ? unshardedChunks(v) / v : 1), c.gatherB);
  pi.accumulated = fsdp2AccumulatedGradBytes(o.paramsPerRank, c.reduceB);
  // The head's group finishes its backward last on the last stage: its 16-bit gradients stay next to a block's.
  pi.headFresh = accumulatesInReduceDtype ? rootLast * c.gatherB : 0;
  pi.fresh = accumulatesInReduceDtype ? unit * c.gatherB : 0;
  pi.freshTemp = accumulatesInReduceDtype ? 0 : unit * c.gatherB;
  // The first forward gathers chunk after chunk; the gradient reduce runs chunk v−1 first (its backwards end first).
  let before = 0, largest = unit;
  for (let k = 0; k < v; k++) {
    const g = o.stage + k * p;
    const root = (g === 0 ? rootFirst : 0) + (g === p * v - 1 ? rootLast : 0);
    const n = chunkLayers(o.layers, v, k);
    pi.firstGather = Math.max(pi.firstGather, (before + fsdp2ChunkGatherPeak(root, n, unit)) * c.gatherB);
    before += root + n * unit;
    largest = Math.max(largest, root);
  }
  if (runtime) pi.firstGather = fsdp2PrefetchGatherPeak(pi.unsharded, largest * c.gatherB);
  // Each chunk's reduce copies its first group's accumulated gradients into the reduce-scatter input, frees them
  // (a block's as the copy ends; the embedding's or head's single tensor only after the output exists), then makes
  // the output shard (FSDP2 foreach_reduce).
  let after = 0, best = -1, bestTemps = -1;
  for (let k = v - 1; k >= 0; k--) {
    const g = o.stage + k * p;
    const root = (g === 0 ? rootFirst : 0) + (g === p * v - 1 ? rootLast : 0);
    const chunk = root + chunkLayers(o.layers, v, k) * unit;
    const held = o.paramsPerRank - after;
    const group = root > 0 ? root : Math.min(unit, chunk);
    const gathered = Math.max(0, held * (runtime ? unshardedChunks(v) / v : 1) - group) * c.gatherB;
    const sharded = (after * c.gradB) / c.nd;
    for (let out = 0; out < 2; out++) {
      const grads = (held - (out === 1 && root === 0 ? group : 0)) * c.reduceB + sharded;
      const temps = out === 1 ? fsdp2ReduceScatterBytes(group, c.reduceB, c.nd, c.gradB) : group * c.reduceB;
      if (gathered + grads + temps > best) {
        best = gathered + grads + temps;
        pi.reduceGathered = gathered; pi.reduceGrads = grads; pi.reduceTemps = temps;
      }
      if (temps > bestTemps) {
        bestTemps = temps;
        pi.tempGathered = gathered; pi.tempGrads = grads; pi.tempTemps = temps;
      }
    }
    after += chunk;
  }
  return pi;
}

/** The gradients live in a backward with (`withGrads`) or before any accumulated gradient. */
function backwardGrads(x: MomentInputs, pi: PipelineInputs, freed: boolean, withGrads: boolean): number {
  if (pi.fsdp2) return withGrads ? pi.accumulated : 0;
  return withGrads || !freed ? x.gradients : 0;
}

/** Activations of `q` in-flight passes (layers, cached boundaries) written into `t`. */
function activationsOf(t: MomentTerms, x: MomentInputs, pi: PipelineInputs, q: number): void {
  const share = pi.passes > 0 ? Math.max(0, q) / pi.passes : 0;
  t.activations = Math.max(0, share * (x.layerActivations + pi.cached));
  t.embeddingActivations = share * x.embeddingActivations;
}

/** One moment's states, gathered parameters and receive buffers. */
function base(t: MomentTerms, name: MomentTerms['name'], x: MomentInputs, pi: PipelineInputs, grads: number): MomentTerms {
  fill(t, name, x, true, false);
  t.gradients = grads;
  if (grads === 0 && t.gradAccumBuffer > 0 && !pi.fsdp2) t.gradAccumBuffer = 0;
  if (pi.fsdp2) t.gatheredParameters = pi.unsharded;
  t.commBuffers += pi.recv;
  return t;
}

/** Writes every moment of a pipeline stage's step into `out`; returns how many there are. */
export function pipelineMoments(c: Pick<MemoryContext, 'regime' | 'style' | 'zstage'>, x: MomentInputs, pi: PipelineInputs, out: MomentTerms[]): number {
  const freed = gradientsFreedAfterStep(c) || pi.fsdp2;
  let n = 0;
  const kept = pi.kept * pi.keptEach;
  // The forward of the last in-flight pass; FSDP2 holds what the stage has gathered, the logits on the last stage.
  const fwd = base(out[n++], 'forward', x, pi, backwardGrads(x, pi, freed, pi.steady));
  activationsOf(fwd, x, pi, pi.passes);
  if (x.last) fwd.logits = x.head + x.logits + pi.prevLogits + kept;
  if (pi.blockEnd > 0) {
    // The end of the last block's forward (before the head on the last stage): its output next to its MLP output.
    const end = base(out[n++], 'forward', x, pi, backwardGrads(x, pi, freed, pi.steady));
    activationsOf(end, x, pi, pi.passes);
    end.activations += pi.blockEnd;
    end.logits = kept;
  }
  if (pi.fsdp2) {
    const g = base(out[n++], 'first gather', x, pi, 0);
    g.gatheredParameters = pi.firstGather;
    g.activations = 0; g.embeddingActivations = 0;
  }
  if (x.last) {
    const lf = base(out[n++], 'loss forward', x, pi, backwardGrads(x, pi, freed, pi.steady));
    activationsOf(lf, x, pi, pi.passes);
    lf.logits = x.head + x.lossForward + kept;
  }
  // Backwards at full in-flight count (with the gradients of earlier micro-batches in a steady state); without a
  // steady state also the second backward: one pass fewer, the first micro-batch's gradients accumulated.
  const variants = pi.steady || pi.passes < 2 ? 1 : 2;
  for (let k = 0; k < variants; k++) {
    const withGrads = pi.steady || k === 1;
    const q = pi.passes - k;
    const others = Math.max(0, pi.kept - k) * pi.keptEach;
    const grads = backwardGrads(x, pi, freed, withGrads);
    const fresh = pi.alwaysFresh || withGrads;
    const embGrad = fresh ? pi.embGrad : 0, headGrad = fresh ? pi.headGrad : 0;
    if (x.last) {
      const lb = base(out[n++], 'loss backward', x, pi, grads);
      activationsOf(lb, x, pi, q);
      lb.logits = x.head + pi.heldLogits + x.lossSaved + others;
      lb.temporaries = Math.max(0, x.lossBackward - x.lossSaved);
      const hb = base(out[n++], 'head backward', x, pi, grads + pi.headFresh);
      activationsOf(hb, x, pi, q);
      hb.logits = x.head + pi.heldLogits + others;
      hb.temporaries = x.logits + headGrad + x.headInputGrad;
      if (headGrad > 0) {
        const hg = base(out[n++], 'head backward', x, pi, grads + headGrad);
        activationsOf(hg, x, pi, q);
        hg.logits = hb.logits;
        hg.temporaries = x.logits;
      }
    }
    // The blocks' gradients are counted whole in their backward (an upper bound, as shared/memory/moments.ts does).
    // Under FSDP2 a fresh gradient is added to the accumulated one as each weight's backward makes it: one weight's at a
    // time (the MLP's down projection, the first and largest, shared/memory/stage.ts fillBlockBackward), a temporary
    // until it is added.
    const fresh1 = pi.fsdp2 && pi.fresh > 0 ? Math.min(pi.fresh, x.weightGrad) : 0;
    const lb = base(out[n++], 'layers backward', x, pi, (pi.fsdp2 ? grads : x.gradients) + (fresh1 > 0 ? 0 : pi.fresh) + (x.last ? pi.headFresh : 0));
    activationsOf(lb, x, pi, q);
    lb.activations += x.working + pi.recvGrad;
    lb.logits = others;
    // A block's backward: the activation gradients of the MLP width.
    lb.temporaries = pi.freshTemp + x.actGrads + fresh1;
    if (x.first && embGrad > 0) {
      // The embedding's backward ends the micro-batch's: the other passes stay in flight, its gradient is made.
      const asTemp = base(out[n++], 'embedding backward', x, pi, grads);
      activationsOf(asTemp, x, pi, q - 1);
      asTemp.activations += pi.recvGrad;
      asTemp.temporaries = embGrad + x.embedOutputGrad;
      const asGrad = base(out[n++], 'embedding backward', x, pi, grads + embGrad);
      activationsOf(asGrad, x, pi, q - 1);
      asGrad.activations += pi.recvGrad;
    }
  }
  if (pi.fsdp2) {
    // The reduce-scatter's input, output and cast are gradients (torch files what FSDPParamGroup.post_backward makes
    // as the gradients it is: probe/oracle/tracker.py instrument_fsdp).
    const r = base(out[n++], 'gradient reduce', x, pi, pi.reduceGrads + pi.reduceTemps);
    r.gatheredParameters = pi.reduceGathered;
    r.activations = 0; r.embeddingActivations = 0;
    if (pi.tempGrads + pi.tempTemps > pi.reduceGrads + pi.reduceTemps) {
      const t = base(out[n++], 'gradient reduce', x, pi, pi.tempGrads + pi.tempTemps);
      t.gatheredParameters = pi.tempGathered;
      t.activations = 0; t.embeddingActivations = 0;
    }
  } else {
    const end = base(out[n++], 'end of backward', x, pi, x.gradients);
    end.activations = 0; end.embeddingActivations = 0;
  }
  // Megatron's fp32 gradient copy, or torch's foreach Adam list (shared/memory/moments.ts), beside every gradient and state.
  if (x.stepCopy > 0 || x.stepTemp > 0) {
    const step = base(out[n++], 'optimizer step', x, pi, x.gradients);
    step.activations = 0; step.embeddingActivations = 0;
    if (x.stepCopy > 0) step.gradAccumBuffer = x.stepCopy;
    if (x.stepTemp > 0) step.gatheredParameters = 0;
    step.optimizerStates += x.stepTemp;
  }
  return n;
}
