/**
 * Everything about a plan that does not depend on the pipeline stage, computed once per layout and micro-batch shape:
 * the kernel timers of the GPU (catalog curves or the cluster's measured profile), the cost of one dense and one MoE
 * layer, the LM head and loss, the embedding, and one pipeline send. The traceable estimate, the simulator and the
 * planner's fast path all build one (through a TimeCache) and evaluate stages with the same term functions.
 */
import type { Plan, TrainingSpec } from '../plan/types';
import type { GroupLink } from '../comm/links';
import { linkSeconds } from '../comm/links';
import type { LayoutLinks } from '../comm/layout';
import { ppMessageBytes } from '../comm/volumes';
import { deepspeedPipePartitioned } from './deepspeedPipe';
import { profileAttentionRate, profileGemmRate } from '../hardware/profile';
import { activationBytesOf } from '../memory/dtypes';
import { layerActivationBytes, type ActivationShape } from '../memory/activations';
import { MAX_CONTEXTS, TimeCache, sameKey, type LayoutEntry } from './cache';
import { attentionImpl, flashFraction } from './kernels/attention';
import { gemmSeconds, type GemmUnit } from './kernels/gemm';
import { autocastCasts, autocastWeightCastBytes, fusionLabel, fusionOf, ligerLabel, lossBytes } from './kernels/elementwise';
import { layerCost, type KernelTimers, type LayerCost, type LayerShape } from './layerCost';
import { layerForwardFlops, lmHeadFlops, loraProjFlops, type FlopShape } from './flops';
import type { MicrobatchWork } from './microbatch';
import { emptyParts, partsTotal, type Parts } from './parts';
import { chunksPerStage, microbatchesPerStep, peakFlops, posInt, tokensPerRank } from './shape';
import { kvHeadsPerRank, qHeadsPerRank } from '../model/rankParams';
import { embeddingWeightTrains, headWeightTrains, loraShapes } from '../model/params';
import { routedTokenFactor } from '../model/capacity';
import { moeHostSeconds } from './moeHost';
import { mtpOwnForwardFlops } from '../model/mtp';
import { withMtpModules } from './mtp';
import { ligerHeadParts } from './ligerLoss';
import { cceHeadParts } from './cceLoss';

/** Forward FLOPs (weights, core attention), stored activation bytes and kernel cost of one layer of a kind on one rank. */
export interface LayerUnit {
  readonly weights: number;
  readonly core: number;
  readonly act: number;
  readonly cost: LayerCost;
}

/** The LM head GEMM and the loss on the last stage, or the embedding on the first, per micro-batch. */
export interface EdgeUnit {
  readonly fwd: Parts;
  readonly bwd: Parts;
  readonly fwdTotal: number;
  readonly bwdTotal: number;
}

export interface TimeContext {
  readonly p: number;
  readonly m: number;
  readonly v: number;
  readonly tokens: number;
  readonly actBytes: number;
  readonly shape: FlopShape;
  readonly dense: LayerUnit;
  readonly moe: LayerUnit;
  /** LoRA adapter forward FLOPs per layer (0 without LoRA). */
  readonly loraFlops: number;
  readonly lmHeadFlops: number;
  readonly head: EdgeUnit;
  readonly embedding: EdgeUnit;
  /** One pipeline send of one micro-batch chunk, seconds. */
  readonly p2p: number;
  /**
   * DeepSpeed's pipeline engine under TP: the all-gather over the TP group that rebuilds one received activation or
   * gradient from its partitions, seconds (0 otherwise; shared/time/deepspeedPipe.ts deepspeedPipePartitioned).
   */
  readonly p2pGather: number;
  readonly cpSize: number;
  readonly ppLink: GroupLink;
  /** Seconds to move bytes through HBM at the memory-bound rate (optimizer, elementwise). */
  readonly hbmSeconds: (bytes: number) => number;
  /** Where the kernel curves came from: the catalog or the cluster's measured profile. */
  readonly provenance: readonly string[];
}

/** Work of a layer kind the model does not have. */
const NONE: LayerCost = {
  fwd: emptyParts(), bwd: emptyParts(), selective: emptyParts(), selectiveFlops: 0, fwdTotal: 0, bwdTotal: 0, selectiveTotal: 0, tpSeconds: 0, cpSeconds: 0, epSeconds: 0,
};
const ZERO_UNIT: LayerUnit = { weights: 0, core: 0, act: 0, cost: NONE };

/**
 * The activation shape of shared/memory/activations.ts for this plan (Korthikanti et al. 2022 Table 2 terms), for the
 * activation bytes the simulator's memory timeline needs.
 */
