/**
 * Seconds of one transformer layer on one rank for one micro-batch, as the sum of its kernels (issue 14 §1): the
 * linear GEMMs from their shapes, core attention, the memory-bound kernels, FP8 casts, launch gaps and the exposed
 * part of the in-layer TP/CP/EP communication, for forward, backward and selective recomputation.
 */
import { moeHostSeconds } from './moeHost';
import { adapterLayerSeconds } from './adapters';
import type { MlaSpec, Plan } from '../plan/types';
import { qkHeadDim, vHeadDim } from '../model/mla';
import type { GroupLink } from '../comm/links';
import { linkSeconds } from '../comm/links';
import { tpMessageBytes } from '../comm/volumes';
import { dispatchPass } from '../comm/dispatch';
import { attentionKernelFlops, type AttentionImpl } from './kernels/attention';
import { moeRoutingBytes } from './kernels/moeRouting';
import { asyncTpReduceBytes, autocastCasts, autocastWeightCastBytes, kernelsPerLayer, layerElementwiseBytes, ligerOpsOf, softmaxAttentionElementwiseBytes, type Fusion, type LayerWidths } from './kernels/elementwise';
import { GDN_KERNEL, MEGATRON_GDN_KERNELS, gatedDeltaNetEagerBytesPerToken, gatedDeltaNetInWidths, gatedDeltaNetKernelFlops, gatedDeltaNetKernels, megatronGatedDeltaNetBytesPerToken } from './kernels/gatedDeltaNet';
import { linearAttentionFraction, linearAttentionRankWidths } from '../model/linearAttention';
import { modelImplOf } from '../memory/engine';
import { fp8CastBytes } from './kernels/fp8';
import { projectionWidths } from './projections';
import { ringAttentionBlocks, ringKvHeads, ringMergeBytes, ringStepBytes, torchRing, torchRingGatherBytes, torchRingGradBytes } from './kernels/ring';
import type { TimeParams } from './params';
import { addParts, emptyParts, partsTotal, type Parts } from './parts';
import { routedTokenFactor } from '../model/capacity';
import { megatronSelectiveParts } from './megatronRecompute';
import { coreAttentionSeconds } from './coreAttention';

/** The timers a context provides: GEMM seconds per dtype, attention seconds, HBM seconds, one collective. */
export interface KernelTimers {
  readonly gemm16: (m: number, n: number, k: number) => number;
  readonly gemm8: (m: number, n: number, k: number) => number;
  /** Seconds of a fused attention pass of `flops` kernel FLOPs at a sequence (chunk) length. */
  readonly attention: (pass: 'fwd' | 'bwd', flops: number, seq: number, causal: boolean) => number;
  readonly hbm: (bytes: number) => number;
  readonly impl: AttentionImpl;
  readonly fusion: Fusion;
  readonly fp8: boolean;
  readonly params: TimeParams;
}

/** A layer's kernels per pass and its in-layer communication (total seconds, before overlap). */
export interface LayerCost {
  readonly fwd: Parts;
  readonly bwd: Parts;
  /** partsTotal of fwd, bwd and selective, and their exposed communication (the fast path sums these scalars). */
  readonly fwdTotal: number;
  readonly bwdTotal: number;
  readonly selectiveTotal: number;
  /** Recomputed under selective recomputation: eager core attention (Megatron) or elementwise ops (torch SAC). */
  readonly selective: Parts;
  /** GEMM FLOPs the selective recomputation reruns (Megatron's modules; core attention is counted apart). */
  readonly selectiveFlops: number;
  readonly tpSeconds: number;
  readonly cpSeconds: number;
  readonly epSeconds: number;
}

/**
 * The linears of a layer as [tokens, out, in, fp8?, count, chunks?] on this rank; `out` lists the widths of the separate
 * GEMMs where the engine's module runs one projection as several (projections.ts); `chunks` splits the forward and
 * input-gradient GEMMs into that many GEMMs of tokens/chunks rows (PyTorch async TP, asyncTpChunks).
 */
export type Linear = readonly [number, number | readonly number[], number, boolean, number, number?];

