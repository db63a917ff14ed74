/**
 * Everything about a plan that does not depend on the pipeline stage, computed once per evaluation: step shape, the
 * work of one dense and one MoE layer, the effective FLOP rate and the links of every process group. The traceable
 * estimate, the simulator and the planner's fast path all build one and then evaluate stages with the same term functions.
 */
import timing from '../../data/timing.json';
import type { Plan, TrainingSpec } from '../plan/types';
import type { MicrobatchWork } from './microbatch';
import { linkSeconds, type GroupLink } from '../comm/links';
import { cpKvBytes, epAllToAllBytes, ppMessageBytes, tpMessageBytes } from '../comm/volumes';
import { activationBytesOf } from '../memory/dtypes';
import { layerActivationBytes, type ActivationShape } from '../memory/activations';
import { layerForwardFlops, lmHeadFlops, loraProjFlops, type FlopShape } from './flops';
import { chunksPerStage, microbatchesPerStep, peakFlops, posInt, tokensPerRank } from './shape';
import { layoutEntry, MAX_CONTEXTS, sameShape, type LayoutEntry, type LayoutLinks } from './layoutCache';

/** Forward FLOPs (weights, core attention) and stored activation bytes of one layer of a kind on one rank. */
export interface LayerUnit {
  readonly weights: number;
  readonly core: number;
  readonly act: number;
}

export interface TimeContext {
  readonly p: number;
  readonly m: number;
  readonly v: number;
  readonly tokens: number;
  /** peak(dtype) × achievableFlopsFraction, FLOP/s. */
  readonly flopRate: number;
  readonly hbm: number;
  readonly actBytes: number;
  readonly shape: FlopShape;
  readonly dense: LayerUnit;
  readonly moe: LayerUnit;
  /** LoRA adapter forward FLOPs per layer (0 without LoRA). */
  readonly loraFlops: number;
  readonly lmHeadFlops: number;
  /** One TP all-reduce (or RS + AG), one CP K/V exchange, one EP all-to-all, one pipeline send: seconds. */
  readonly tpOne: number;
  readonly cpOne: number;
  readonly epOne: number;
  readonly p2p: number;
  readonly cpSize: number;
  readonly ppLink: GroupLink;
}

/** Work of a layer kind the model does not have. */
const ZERO_UNIT: LayerUnit = { weights: 0, core: 0, act: 0 };

/** Effective matmul rate: peak(dtype) × achievableFlopsFraction from data/gpus.json (0.5 when missing or out of range). */
export function effectiveFlopRate(plan: Plan): number {
  const eff = plan.cluster.gpu.achievableFlopsFraction;
  return peakFlops(plan) * (eff > 0 && eff <= 1 ? eff : 0.5);
}

/** HBM bandwidth, bytes/s (1 TB/s when missing). */
export function hbmBandwidth(plan: Plan): number {
  const bw = plan.cluster.gpu.hbmBandwidth;
  return bw > 0 ? bw : 1e12;
}

/**
 * The activation shape of shared/memory/activations.ts for this plan, so the memory-bound traffic of a layer is computed
 * from the same Korthikanti et al. 2022 Table 2 terms as its activation memory.
 */
export function activationShape(plan: Plan): ActivationShape {
  const m = plan.model;
  const t = plan.training;
  const tp = posInt(plan.parallel.tp);
  const kv = posInt(m.kvHeads);
  const kvPerRank = kv % tp === 0 ? kv / tp : tp % kv === 0 ? 1 : Math.ceil(kv / tp);
  return {
    sLocal: posInt(t.seqLen) / posInt(plan.parallel.cp), b: posInt(t.microBatch), h: m.hiddenSize, heads: m.heads,
    kvHeadsEff: kvPerRank * tp, headDim: m.headDim, ffn: m.ffnSize, gated: m.gatedMlp, tp, sp: plan.parallel.sp && tp > 1,
    flash: t.flashAttention, actBytes: activationBytesOf(t.precision), sKeys: posInt(t.seqLen), dropout: m.dropout !== false,
  };
}

/** LoRA adapter forward FLOPs per layer over its target projections. */
export function loraLayerFlops(plan: Plan, tokens: number): number {
  const lora = plan.lora;
  if (!lora) return 0;
  const m = plan.model;
  const h = m.hiddenSize;
  const q = m.heads * m.headDim;
  const kv = m.kvHeads * m.headDim;
  let sum = 0;
  for (const name of lora.targets) {
    const dIn = name === 'o' ? q : name === 'down' ? m.ffnSize : h;
    const dOut = name === 'q' ? q : name === 'k' || name === 'v' ? kv : name === 'o' || name === 'down' ? h : m.ffnSize;
    sum += loraProjFlops(tokens, lora.rank, dIn, dOut);
  }
  return sum;
}

