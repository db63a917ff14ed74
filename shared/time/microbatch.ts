/**
 * Seconds of one micro-batch on one rank of one pipeline stage: forward, backward and recomputation, each the sum of its
 * layers' kernels (shared/time/layerCost.ts: GEMMs, attention, memory-bound kernels, FP8 casts, launch gaps, exposed
 * in-layer TP/CP/EP communication), plus the embedding on the first stage and the LM head and loss on the last.
 */
import type { Plan } from '../plan/types';
import { firstLayerOfStage, stageLayerCount } from '../comm/stageParams';
import { moeLayersIn } from '../model/params';
import { layerPolicyCheckpointedBlocks, modelImplOf, recomputeEveryOf, recomputePolicyOf } from '../memory/engine';
import { recomputesModule } from '../plan/recomputeModules';
import { TimeCache } from './cache';
import { timeContext, type TimeContext } from './context';
import { addParts, emptyParts, type Parts } from './parts';

/** FLOPs, seconds and kernel terms of one micro-batch on one stage (all its chunks together). */
export interface MicrobatchWork {
  readonly forwardFlops: number;
  readonly backwardFlops: number;
  readonly recomputeFlops: number;
  /** Kernel seconds plus exposed in-layer communication, per pass. */
  readonly forward: number;
  readonly backward: number;
  readonly recompute: number;
  /** The same seconds term by term (GEMM, attention, memory-bound, FP8, launch, exposed in-layer communication). */
  readonly parts: { readonly forward: Parts; readonly backward: Parts; readonly recompute: Parts };
  /** In-layer communication seconds per micro-batch (all passes) and the part not hidden. */
  readonly tpSeconds: number;
  readonly epSeconds: number;
  readonly cpSeconds: number;
  readonly exposedCommSeconds: number;
  /** Layers of the stage (ZeRO-3/FSDP gathers and reduces one layer at a time behind one layer's compute). */
  readonly layers: number;
}

/**
 * torchtitan's per-layer selective policy (`selective_ac_option` = N, its default "2"; torchtitan/distributed/
 * activation_checkpoint.py): every N-th block is checkpointed whole and reruns its whole forward in the backward, the
 * others rerun nothing. Its op-level policy ("op") and Megatron's selective recomputation rerun parts of every layer
 * (shared/time/layerCost.ts, `selective`).
 */
export function checkpointsWholeBlocks(plan: Plan): boolean {
  return plan.training.recompute === 'selective' && plan.engine === 'fsdp2' && recomputePolicyOf(plan) === 'torchtitan-layer';
}

/** Layers of a stage that full recomputation recomputes: min(layers, recomputeLayers) (Megatron --recompute-num-layers). */
export function recomputedLayers(plan: Plan, stageLayers: number): number {
  if (checkpointsWholeBlocks(plan)) return layerPolicyCheckpointedBlocks(stageLayers, recomputeEveryOf(plan));
  if (plan.training.recompute !== 'full') return 0;
  const r = plan.training.recomputeLayers;
  return r === undefined || !(r >= 0) ? stageLayers : Math.min(stageLayers, Math.floor(r));
}

/**
 * Per-micro-batch work of one stage in O(1): the context's dense and MoE layer costs times their counts in the stage
 * (full recomputation reruns the forward of the first recomputeLayers layers, selective recomputation the parts its
 * policy drops), the embedding on stage 0 and the LM head and loss on the last stage.
 */
