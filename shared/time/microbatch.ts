/**
 * Seconds of one micro-batch on one rank of one pipeline stage: forward, backward and recomputation, each the sum of
 * matmul time (FLOPs / (peak × achievable fraction)), memory-bound kernel time (HBM traffic / bandwidth) and the
 * exposed TP, EP and CP communication inside the layers.
 */
import type { Plan } from '../plan/types';
import { firstLayerOfStage, stageLayerCount } from '../comm/stageParams';
import { cpExchangesPerLayer, epAllToAllsPerLayer, tpCollectivesPerLayer } from '../comm/volumes';
import { moeLayersIn } from '../model/params';
import { timeContext, TRAFFIC, type TimeContext } from './context';

/** FLOPs and seconds of one micro-batch on one stage (all its chunks together). */
export interface MicrobatchWork {
  readonly forwardFlops: number;
  readonly backwardFlops: number;
  readonly recomputeFlops: number;
  /** Matmul, memory-bound and exposed in-layer communication seconds per pass. */
  readonly forward: number;
  readonly backward: number;
  readonly recompute: number;
  /** Exposed in-layer communication (TP, EP, CP) inside `forward`, `backward` and `recompute`, seconds per pass. */
  readonly forwardComm: number;
  readonly backwardComm: number;
  readonly recomputeComm: number;
  /** In-layer communication seconds per micro-batch (all passes) and the part not hidden. */
  readonly tpSeconds: number;
  readonly epSeconds: number;
  readonly cpSeconds: number;
  readonly exposedCommSeconds: number;
}

/** Matmul seconds: FLOPs / (peak(dtype) × achievableFlopsFraction) (roofline with a calibrated efficiency, data/gpus.json). */
export function matmulSeconds(flops: number, flopRate: number): number {
  return flops / flopRate;
}

/** Memory-bound seconds: bytes / HBM bandwidth (roofline for elementwise kernels). */
export function memoryBoundSeconds(bytes: number, hbm: number): number {
  return bytes / hbm;
}

/** Layers of a stage that full recomputation recomputes: min(layers, recomputeLayers) (Megatron --recompute-num-layers). */
export function recomputedLayers(plan: Plan, stageLayers: number): number {
  if (plan.training.recompute !== 'full') return 0;
  const r = plan.training.recomputeLayers;
  return r === undefined || !(r >= 0) ? stageLayers : Math.min(stageLayers, Math.floor(r));
}

/**
 * Per-micro-batch work of one stage in O(1): the context's dense and MoE layer units times their counts in the stage
 * (full recomputation covers the first recomputeLayers layers), the LM head on the last stage. TP/EP collectives are
 * exposed unless tpCommOverlap; CP hides behind core attention (ring attention, Liu et al. 2023).
 */
export function microbatchWork(plan: Plan, stage: number, ctx: TimeContext = timeContext(plan)): MicrobatchWork {
  const m = plan.model;
  const tr = plan.training;
  const start = firstLayerOfStage(plan, stage);
  const n = stageLayerCount(plan, stage);
  const nR = recomputedLayers(plan, n);
  const nMoe = m.moe ? moeLayersIn(m, start, start + n) : 0;
  const nMoeR = m.moe ? moeLayersIn(m, start, start + nR) : 0;
  const nDense = n - nMoe;
  const nDenseR = nR - nMoeR;
  const d = ctx.dense;
  const e = ctx.moe;
  const { tpOne, cpOne, epOne, flopRate, hbm } = ctx;
  let fW = nDense * d.weights + nMoe * e.weights;
  const fC = nDense * d.core + nMoe * e.core;
  const fBytes = nDense * d.act + nMoe * e.act;
  let rF = nDenseR * (d.weights + d.core) + nMoeR * (e.weights + e.core);
  const rBytes = nDenseR * d.act + nMoeR * e.act;
  if (tr.recompute === 'selective' && !tr.flashAttention) rF += fC;
  const tpS = (tpCollectivesPerLayer(false) * n + 2 * nR) * tpOne;
  const epS = (epAllToAllsPerLayer(false) * nMoe + 2 * nMoeR) * epOne;
  const cpS = (cpExchangesPerLayer(false) * n + nR) * cpOne;
  const coreOne = n > 0 ? matmulSeconds(fC / n, flopRate) : 0;
  const cpExpF = ctx.cpSize > 1 ? n * Math.max(0, cpOne - coreOne) : 0;
  const cpExpB = ctx.cpSize > 1 ? (n - nR) * Math.max(0, 2 * cpOne - 2 * coreOne) + nR * Math.max(0, 3 * cpOne - 3 * coreOne) : 0;
  if (stage === ctx.p - 1) fW += ctx.lmHeadFlops;
  // Frozen base weights need input gradients only (LoRA): 1× instead of 2× their forward FLOPs.
  const bwdWeights = plan.lora ? fW + ctx.loraFlops * n : 2 * fW;
  const fwdFlops = fW + fC;
  const bwdFlops = bwdWeights + 2 * fC;
  const tpExp = plan.parallel.tpCommOverlap ? 0 : 1;
  const forwardComm = tpExp * 2 * n * tpOne + 2 * nMoe * epOne + cpExpF;
  const backwardComm = tpExp * 2 * n * tpOne + 2 * nMoe * epOne + cpExpB;
  const recomputeComm = tpExp * 2 * nR * tpOne + 2 * nMoeR * epOne;
  const forward = matmulSeconds(fwdFlops, flopRate) + memoryBoundSeconds(TRAFFIC.forward * fBytes, hbm) + forwardComm;
  const backward = matmulSeconds(bwdFlops, flopRate) + memoryBoundSeconds(TRAFFIC.backward * fBytes, hbm) + backwardComm;
  const recompute = matmulSeconds(rF, flopRate) + memoryBoundSeconds(TRAFFIC.forward * rBytes, hbm) + recomputeComm;
  const exposed = tpExp * tpS + epS + cpExpF + cpExpB;
  return {
    forwardFlops: fwdFlops, backwardFlops: bwdFlops, recomputeFlops: rF,
    forward, backward, recompute, forwardComm, backwardComm, recomputeComm, tpSeconds: tpS, epSeconds: epS, cpSeconds: cpS, exposedCommSeconds: exposed,
  };
}
