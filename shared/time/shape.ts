/**
 * Shape of one training step as the communication and time models see it: micro-batches per step, tokens per rank,
 * element sizes. Pure reads of the Plan with safe fallbacks (bad inputs are reported by the simulator's problems).
 */
import type { Plan } from '../plan/types';
import { activationBytesOf } from '../memory/dtypes';
import { interleavedGroupSize, pipelineEngineOf } from '../memory/pipeline';

export { dtypeBytes } from '../memory/dtypes';

/** Positive integer or the fallback. */
export function posInt(x: number, fallback = 1): number {
  return Number.isFinite(x) && x >= 1 ? Math.floor(x) : fallback;
}

/** Micro-batches per optimizer step per data-parallel rank: m = gradAccum, else B/(b·d) (Narayanan et al. 2021 §2.2). */
export function microbatchesPerStep(plan: Plan): number {
  const t = plan.training;
  if (Number.isFinite(t.gradAccum) && t.gradAccum >= 1) return Math.floor(t.gradAccum);
  return posInt(t.globalBatch / (posInt(t.microBatch) * posInt(plan.parallel.dp)));
}

/** GPUs of the plan: DP·TP·PP·CP (expert parallelism lies inside DP·CP·TP). */
export function gpusOf(plan: Pick<Plan, 'parallel'>): number {
  const p = plan.parallel;
  return p.dp * p.tp * p.pp * p.cp;
}

/** Tokens of one micro-batch held by one rank: b·s/cp (context parallel splits the sequence). */
export function tokensPerRank(plan: Plan): number {
  return (posInt(plan.training.microBatch) * posInt(plan.training.seqLen)) / posInt(plan.parallel.cp);
}

/** Bytes of one activation element under a precision (shared/memory/dtypes.ts). */
export const activationBytes = activationBytesOf;

/** Peak FLOP/s of the compute dtype: fp8, bf16/fp16, or fp32 (tf32 tensor cores when listed). */
export function peakFlops(plan: Plan): number {
  const pk = plan.cluster.gpu.peakFlops;
  const p = plan.training.precision;
  const v = p === 'fp8-mixed' ? pk.fp8 ?? pk.bf16 : p === 'fp16-mixed' ? pk.fp16 ?? pk.bf16 : p === 'fp32' ? pk.tf32 ?? pk.fp32 : pk.bf16 ?? pk.fp16;
  return v && v > 0 ? v : pk.fp32 && pk.fp32 > 0 ? pk.fp32 : 1e12;
}

/** Chunks (virtual stages) per pipeline stage: v for the interleaved schedule, else 1. */
export function chunksPerStage(plan: Plan): number {
  return plan.parallel.schedule === 'interleaved' ? posInt(plan.parallel.vpp) : 1;
}

/** Micro-batches per chunk group of the plan's interleaved schedule (shared/memory/pipeline.ts interleavedGroupSize). */
export function groupOf(plan: Plan, m: number): number {
  return interleavedGroupSize(pipelineEngineOf(plan.engine), posInt(plan.parallel.pp), m);
}