export function microbatchWork(plan: Plan, stage: number, ctx: TimeContext = timeContext(plan, new TimeCache())): MicrobatchWork {
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
  let fW = nDense * d.weights + nMoe * e.weights;
  const fC = nDense * d.core + nMoe * e.core;
  let rF = nDenseR * (d.weights + d.core) + nMoeR * (e.weights + e.core);
  const selective = tr.recompute === 'selective' && !checkpointsWholeBlocks(plan);
  // Megatron reruns core attention when its module list has it (fused or not) and the GEMMs of its other modules.
  const megatron = modelImplOf(plan) === 'megatron';
  if (selective && (megatron ? recomputesModule(tr, 'core_attn') : !tr.flashAttention)) rF += fC;
  if (selective && megatron) rF += nDense * d.cost.selectiveFlops + nMoe * e.cost.selectiveFlops;
  if (stage === ctx.p - 1) fW += ctx.lmHeadFlops;
  const first = stage === 0;
  const last = stage === ctx.p - 1;
  // Totals from the layer costs' precomputed sums; the term-by-term records are built only when a result asks.
  let forward = nDense * d.cost.fwdTotal + nMoe * e.cost.fwdTotal;
  let backward = nDense * d.cost.bwdTotal + nMoe * e.cost.bwdTotal;
  let recompute = nDenseR * d.cost.fwdTotal + nMoeR * e.cost.fwdTotal;
  if (selective) recompute += nDense * d.cost.selectiveTotal + nMoe * e.cost.selectiveTotal;
  if (first) { forward += ctx.embedding.fwdTotal; backward += ctx.embedding.bwdTotal; }
  if (last) { forward += ctx.head.fwdTotal; backward += ctx.head.bwdTotal; }
  const commF = nDense * d.cost.fwd.comm + nMoe * e.cost.fwd.comm;
  const commB = nDense * d.cost.bwd.comm + nMoe * e.cost.bwd.comm;
  const commR = nDenseR * d.cost.fwd.comm + nMoeR * e.cost.fwd.comm + (selective ? nDense * d.cost.selective.comm + nMoe * e.cost.selective.comm : 0);
  // Frozen base weights need input gradients only (LoRA): 1× instead of 2× their forward FLOPs.
  const bwdWeights = plan.lora ? fW + ctx.loraFlops * n : 2 * fW;
  const tpS = (nDense + nDenseR) * d.cost.tpSeconds + (nMoe + nMoeR) * e.cost.tpSeconds;
  const cpS = (nDense + nDenseR) * d.cost.cpSeconds + (nMoe + nMoeR) * e.cost.cpSeconds;
  const epS = (nMoe + nMoeR) * e.cost.epSeconds;
  return new Work(fW + fC, bwdWeights + 2 * fC, rF, forward, backward, recompute, tpS, epS, cpS, commF + commB + commR, n,
    ctx, nDense, nMoe, nDenseR, nMoeR, selective, first, last);
}

/** A MicrobatchWork whose term-by-term records are built only when a result asks for them (the fast path never does). */
class Work implements MicrobatchWork {
  private cached: MicrobatchWork['parts'] | undefined;

  constructor(
    readonly forwardFlops: number, readonly backwardFlops: number, readonly recomputeFlops: number,
    readonly forward: number, readonly backward: number, readonly recompute: number,
    readonly tpSeconds: number, readonly epSeconds: number, readonly cpSeconds: number, readonly exposedCommSeconds: number,
    readonly layers: number,
    private readonly ctx: TimeContext, private readonly nDense: number, private readonly nMoe: number,
    private readonly nDenseR: number, private readonly nMoeR: number,
    private readonly selective: boolean, private readonly first: boolean, private readonly last: boolean,
  ) {}

  get parts(): MicrobatchWork['parts'] {
    if (this.cached) return this.cached;
    const { ctx, nDense, nMoe, nDenseR, nMoeR } = this;
    const d = ctx.dense.cost;
    const e = ctx.moe.cost;
    const f = addParts(addParts(emptyParts(), d.fwd, nDense), e.fwd, nMoe);
    const b = addParts(addParts(emptyParts(), d.bwd, nDense), e.bwd, nMoe);
    const r = addParts(addParts(emptyParts(), d.fwd, nDenseR), e.fwd, nMoeR);
    if (this.selective) addParts(addParts(r, d.selective, nDense), e.selective, nMoe);
    if (this.first) { addParts(f, ctx.embedding.fwd); addParts(b, ctx.embedding.bwd); }
    if (this.last) { addParts(f, ctx.head.fwd); addParts(b, ctx.head.bwd); }
    this.cached = { forward: f, backward: b, recompute: r };
    return this.cached;
  }
}