export function activationShape(plan: Plan): ActivationShape {
  const m = plan.model;
  const t = plan.training;
  const tp = posInt(plan.parallel.tp);
  const kv = posInt(m.kvHeads);
  const kvPerRank = kvHeadsPerRank(kv, tp);
  return {
    sLocal: posInt(t.seqLen) / posInt(plan.parallel.cp), b: posInt(t.microBatch), h: m.hiddenSize, heads: m.heads,
    kvHeadsEff: kvPerRank * tp, headDim: m.headDim, ffn: m.ffnSize, gated: m.gatedMlp, tp, sp: plan.parallel.sp && tp > 1,
    flash: t.flashAttention, actBytes: activationBytesOf(t.precision), sKeys: posInt(t.seqLen), dropout: m.dropout !== false,
    ...(m.mla ? { mla: m.mla } : {}),
  };
}

/** LoRA adapter forward FLOPs per layer over its target projections. */
export function loraLayerFlops(plan: Plan, tokens: number): number {
  const lora = plan.lora;
  if (!lora) return 0;
  const shapes = loraShapes(plan.model);
  let sum = 0;
  for (const name of lora.targets) {
    for (const [dIn, dOut] of shapes[name] ?? []) sum += loraProjFlops(tokens, lora.rank, dIn, dOut);
  }
  return sum;
}

/**
 * The GPU's kernel timers: GEMMs on the shape curve at peak × MAMF fraction × sustained clock × gemmScale (or the
 * profile's measured rate), fused attention on its published curve × attentionScale (or measured), memory-bound
 * bytes at HBM × memoryFraction (or the measured copy bandwidth).
 */
export function kernelTimers(plan: Plan, params: TimeCache['params']): { timers: KernelTimers; provenance: string[] } {
  const g = plan.cluster.gpu;
  const prof = plan.cluster.profile;
  const clock = g.clockFraction && g.clockFraction > 0 ? g.clockFraction : 1;
  const peak16 = peakFlops({ ...plan, training: { ...plan.training, precision: plan.training.precision === 'fp8-mixed' ? 'bf16-mixed' : plan.training.precision } }) * clock;
  const peak8 = (g.peakFlops.fp8 ?? 0) * clock;
  const frac = g.achievableFlopsFraction > 0 && g.achievableFlopsFraction <= 1 ? g.achievableFlopsFraction : 0.7;
  // A cluster calibration's kernel speed divides every kernel's time (launch gaps are host time: not scaled).
  const speed = g.kernelSpeed !== undefined && g.kernelSpeed > 0 && Number.isFinite(g.kernelSpeed) ? g.kernelSpeed : 1;
  const hbmRaw = g.hbmBandwidth > 0 ? g.hbmBandwidth : 1e12;
  const sms = g.sms && g.sms > 0 ? g.sms : 108;
  const inBytes = plan.training.precision === 'fp32' ? 4 : 2;
  const u16: GemmUnit = { rate: peak16 * frac * params.gemmScale, sms, hbm: hbmRaw, inBytes };
  const fp8 = plan.training.precision === 'fp8-mixed' && peak8 > 0;
  const u8: GemmUnit = { rate: peak8 * (g.fp8GemmFraction ?? frac) * params.gemmScale, sms, hbm: hbmRaw, inBytes: 1 };
  const hbmRate = prof && prof.hbmBytesPerSecond > 0 ? prof.hbmBytesPerSecond : hbmRaw * params.memoryFraction;
  const fusion = fusionOf(plan);
  const arch = g.arch ?? 'hopper';
  const impl = attentionImpl(plan);
  const hd = plan.model.headDim;
  const measured16 = prof?.gemm.some((x) => x.dtype === 'bf16');
  const measured8 = prof?.gemm.some((x) => x.dtype === 'fp8');
  const measuredAttn = prof && prof.attention.length > 0;
  const timers: KernelTimers = {
    gemm16: measured16 && prof
      ? (m, n, k) => (2 * m * n * k) / ((profileGemmRate(prof, 'bf16', m, n, k) ?? u16.rate) * params.gemmScale * speed)
      : (m, n, k) => gemmSeconds(m, n, k, u16) / speed,
    gemm8: measured8 && prof
      ? (m, n, k) => (2 * m * n * k) / ((profileGemmRate(prof, 'fp8', m, n, k) ?? u8.rate) * params.gemmScale * speed)
      : (m, n, k) => gemmSeconds(m, n, k, u8) / speed,
    attention: (pass, flops, seq, causal) => {
      const measuredRate = measuredAttn && prof ? profileAttentionRate(prof, pass, seq, hd, causal) : undefined;
      if (measuredRate) return flops / (measuredRate * params.attentionScale * speed);
      if (impl === 'eager') return 0;
      return flops / (peak16 * flashFraction(arch, impl, pass, seq, hd, causal) * params.attentionScale * speed);
    },
    hbm: (bytes) => bytes / (hbmRate * speed),
    impl, fusion, fp8, params,
  };
  const src = prof ? `measured profile ${prof.source} (${prof.device}, ${prof.createdAt})` : '';
  const provenance = [
    // The fitted factors stay on measured rates: they are the in-training-versus-isolated-benchmark ratio of the
    // published runs, and a profile's sweep is an isolated benchmark too.
    measured16 ? `GEMM: ${src} × fitted in-training factor ${params.gemmScale.toFixed(3)}` : `GEMM: OpenXLA cuBLAS shape curve × ${g.name} MAMF ${frac} × clock ${clock} × fitted ${params.gemmScale.toFixed(3)}`,
    measuredAttn ? `attention: ${src} × fitted in-training factor ${params.attentionScale.toFixed(3)}` : impl === 'eager' ? 'attention: eager (two batched GEMMs and a memory-bound softmax)' : `attention: ${impl} curve (${arch}, Shah et al. 2024 / Dao 2023) × fitted ${params.attentionScale.toFixed(3)}`,
    `${prof && prof.hbmBytesPerSecond > 0 ? `memory-bound: ${src}` : `memory-bound: HBM ${(hbmRaw / 1e12).toFixed(2)} TB/s × fitted ${params.memoryFraction.toFixed(3)}`}; passes: ${fusionLabel(fusion, plan.training.normUpcast === true)}${ligerLabel(plan, fusion)}`,
    // No sweep measures host-side launch overhead: the gap stays the fitted constant with or without a profile.
    `launch: kernels per layer × fitted gap ${(params.kernelGap * 1e6).toFixed(2)} µs`,
  ];
  const host = plan.model.moe && plan.model.moe.experts > 1 ? moeHostSeconds(plan, params) : 0;
  if (host > 0) provenance.push(`host: ${(host * 1e3).toFixed(2)} ms per MoE layer forward and micro-batch, fitted on Megatron-Bridge rows (data/time/moeHost.json)`);
  if (prof?.collectives.length) provenance.push(`collectives: ${src} where its group layouts match`);
  if (speed !== 1) provenance.push(`kernels: ×${speed.toFixed(3)} speed measured on this cluster (${plan.sources['cluster.gpu.kernelSpeed']?.detail ?? 'shardlens.calibration'})`);
  return { timers, provenance };
}