/**
 * GEMMs each TP-paired matmul runs as under PyTorch's async TP: `_fused_all_gather_matmul` and
 * `_fused_matmul_reduce_scatter` (torch/distributed/_symmetric_memory/__init__.py) multiply one sequence shard at a
 * time, so the forward and input-gradient GEMMs of the column- and row-parallel linears become tp GEMMs of M/tp rows,
 * each its own wave-quantized kernel; the weight gradients run on the gathered tensors, whole. Async TP needs the
 * sequence-parallel layout (its fused ops replace SP's all-gather and reduce-scatter). 1 otherwise.
 */
export function asyncTpChunks(plan: Plan, tp: number): number {
  return tp > 1 && plan.parallel.sp && plan.parallel.tpCommOverlap && torchRing(plan) ? tp : 1;
}

/** Exposed seconds of a collective paired with a compute block: max(0, c − g) + overlapCost · min(c, g) when overlapped. */
export function exposedBehind(comm: number, compute: number, overlapped: boolean, cost: number): number {
  if (!overlapped) return comm;
  return Math.max(0, comm - compute) + cost * Math.min(comm, compute);
}

/** Weight elements of the 16-bit linears of a list on this rank: count × K × ΣN (FP8 linears cast their own way). */
function sixteenBitWeights(list: readonly Linear[]): number {
  let n = 0;
  for (const [, widths, k, fp8, count] of list) {
    if (!fp8) n += count * k * (typeof widths === 'number' ? widths : widths.reduce((a, b) => a + b, 0));
  }
  return n;
}

/** GEMM seconds of a list of linears, forward and backward (weight gradients skipped for frozen weights). */
function linearParts(list: readonly Linear[], t: KernelTimers, frozen: boolean, actBytes: number, weightCasts: number, fp8Spec: Plan['training']['fp8']): { fwd: Parts; bwd: Parts; gemmF: number[]; gemmD: number[] } {
  const fwd = emptyParts();
  const bwd = emptyParts();
  const gemmF: number[] = [];
  const gemmD: number[] = [];
  for (const [m, widths, k, fp8, count, chunks = 1] of list) {
    const g = fp8 ? t.gemm8 : t.gemm16;
    const ns = typeof widths === 'number' ? [widths] : widths;
    const mc = m / chunks;
    let f = 0, dgrad = 0, wgrad = 0, n = 0;
    for (const w of ns) {
      f += count * chunks * g(mc, w, k);
      dgrad += count * chunks * g(mc, k, w);
      wgrad += frozen ? 0 : count * g(w, k, m);
      n += w;
    }
    fwd.gemm += f;
    bwd.gemm += dgrad + wgrad;
    gemmF.push(f);
    gemmD.push(dgrad);
    if (fp8) {
      const c = fp8CastBytes(m, n, k, actBytes, t.fusion, fp8Spec, weightCasts);
      fwd.fp8 += count * t.hbm(c.fwd);
      bwd.fp8 += count * t.hbm(c.bwd);
    }
  }
  return { fwd, bwd, gemmF, gemmD };
}

/**
 * The linears of a multi-head latent attention block on this rank (shared/model/mla.ts), the query projection first
 * and the output projection second: the up and output projections over the rank's a/t heads for all T tokens; the
 * down projections whole, for the Tn tokens of the sequence-parallel shard (Megatron-LM multi_latent_attention.py
 * runs them duplicated on the shard and gathers the latents), never split into async-TP chunks.
 */
function mlaLinears(mla: MlaSpec, h: number, s: LayerShape, f8: boolean, chunks: number): Linear[] {
  const a = s.qHeads, T = s.tokens;
  const qk = mla.qkNopeHeadDim + mla.qkRopeHeadDim;
  const q: Linear = mla.qLoraRank > 0 ? [T, a * qk, mla.qLoraRank, f8, 1, chunks] : [T, a * qk, h, f8, 1, chunks];
  const out: Linear[] = [q, [T, h, a * mla.vHeadDim, f8, 1, chunks]];
  if (mla.qLoraRank > 0) out.push([s.normTokens, mla.qLoraRank, h, f8, 1]);
  out.push([s.normTokens, mla.kvLoraRank + mla.qkRopeHeadDim, h, f8, 1], [T, a * (mla.qkNopeHeadDim + mla.vHeadDim), mla.kvLoraRank, f8, 1, chunks]);
  return out;
}

