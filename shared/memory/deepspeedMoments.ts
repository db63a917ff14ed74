/**
 * The moments of DeepSpeed's step (docs/engine-memory.md#deepspeed), on top of the common ones (shared/memory/moments.ts)
 * with the buffers of shared/memory/deepspeed.ts:
 *
 * - ZeRO-1/2 (DeepSpeedZeroOptimizer): no gradient exists before the backward (the step frees the partition and every
 *   .grad); the buckets appear at the backward's first gradient hook. ZeRO-2, or ZeRO-1 with overlap_comm, reduce from
 *   the hooks: the LM head's gradient, larger than a bucket, is reduced on its own (`head reduction`); ZeRO-1 without
 *   overlap keeps every gradient to the end of the backward. The reduction of the last gradient (the embedding, the
 *   first parameter) copies it flat (`gradient reduction`), then the partition is allocated beside it (`gradient
 *   partition`). The optimizer step holds the partition with its fp64 norm copies or its fp32 cast.
 * - BF16_Optimizer: fp32 gradients of every parameter persist; the 16-bit ones live from the backward to the step and are
 *   reduced through a 16-bit copy of the fp32 buffer.
 * - ZeRO-3: the gradient partitions and the bucket persist, the coordinator's gathered parameters live through the
 *   forward and the backward; the step flattens and casts the partition.
 * - The FP16 wrapper without ZeRO (FP16_UnfusedOptimizer): no buckets; every 16-bit gradient lives from the backward to
 *   the step; the all-reduce flattens a bucket at the end of the backward; the step adds the fp32 gradients beside them.
 */
import type { DsBuffers } from './deepspeed';
import { fill, type MomentInputs, type MomentTerms } from './moments';

/** What the common moments read for a DeepSpeed stage (call before stageMoments). */
export function prepareDsInputs(x: MomentInputs, d: DsBuffers): void {
  if (d.kind === 0) return;
  // Kind 4 reads as ZeRO-1 reducing after the backward: every gradient, no bucket, nothing gathered.
  x.gradAccumBuffer = 0;
  x.commBuffers = d.kind === 3 ? d.bucket : 0;
  x.gradients = d.kind === 3 ? d.staticGrads : d.kind === 1 && d.reduceInBackward ? 0 : d.allGrads;
  x.gathered = d.gathered;
}