/** The rank's widths of a layer (TP-split heads and FFN, KV heads replicated when tp exceeds them). */
function layerShape(plan: Plan, tokens: number, moe: boolean): LayerShape {
  const m = plan.model;
  const par = plan.parallel;
  const tp = posInt(par.tp);
  const kv = posInt(m.kvHeads);
  const kvPerRank = kvHeadsPerRank(kv, tp);
  const base = {
    tokens, normTokens: par.sp && tp > 1 ? tokens / tp : tokens, qHeads: qHeadsPerRank(m.heads, tp), kvHeads: kvPerRank,
    ffn: m.ffnSize / tp, b: posInt(plan.training.microBatch), seq: posInt(plan.training.seqLen), cp: posInt(par.cp), tp,
    actBytes: activationBytesOf(plan.training.precision),
  };
  if (!moe || !m.moe) return base;
  const e = m.moe;
  const ep = posInt(par.ep);
  const experts = Math.max(1, e.experts / ep);
  return {
    ...base,
    moe: {
      // The rank's sequence shard is routed (normTokens); with expert TP its ETP group gathers etp shards and each rank
      // runs 1/etp of every expert's FFN on them.
      // Under drop and pad every expert runs its capacity, c times the balanced share (routedTokenFactor).
      experts, tokensPerExpert: (base.normTokens * posInt(par.etp) * e.topK * routedTokenFactor(e) * ep) / Math.max(1, e.experts), expertFfn: e.expertFfnSize / posInt(par.etp),
      sharedFfn: (e.sharedExperts * e.sharedExpertFfnSize) / tp, routerOut: e.experts,
    },
  };
}