/** Everything layerCost needs about the layer's shape on this rank. */
export interface LayerShape extends LayerWidths {
  readonly b: number;
  readonly seq: number;
  readonly cp: number;
  readonly tp: number;
  readonly actBytes: number;
  /** FFN width of one routed expert on this rank and routed tokens per local expert (MoE layers only). */
  readonly moe?: { readonly experts: number; readonly tokensPerExpert: number; readonly expertFfn: number; readonly sharedFfn: number; readonly routerOut: number };
}

/**
 * One layer's cost: linears (QKV, output projection, MLP up/gate and down, or router + grouped experts + shared
 * experts), core attention (fused curve, or eager GEMMs + softmax bytes), elementwise bytes, FP8 casts and launch gaps;
 * TP collectives paired with the GEMMs they feed (Megatron --tp-comm-overlap / AsyncTP hide them behind those GEMMs),
 * the CP ring hidden only behind its attention step, EP all-to-alls exposed.
 */
export function layerCost(plan: Plan, s: LayerShape, t: KernelTimers, links: { tp: GroupLink; cp: GroupLink; ep: GroupLink }, m: number): LayerCost {
  const mod = plan.model;
  const d = mod.headDim;
  // Query/key and value head widths: both d, or MLA's d_n + d_r and d_v (shared/model/mla.ts).
  const dqk = qkHeadDim(mod), dv = vHeadDim(mod);
  const h = mod.hiddenSize;
  const T = s.tokens;
  const f8 = t.fp8;
  const frozen = !!plan.lora;
  const weightCasts = plan.engine === 'megatron' ? 1 / Math.max(1, m) : 1;
  const widths = projectionWidths(plan, s.qHeads, s.kvHeads, d, s.ffn);
  const chunks = asyncTpChunks(plan, s.tp);
  // The first linear is the one the TP input gather feeds and the second the output projection (the TP pairing below
  // reads them by position); MLA's other projections follow them.
  const list: Linear[] = mod.mla ? mlaLinears(mod.mla, h, s, f8, chunks) : [[T, widths.qkv, h, f8, 1, chunks], [T, h, s.qHeads * d, f8, 1, chunks]];
  const mats = mod.gatedMlp ? 2 : 1;
  if (s.moe) {
    list.push([T, s.moe.routerOut, h, false, 1]);
    if (s.moe.sharedFfn > 0) list.push([T, mats * s.moe.sharedFfn, h, f8, 1], [T, h, s.moe.sharedFfn, f8, 1]);
    list.push([s.moe.tokensPerExpert, mats * s.moe.expertFfn, h, f8, s.moe.experts], [s.moe.tokensPerExpert, h, s.moe.expertFfn, f8, s.moe.experts]);
  } else {
    list.push([T, widths.mlpIn, h, f8, 1, chunks], [T, h, s.ffn, f8, 1, chunks]);
  }
  // Gated DeltaNet layers project with their own linears (kernels/gatedDeltaNet.ts gatedDeltaNetInWidths) in their share
  // of the layers: inserted after the output projection so that the TP pairing below still finds QKV and the output
  // projection first and the MLP last, each weighted by its kind's share through the linear's count.
  const la = mod.mla ? undefined : mod.linearAttention;
  const gdnLinear = la ? linearAttentionFraction(mod) : 0;
  let gdnIn = -1, gdnOut = -1;
  if (la && gdnLinear > 0) {
    const softmaxShare = (l: Linear): Linear => [l[0], l[1], l[2], l[3], 1 - gdnLinear, l[5]];
    list[0] = softmaxShare(list[0]);
    list.splice(2, 0, [T, gatedDeltaNetInWidths(la, modelImplOf(plan) === 'megatron', s.tp), h, f8, gdnLinear, chunks]);
    gdnIn = 2;
    const vRank = linearAttentionRankWidths(la, s.tp).v;
    if (vRank !== s.qHeads * d) {
      list[1] = softmaxShare(list[1]);
      list.splice(3, 0, [T, h, vRank, f8, gdnLinear, chunks]);
      gdnOut = 3;
    }
  }
  const lin = linearParts(list, t, frozen, s.actBytes, weightCasts, plan.training.fp8);
  const fwd = lin.fwd;
  const bwd = lin.bwd;
  // LoRA's adapters beside the frozen linears (and a 4-bit base's dequantization), shared/time/adapters.ts.
  if (frozen) {
    const ad = adapterLayerSeconds(plan, T, s.tp, s.actBytes, t);
    fwd.adapters += ad.fwd;
    bwd.adapters += ad.bwd;
  }
  // Core attention: T local queries against the whole sequence's keys (CP balances the causal work over the ring).
  const causal = true;
  const attnF = attentionKernelFlops(T, s.seq, s.qHeads, (dqk + dv) / 2, causal);
  // With CP the load-balanced ring runs the causal diagonal block and cp − 1 unmasked half blocks (kernels/ring.ts).
  const ring = ringAttentionBlocks(s.seq, s.cp);
  const torch = torchRing(plan);
  // K and V elements per rank, each counted at the mean of their widths (MLA's keys are d_qk wide, its values d_v).
  const ringKv = (T * ringKvHeads(plan, s.qHeads, s.kvHeads) * (dqk + dv)) / 2;
  const core = coreAttentionSeconds(plan, s, t, attnF, ring, dqk, dv);
  fwd.attention += core.fwd;
  bwd.attention += core.bwd;
  const { selective: selectiveAttention, firstBlockF, firstBlockB } = core;
  // Gated DeltaNet layers (Qwen3-Next, Qwen3.5) run flash-linear-attention's chunked rule, linear in the sequence,
  // instead of softmax attention: one layer's cost is the mix over the layer kinds (kernels/gatedDeltaNet.ts). Eager
  // attention (no fused curve) keeps the softmax stand-in.
  const gdnShare = t.impl !== 'eager' ? gdnLinear : 0;
  // Every layer's softmax attention forward, before the Gated DeltaNet share replaces part of it (what core attention's
  // recomputation reruns in the softmax layers).
  const softmaxFwd = fwd.attention;
  if (la && gdnShare > 0) {
    const core = gatedDeltaNetKernelFlops(la, T, s.tp);
    fwd.attention = (1 - gdnShare) * fwd.attention + gdnShare * t.attention('fwd', core.fwd, GDN_KERNEL.referenceSeq, true);
    bwd.attention = (1 - gdnShare) * bwd.attention + gdnShare * t.attention('bwd', core.bwd, GDN_KERNEL.referenceSeq, true);
  }
  // An RMSNorm written as x.float() … type_as(x) (torchtitan's of 2024, torchtune's) runs as eight ops in eager mode.
  const upcast = plan.training.normUpcast === true;
  // A MoE layer's activation runs on the routed copies (R rows of an expert's width) and the shared experts' tokens.
  const ewShape = s.moe ? { ...s, ffn: (s.moe.tokensPerExpert * s.moe.experts * s.moe.expertFfn) / T + s.moe.sharedFfn } : s;
  // Liger's RMSNorm, RoPE and SwiGLU kernels in place of transformers' eager ops (kernels/elementwise.ts ligerPasses).
  const liger = ligerOpsOf(plan, t.fusion);
  const ew = t.hbm(layerElementwiseBytes(mod, ewShape, s.actBytes, t.fusion, 'fwd', upcast, liger));
  fwd.elementwise += ew;
  bwd.elementwise += t.hbm(layerElementwiseBytes(mod, ewShape, s.actBytes, t.fusion, 'bwd', upcast, liger));
  // transformers' and Megatron-LM's Gated DeltaNet mixers move their own bytes around the kernels (no rotary, q/k/v
  // copies or q/k norms); torchtitan's keep the softmax layer's stand-in.
  const gdnImpl = modelImplOf(plan);
  const gdnEager = la && gdnShare > 0 && (gdnImpl === 'hf' || gdnImpl === 'megatron');
  if (la && gdnEager) {
    for (const [pass, part] of [['fwd', fwd], ['bwd', bwd]] as const) {
      const own = T * (gdnImpl === 'megatron' ? megatronGatedDeltaNetBytesPerToken(la, pass, s.tp) : gatedDeltaNetEagerBytesPerToken(la, h, pass, s.tp));
      part.elementwise += gdnShare * (t.hbm(own) - t.hbm(softmaxAttentionElementwiseBytes(mod, s, s.actBytes, t.fusion, pass, upcast, liger)));
    }
  }
  // fp32 weights under autocast: every 16-bit linear's weight is cast at each forward (recomputation included) and a
  // trainable one's gradient cast back in backward; FP8 linears cast their own way (fp8CastBytes).
  const casts = autocastCasts(plan, !frozen);
  if (casts.fwd) fwd.elementwise += t.hbm(autocastWeightCastBytes(sixteenBitWeights(list)));
  if (casts.bwd) bwd.elementwise += t.hbm(autocastWeightCastBytes(sixteenBitWeights(list)));
  let routingF = 0;
  if (s.moe && mod.moe) {
    // Routing the rank's tokens to their experts and back: Megatron's permutation, or transformers' grouped-GEMM code.
    const route = { tokens: s.normTokens, copies: mod.moe.topK * routedTokenFactor(mod.moe), hidden: h, experts: mod.moe.experts, gatedFfn: mod.gatedMlp ? s.moe.expertFfn : 0 };
    routingF = moeRoutingBytes(t.fusion, mod.moe, route, s.actBytes, 'fwd');
    fwd.elementwise += t.hbm(routingF);
    bwd.elementwise += t.hbm(moeRoutingBytes(t.fusion, mod.moe, route, s.actBytes, 'bwd'));
  }
  if (s.cp > 1) {
    // Each ring step's partial output is merged with the log-sum-exp correction and the gradients accumulated in fp32.
    const merge = ringMergeBytes(torch, s.cp - 1, T * s.qHeads * dv, ringKv, s.actBytes);
    fwd.elementwise += t.hbm(merge.fwd);
    bwd.elementwise += t.hbm(merge.bwd);
  }
  // FP8 linears: the attention block's (QKV and output, or MLA's four or five) and the MLP's two, or a MoE layer's
  // shared pair and two per local expert.
  const attnLinears = mod.mla ? (mod.mla.qLoraRank > 0 ? 5 : 4) : 2;
  const k = kernelsPerLayer(t.fusion, f8 ? attnLinears + (s.moe ? 2 + 2 * s.moe.experts : 2) : 0, t.impl === 'eager');
  fwd.launch += k.fwd * t.params.kernelGap;
  bwd.launch += k.bwd * t.params.kernelGap;
  if (la && gdnEager) {
    const g = gdnImpl === 'megatron' ? MEGATRON_GDN_KERNELS : gatedDeltaNetKernels(la);
    fwd.launch += gdnShare * g.fwd * t.params.kernelGap;
    bwd.launch += gdnShare * g.bwd * t.params.kernelGap;
  }
  // TP: 2 collectives forward (before QKV and after the output projection, before fc1 and after fc2) and 2 backward.
  const cost = t.params.overlapCost;
  let tpSeconds = 0;
  // Exposed seconds of the forward's two TP input gathers (what op-level SAC reruns, below).
  let tpGathers = 0;
  if (s.tp > 1) {
    // Sequence parallelism runs an all-gather and a reduce-scatter per pair, timed at their own bus bandwidth: NCCL's,
    // and PyTorch async TP's symmetric-memory pulls over the same NVLink (no published rate of their own; the async TP
    // rows of the calibration set, docs/time-model.md). Transformer Engine's overlap (Megatron --tp-comm-overlap) is a
    // userbuffers ring exchange of peer-to-peer copies at the link's rate: half an all-reduce's time each. Without
    // sequence parallelism, one all-reduce per pair, half charged to each.
    const ov = plan.parallel.tpCommOverlap;
    const nccl = plan.parallel.sp && (!ov || torchRing(plan));
    const bytes = (b: number) => tpMessageBytes(T, h, b);
    const p2p = (b: number) => linkSeconds('all-reduce', bytes(b), links.tp) / 2;
    const one = nccl ? linkSeconds('reduce-scatter', bytes(s.actBytes), links.tp) : p2p(s.actBytes);
    // torchao's float8 TP (torchtitan with float8 linears) all-gathers the inputs of the column-parallel linears in
    // float8 forward and the output gradients of the row-parallel ones in float8 backward; reduce-scatters stay 16-bit
    // (torchao/float8/float8_tensor_parallel.py Float8ColwiseParallel, Float8RowwiseParallel, PrepareFloat8ModuleInput).
    const gatherBytes = f8 && plan.engine === 'fsdp2' ? 1 : s.actBytes;
    const gather = nccl ? linkSeconds('all-gather', bytes(gatherBytes), links.tp) : p2p(gatherBytes);
    // A Gated DeltaNet layer's in_proj follows the gather and its out_proj precedes the reduce, as QKV and o do.
    const mixed = (g: number[], i: number, j: number) => g[i] + (j >= 0 ? g[j] : 0);
    const [gq, gp, gu, gd] = [mixed(lin.gemmF, 0, gdnIn), mixed(lin.gemmF, 1, gdnOut), lin.gemmF[lin.gemmF.length - 2], lin.gemmF[lin.gemmF.length - 1]];
    // Backward, each collective pairs with one GEMM of the linear, its input-gradient GEMM: PyTorch's micro-pipelined TP
    // fuses one all-gather or reduce-scatter with one matmul, and Transformer Engine's bulk overlaps pair the input
    // gather with the dgrad GEMM and the dgrad reduce-scatter with the wgrad GEMM, of about the same length.
    const [bq, bp, bu, bd] = [mixed(lin.gemmD, 0, gdnIn), mixed(lin.gemmD, 1, gdnOut), lin.gemmD[lin.gemmD.length - 2], lin.gemmD[lin.gemmD.length - 1]];
    // Forward: gather before QKV and MLP-in, reduce after the output projection and MLP-out; backward the reverse.
    tpGathers = exposedBehind(gather, gq, ov, cost) + exposedBehind(gather, gu, ov, cost);
    fwd.comm += tpGathers + exposedBehind(one, gp, ov, cost) + exposedBehind(one, gd, ov, cost);
    bwd.comm += exposedBehind(one, bq, ov, cost) + exposedBehind(gather, bp, ov, cost) + exposedBehind(one, bu, ov, cost) + exposedBehind(gather, bd, ov, cost);
    tpSeconds = 4 * one + 4 * gather;
    // PyTorch's async TP (torchtitan's enable_async_tensor_parallel) sums the reduce-scattered partials in a separate
    // kernel: after the attention output and MLP-down projections forward, after the QKV and MLP-up input gradients
    // backward.
    if (chunks > 1) {
      const reduce = t.hbm(asyncTpReduceBytes(T, h, s.tp, s.actBytes));
      fwd.elementwise += 2 * reduce;
      bwd.elementwise += 2 * reduce;
    }
  }
  // CP ring. PyTorch: one all-gather of every rank's K and V per pass, behind the first block only, and cp − 1 dK/dV
  // rotations in backward, each behind one step. Transformer Engine: cp − 1 exchanges of K and V (dK, dV as well in
  // backward), each behind one attention step.
  let cpSeconds = 0;
  if (s.cp > 1 && torch && t.impl !== 'eager') {
    const gather = linkSeconds('all-gather', torchRingGatherBytes(s.cp, ringKv, s.actBytes), links.cp);
    const grads = linkSeconds('send-recv', torchRingGradBytes(ringKv), links.cp);
    fwd.comm += exposedBehind(gather, firstBlockF, true, cost);
    bwd.comm += exposedBehind(gather, firstBlockB, true, cost) + (s.cp - 1) * exposedBehind(grads, bwd.attention / s.cp, true, cost);
    cpSeconds = 2 * gather + (s.cp - 1) * grads;
  } else if (s.cp > 1) {
    const bytes = ringStepBytes(torch, ringKv, s.actBytes);
    const stepF = linkSeconds('send-recv', bytes.fwd, links.cp);
    const stepB = linkSeconds('send-recv', bytes.bwd, links.cp);
    fwd.comm += (s.cp - 1) * exposedBehind(stepF, fwd.attention / s.cp, true, cost);
    bwd.comm += (s.cp - 1) * exposedBehind(stepB, bwd.attention / s.cp, true, cost);
    cpSeconds = (s.cp - 1) * (stepF + stepB);
  }
  let epSeconds = 0, epFwd = 0;
  if (s.moe && links.ep.size > 1 && mod.moe) {
    // One dispatch + combine forward and one backward, by the plan's dispatcher (shared/comm/dispatch.ts).
    const pass = dispatchPass(plan, plan.parallel.epDispatcher ?? 'alltoall', s.normTokens, mod.moe, h, s.actBytes, links.ep).seconds;
    // Megatron's EP overlap runs one micro-batch's forward with another's backward: the merged block's compute (this
    // layer's forward and backward) hides its four all-to-alls, max(0, c − g) + overlapCost·min(c, g), half charged
    // to each pass (megatron/core/pipeline_parallel/combined_1f1b.py; docs/time-model.md#expert-parallel-dispatch).
    const shown = plan.parallel.epCommOverlap
      ? exposedBehind(2 * pass, partsTotal(fwd) - fwd.comm + partsTotal(bwd) - bwd.comm, true, cost) / 2 : pass;
    fwd.comm += shown;
    bwd.comm += shown;
    epFwd = shown;
    epSeconds = 2 * pass;
  }
  // A MoE layer's host work where the host launches the layer (shared/time/moeHost.ts): the forward's dispatch syncs
  // on the tokens per expert, so it is charged there (and again where recomputation reruns the forward).
  const host = s.moe ? moeHostSeconds(plan, t.params) : 0;
  fwd.host += host;
  // What selective recomputation reruns (used only when the plan recomputes selectively; computed always so the
  // planner's recomputation variants share one step context).
  // Megatron's reruns the modules of its list (shared/time/megatronRecompute.ts); torchtitan's op-level SAC saves
  // attention and every other matmul output and reruns the rest (torchtitan/models/llama3/infra/parallelize.py
  // `_save_list`, every second mm recomputed).
  let selective = emptyParts(), selectiveFlops = 0;
  if (gdnImpl === 'megatron') {
    const softmaxAttention = t.impl === 'eager' ? selectiveAttention : (1 - gdnShare) * softmaxFwd;
    const r = megatronSelectiveParts(plan, s, t, { list, gemmF: lin.gemmF, softmaxAttention, dispatch: epFwd, host, routingBytes: routingF, gdnShare });
    selective = r.parts;
    selectiveFlops = r.flops;
  } else if (t.impl === 'eager') selective.attention = selectiveAttention;
  else if (plan.engine === 'fsdp2') {
    selective.gemm = fwd.gemm / 2;
    selective.fp8 = fwd.fp8 / 2;
    selective.elementwise = ew;
    selective.launch = (k.fwd * t.params.kernelGap) / 2;
    // The policy saves reduce_scatter_tensor but not all_gather_into_tensor, so with TP the two sequence-parallel
    // gathers (before QKV and before the MLP) run again in the recomputed forward (same `_save_list`).
    selective.comm = tpGathers;
  }
  return {
    fwd, bwd, selective, selectiveFlops, fwdTotal: partsTotal(fwd), bwdTotal: partsTotal(bwd), selectiveTotal: partsTotal(selective), tpSeconds, cpSeconds, epSeconds,
  };
}

/** A layer cost scaled by a layer count (n identical layers of a stage), for sums over a stage. */
export function scaledLayer(c: LayerCost, n: number, out: { fwd: Parts; bwd: Parts }): void {
  addParts(out.fwd, c.fwd, n);
  addParts(out.bwd, c.bwd, n);
}