/** Adjusts the `n` common moments in `out` to DeepSpeed and appends its own; returns the new count. */
export function deepspeedMoments(x: MomentInputs, d: DsBuffers, out: MomentTerms[], n: number): number {
  if (d.kind === 0) return n;
  if (d.kind === 4) return fp16WrapperMoments(x, d, out, n);
  const buckets = d.kind === 2 ? 0 : d.bucket;
  const zero2 = d.kind === 1 && d.reduceInBackward;
  // With gradient accumulation a later micro-batch runs beside what the earlier ones left: ZeRO-1 reduces only at the
  // accumulation boundary (every gradient and the buckets stay), ZeRO-2 accumulates into its partition, whose earlier
  // copy the new one is added to (stage_1_and_2.py `independent_gradient_partition_epilogue`, `all_grad_tensors`).
  const carried = d.kind !== 1 || !x.accumulating ? 0 : d.zero1 ? d.allGrads : d.partition;
  const carriedBuckets = d.kind === 1 && x.accumulating && d.zero1 ? buckets : 0;
  // ZeRO-1 reduces the accumulated gradients themselves at the boundary: nothing is carried beside its reductions.
  const beside = d.zero1 ? 0 : carried;
  // The fp32 partition of fp32 accumulation exists before the reduction that fills it; the 16-bit one after it.
  const fp32Partition = zero2 && d.partitionBeforeReduce;
  for (let i = 0; i < n; i++) {
    const m = out[i];
    if (d.kind === 2) m.gradAccumBuffer = d.staticGrads;
    // ZeRO-3 fetches through the forward (shared/memory/deepspeed.ts `dsZero3ForwardExtraElems`).
    if (m.name === 'forward') m.gatheredParameters += d.fetchCopy;
    // The head's weight gradient is made while the logits' gradient still lives; a tied one stays to the embedding's.
    if (m.name === 'head backward') m.gradients += d.headGrad + d.tiedGrad;
    if (m.name === 'layers backward' && (d.kind === 3 || d.reduceInBackward)) m.gradients += d.tiedGrad;
    if (m.name === 'layers backward' || m.name === 'end of backward') m.commBuffers = buckets;
    else { m.gradients += carried; m.commBuffers += carriedBuckets; }
    if (m.name === 'end of backward' && d.kind !== 3) {
      // The reduction of the last gradient (the embedding): its flat copy beside it.
      m.name = 'gradient reduction';
      m.gradients = zero2 ? d.firstGrad + d.waiting + beside + (fp32Partition ? d.partition : 0) : d.allGrads;
      m.engineCopies = d.reduceCopy;
    }
  }
  if (d.kind === 1) {
    const part = fill(out[n++], 'gradient partition', x, true, false);
    part.activations = 0; part.embeddingActivations = 0;
    part.gradients = (zero2 ? d.firstGrad + beside : d.allGrads) + d.partition;
    part.commBuffers = buckets;
    if (zero2 && (d.headGrad > 0 || d.tiedGrad > 0)) {
      // Right after the head's backward: its gradient waits for (or is in) its reduction beside the saved activations.
      const head = fill(out[n++], 'head reduction', x, false, false);
      head.gradients = d.headWait + d.tiedGrad + beside;
      head.commBuffers = buckets;
      head.engineCopies = d.headCopy;
    }
  }
  if (d.kind === 1 || d.kind === 3) {
    const step = fill(out[n++], 'optimizer step', x, true, false);
    step.activations = 0; step.embeddingActivations = 0; step.gatheredParameters = 0;
    step.gradients = d.kind === 1 ? d.partition : d.staticGrads;
    step.engineCopies = d.step;
  }
  return n;
}

/**
 * The FP16 wrapper's step (kind 4): an earlier micro-batch's gradients are there from the start (none in the first);
 * the backward makes the head's gradient, then a block's largest weight gradient and the whole block's (a new tensor,
 * or beside the accumulated one until autograd's sum replaces it); the end of the backward flattens a bucket for the
 * all-reduce beside every gradient; the step holds the 16-bit gradients and their fp32 casts (torch files the casts as
 * temporaries: the wrapper's step is no optimizer step).
 */
function fp16WrapperMoments(x: MomentInputs, d: DsBuffers, out: MomentTerms[], n: number): number {
  const acc = x.accumulating;
  const carried = acc ? d.allGrads : 0;
  let block = 0;
  for (let i = 0; i < n; i++) {
    const m = out[i];
    m.gradients = carried;
    // The head's gradient once made: a fresh tensor beside the accumulated one, or the first of this backward's.
    if (m.name === 'head gradient') m.gradients += d.headGrad;
    else if (m.name === 'layers backward') {
      // At the last block's first weight gradient, then with that block's gradients made (the second moment).
      m.gradients += acc ? d.weightGrad : d.headGrad + (block === 0 ? d.weightGrad : d.blockGrad);
      block++;
    } else if (m.name === 'end of backward') {
      m.name = 'gradient reduction';
      m.gradients = d.allGrads;
      m.engineCopies = d.reduceCopy;
    }
  }
  if (acc && x.first) {
    const emb = fill(out[n++], 'embedding gradient', x, true, false);
    emb.activations = 0; emb.embeddingActivations = 0;
    emb.gradients = d.allGrads + d.firstGrad;
  }
  const step = fill(out[n++], 'optimizer step', x, true, false);
  step.activations = 0; step.embeddingActivations = 0;
  step.gradients = d.allGrads;
  step.engineCopies = d.step;
  return n;
}