/** Work of one dense (moe = false) or MoE layer. */
function layerUnit(plan: Plan, x: FlopShape, a: ActivationShape, moe: boolean, loraF: number, t: KernelTimers, l: LayoutLinks, m: number): LayerUnit {
  const mod = plan.model;
  const f = layerForwardFlops(mod, moe, x);
  const ffn = moe && mod.moe ? mod.moe.topK * routedTokenFactor(mod.moe) * mod.moe.expertFfnSize + mod.moe.sharedExperts * mod.moe.sharedExpertFfnSize : mod.ffnSize;
  const cost = layerCost(plan, layerShape(plan, x.tokens, moe), t, { tp: l.tpLink, cp: l.cpLink, ep: l.epLink }, m);
  return { weights: f.weights + loraF, core: f.core, act: layerActivationBytes(a, 'none', ffn), cost };
}

/**
 * The LM head (bf16 even under FP8: torchao and TE leave the output layer in 16 bits) and the loss, per micro-batch.
 * A frozen head (LoRA that does not train it) gets no weight gradient: autograd computes only its input gradient.
 * Liger's fused linear cross-entropy runs all of it in the forward, chunk by chunk (shared/time/ligerLoss.ts); Cut
 * Cross-Entropy never writes the logits and forms them again in the backward (shared/time/cceLoss.ts).
 */
function headUnit(plan: Plan, tokens: number, t: KernelTimers): EdgeUnit {
  const m = plan.model;
  const tp = posInt(plan.parallel.tp);
  const V = m.vocabSize / tp;
  const h = m.hiddenSize;
  const fusedLoss = plan.training.lossFusion;
  if (fusedLoss === 'liger' || fusedLoss === 'cce') {
    const { fwd, bwd } = (fusedLoss === 'liger' ? ligerHeadParts : cceHeadParts)(plan, tokens, V, h, t);
    return { fwd, bwd, fwdTotal: partsTotal(fwd), bwdTotal: partsTotal(bwd) };
  }
  const fwd = emptyParts();
  const bwd = emptyParts();
  fwd.gemm = t.gemm16(tokens, V, h);
  bwd.gemm = t.gemm16(tokens, h, V) + (headWeightTrains(m, plan.lora) ? t.gemm16(V, h, tokens) : 0);
  const loss = lossBytes(tokens, V, t.fusion);
  fwd.elementwise = t.hbm(loss.fwd);
  bwd.elementwise = t.hbm(loss.bwd);
  // Under autocast an fp32 head weight is cast to 16 bits at each forward and its gradient back (elementwise.ts).
  const casts = autocastCasts(plan, headWeightTrains(m, plan.lora));
  if (casts.fwd) fwd.elementwise += t.hbm(autocastWeightCastBytes(V * h));
  if (casts.bwd) bwd.elementwise += t.hbm(autocastWeightCastBytes(V * h));
  fwd.launch = 6 * t.params.kernelGap;
  bwd.launch = 8 * t.params.kernelGap;
  return { fwd, bwd, fwdTotal: partsTotal(fwd), bwdTotal: partsTotal(bwd) };
}

/**
 * The embedding lookup and its gradient scatter (fp32 accumulation), per micro-batch on the first stage. A frozen
 * embedding (LoRA that does not train it) has no backward: its input is token ids.
 */
function embeddingUnit(plan: Plan, tokens: number, t: KernelTimers): EdgeUnit {
  const h = plan.model.hiddenSize;
  const B = activationBytesOf(plan.training.precision);
  const trains = embeddingWeightTrains(plan.model, plan.lora);
  const fwd = emptyParts();
  const bwd = emptyParts();
  fwd.elementwise = t.hbm(2 * tokens * h * B);
  bwd.elementwise = trains ? t.hbm(tokens * h * (B + 8)) : 0;
  fwd.launch = 2 * t.params.kernelGap;
  bwd.launch = trains ? 3 * t.params.kernelGap : 0;
  return { fwd, bwd, fwdTotal: partsTotal(fwd), bwdTotal: partsTotal(bwd) };
}

/** A step context with the micro-batch work of its stages, kept per layout core and micro-batch shape. */
export interface ContextSlot {
  readonly plan: Plan;
  readonly ctx: TimeContext;
  /** MicrobatchWork by stage · 3 + recomputation kind, when recomputeLayers is unset (shared/time/stepTime.ts). */
  readonly works: (MicrobatchWork | undefined)[];
}