/** Work of one dense (moe = false) or MoE layer; stored activations from Korthikanti et al. 2022 Table 2 (no recomputation). */
function layerUnit(plan: Plan, x: FlopShape, a: ActivationShape, moe: boolean, loraF: number): LayerUnit {
  const m = plan.model;
  const f = layerForwardFlops(m, moe, x);
  const ffn = moe && m.moe ? m.moe.topK * m.moe.expertFfnSize + m.moe.sharedExperts * m.moe.sharedExpertFfnSize : m.ffnSize;
  return { weights: f.weights + loraF, core: f.core, act: layerActivationBytes(a, 'none', ffn) };
}

/** A step context with the micro-batch work of its stages, kept per layout core (shared/time/layoutCache.ts). */
export interface ContextSlot {
  readonly training: TrainingSpec;
  readonly ctx: TimeContext;
  /** MicrobatchWork by stage · 3 + recomputation kind, when recomputeLayers is unset (shared/time/stepTime.ts). */
  readonly works: (MicrobatchWork | undefined)[];
}

/** The cached context slot of a plan: built once per layout core and micro-batch shape (sameShape). */
export function contextSlot(plan: Plan, known?: LayoutEntry<ContextSlot, unknown>): ContextSlot {
  const entry = known ?? layoutEntry<ContextSlot>(plan);
  const list = entry.contexts;
  const tr = plan.training;
  for (let i = 0; i < list.length; i++) if (sameShape(list[i].training, tr)) return list[i];
  const slot: ContextSlot = { training: tr, ctx: buildTimeContext(plan, entry.links), works: [] };
  if (list.length >= MAX_CONTEXTS) list.length = 0;
  list.push(slot);
  return slot;
}

/** Builds the stage-independent context of a plan (cached, see contextSlot). */
export function timeContext(plan: Plan): TimeContext {
  return contextSlot(plan).ctx;
}

/** The context of a plan from its layout's links: step shape, layer work and one occurrence of each in-layer collective. */
function buildTimeContext(plan: Plan, l: LayoutLinks): TimeContext {
  const m = plan.model;
  const par = plan.parallel;
  const tr = plan.training;
  const tokens = tokensPerRank(plan);
  const shape: FlopShape = { tokens, seqLen: posInt(tr.seqLen), tp: posInt(par.tp), etp: posInt(par.etp) };
  const a = activationShape(plan);
  const actB = a.actBytes;
  const loraF = loraLayerFlops(plan, tokens);
  const cp = l.cpLink;
  const pp = l.p;
  return {
    p: pp, m: microbatchesPerStep(plan), v: chunksPerStage(plan), tokens,
    flopRate: effectiveFlopRate(plan), hbm: hbmBandwidth(plan), actBytes: actB, shape,
    dense: layerUnit(plan, shape, a, false, loraF), moe: m.moe ? layerUnit(plan, shape, a, true, loraF) : ZERO_UNIT,
    loraFlops: loraF, lmHeadFlops: lmHeadFlops(m, shape),
    // With SP each all-reduce becomes a reduce-scatter plus an all-gather: the same 2(n−1)/n·S on the wire.
    tpOne: shape.tp > 1 ? linkSeconds('all-reduce', tpMessageBytes(tokens, m.hiddenSize, actB), l.tpLink) : 0,
    cpOne: cp.size > 1 ? linkSeconds('all-gather', cpKvBytes(tokens * cp.size, m.kvHeads, m.headDim, actB, shape.tp), cp) : 0,
    epOne: m.moe && posInt(par.ep) > 1 ? linkSeconds('all-to-all', epAllToAllBytes(tokens, m.moe.topK, m.hiddenSize, actB), l.epLink) : 0,
    p2p: pp > 1 ? linkSeconds('send-recv', ppMessageBytes(tokens, m.hiddenSize, actB, par.sp ? shape.tp : 1), l.ppLink) : 0,
    cpSize: cp.size, ppLink: l.ppLink,
  };
}

/** The elementwise-traffic constants of data/timing.json (bytes moved per stored activation byte). */
export const TRAFFIC = { forward: timing.elementwiseTrafficForward, backward: timing.elementwiseTrafficBackward } as const;