/** The cached context slot of a plan: built once per layout core and micro-batch shape ('shape' key). */
export function contextSlot(plan: Plan, cache: TimeCache, known?: LayoutEntry<ContextSlot, unknown>): ContextSlot {
  const entry = known ?? cache.entry<ContextSlot>(plan);
  const list = entry.contexts;
  // The list belongs to this layout's core (entries share it only when sameKey('core') holds), so the shape decides;
  // the most recent slot first (the planner evaluates the recomputation choices of one micro batch in a row).
  const n = list.length;
  if (n && sameKey('shape', list[n - 1].plan, plan)) return list[n - 1];
  for (let i = n - 2; i >= 0; i--) {
    const slot = list[i];
    if (sameKey('shape', slot.plan, plan)) {
      list[i] = list[n - 1];
      list[n - 1] = slot;
      return slot;
    }
  }
  const slot: ContextSlot = { plan, ctx: buildTimeContext(plan, entry.links, cache), works: [] };
  if (list.length >= MAX_CONTEXTS) list.length = 0;
  list.push(slot);
  return slot;
}

/** The stage-independent context of a plan (through the cache when one is given). */
export function timeContext(plan: Plan, cache: TimeCache = new TimeCache()): TimeContext {
  return contextSlot(plan, cache).ctx;
}

/** The parts of a context that read neither the pipeline nor the data-parallel layout (memoised by the cache). */
export interface LayerCosts {
  readonly dense: LayerUnit;
  readonly moe: LayerUnit;
  readonly head: EdgeUnit;
  readonly embedding: EdgeUnit;
  readonly loraFlops: number;
  readonly hbmSeconds: (bytes: number) => number;
  readonly provenance: readonly string[];
}

/** Computes the layer costs of a plan (see LayerCosts). */
export function computeLayerCosts(plan: Plan, l: LayoutLinks, params: TimeCache['params']): LayerCosts {
  const m = plan.model;
  const tr: TrainingSpec = plan.training;
  const tokens = tokensPerRank(plan);
  const shape: FlopShape = { tokens, seqLen: posInt(tr.seqLen), tp: posInt(plan.parallel.tp), etp: posInt(plan.parallel.etp), sp: plan.parallel.sp && posInt(plan.parallel.tp) > 1 };
  const a = activationShape(plan);
  const loraF = loraLayerFlops(plan, tokens);
  const mb = microbatchesPerStep(plan);
  const { timers, provenance } = kernelTimers(plan, params);
  return {
    dense: layerUnit(plan, shape, a, false, loraF, timers, l, mb),
    moe: m.moe ? layerUnit(plan, shape, a, true, loraF, timers, l, mb) : ZERO_UNIT,
    head: withMtpModules(plan, headUnit(plan, tokens, timers), tokens, timers, l.tpLink), embedding: embeddingUnit(plan, tokens, timers),
    loraFlops: loraF, hbmSeconds: timers.hbm, provenance,
  };
}

/** Builds the stage-independent context of a plan from its layout's links and its layer costs (memoised by sameKey('layer')). */
function buildTimeContext(plan: Plan, l: LayoutLinks, cache: TimeCache): TimeContext {
  const m = plan.model;
  const par = plan.parallel;
  const tr: TrainingSpec = plan.training;
  const tokens = tokensPerRank(plan);
  const shape: FlopShape = { tokens, seqLen: posInt(tr.seqLen), tp: posInt(par.tp), etp: posInt(par.etp), sp: par.sp && posInt(par.tp) > 1 };
  const mb = microbatchesPerStep(plan);
  const c = cache.layerCosts(plan, () => computeLayerCosts(plan, l, cache.params));
  const pp = l.p;
  const actBytes = activationBytesOf(tr.precision);
  const partitioned = deepspeedPipePartitioned(plan);
  return {
    p: pp, m: mb, v: chunksPerStage(plan), tokens, actBytes, shape,
    dense: c.dense, moe: c.moe, loraFlops: c.loraFlops, lmHeadFlops: lmHeadFlops(m, shape) + mtpOwnForwardFlops(m, tokens, shape.tp), head: c.head, embedding: c.embedding,
    // Megatron with SP sends the sequence shard; DeepSpeed's engine partitions what it sends over TP (pipe_partitioned).
    p2p: pp > 1 ? linkSeconds('send-recv', ppMessageBytes(tokens, m.hiddenSize, actBytes, par.sp || partitioned ? shape.tp : 1), l.ppLink) : 0,
    p2pGather: pp > 1 && partitioned ? linkSeconds('all-gather', ppMessageBytes(tokens, m.hiddenSize, actBytes, 1), l.tpLink) : 0,
    cpSize: l.cpLink.size, ppLink: l.ppLink, hbmSeconds: c.hbmSeconds, provenance: c.provenance,
  };
}
