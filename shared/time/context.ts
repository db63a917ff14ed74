/**
 * Everything about a plan that does not depend on the pipeline stage, computed once per evaluation: step shape, the
 * work of one dense and one MoE layer, the effective FLOP rate and the links of every process group. The traceable
 * estimate, the simulator and the planner's fast path all build one and then evaluate stages with the same term functions.
 */
import timing from '../../data/timing.json';
import type { Plan } from '../plan/types';
import { axisLink, busBandwidth, linkSeconds, type GroupLink } from '../comm/links';
import { cpKvBytes, epAllToAllBytes, ppMessageBytes, tpMessageBytes } from '../comm/volumes';
import { activationBytesOf } from '../memory/dtypes';
import { layerActivationBytes, type ActivationShape } from '../memory/activations';
import { layerForwardFlops, lmHeadFlops, loraProjFlops, type FlopShape } from './flops';
import { chunksPerStage, microbatchesPerStep, peakFlops, posInt, tokensPerRank } from './shape';

/** Forward FLOPs (weights, core attention) and stored activation bytes of one layer of a kind on one rank. */
export interface LayerUnit {
  readonly weights: number;
  readonly core: number;
  readonly act: number;
}

export interface TimeContext {
  readonly plan: Plan;
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
  /** DP×CP size, ZeRO/FSDP shard group, HSDP replicas, expert-DP size and their links. */
  readonly dpSize: number;
  readonly shard: number;
  readonly replicas: number;
  readonly edp: number;
  readonly shardLink: GroupLink;
  readonly replicaLink: GroupLink;
  readonly edpLink: GroupLink;
  readonly ppLink: GroupLink;
  readonly pcieLink: GroupLink;
}

/** Work of a layer kind the model does not have. */
const ZERO_UNIT: LayerUnit = { weights: 0, core: 0, act: 0 };

/** Placeholder for a group of one rank (never used for traffic). */
const NO_LINK: GroupLink = { size: 1, tier: 'nvlink', busbw: 1, alpha: 0, perNode: 1 };

/** A pipeline hop: one GPU to one GPU, so one adapter's bandwidth when it crosses the network. */
function pointToPoint(l: GroupLink): GroupLink {
  return { size: l.size, tier: l.tier, busbw: l.busbw, alpha: l.alpha, perNode: 1 };
}

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

/** Builds the stage-independent context of a plan. */
export function timeContext(plan: Plan): TimeContext {
  const m = plan.model;
  const par = plan.parallel;
  const tr = plan.training;
  const tokens = tokensPerRank(plan);
  const shape: FlopShape = { tokens, seqLen: posInt(tr.seqLen), tp: posInt(par.tp), etp: posInt(par.etp) };
  const a = activationShape(plan);
  const actB = a.actBytes;
  const loraF = loraLayerFlops(plan, tokens);
  const cp = posInt(par.cp) > 1 ? axisLink(plan, 'cp') : NO_LINK;
  const dpSize = posInt(par.dp) * posInt(par.cp);
  // Plain DP (stage 0) reduces over all DP×CP ranks; ZeRO/FSDP shard over the shard group (HSDP: replicas of it).
  const shard = par.sharding.stage === 0 ? dpSize : Math.min(dpSize, posInt(par.sharding.shardGroupSize || dpSize));
  const replicas = Math.max(1, Math.floor(dpSize / shard));
  const edp = Math.max(1, Math.floor((dpSize * posInt(par.tp)) / (posInt(par.ep) * posInt(par.etp))));
  const pp = posInt(par.pp);
  const ppLink: GroupLink = pp > 1 ? pointToPoint(axisLink(plan, 'pp', 2)) : NO_LINK;
  const offload = par.sharding.offloadOptimizer !== 'none' || par.sharding.offloadParams !== 'none';
  const pcie: GroupLink = offload
    ? { size: 1, tier: 'pcie', busbw: busBandwidth(plan, 'pcie', 1), alpha: plan.cluster.gpu.intraNodeLatency, perNode: 1 } : NO_LINK;
  return {
    plan, p: pp, m: microbatchesPerStep(plan), v: chunksPerStage(plan), tokens,
    flopRate: effectiveFlopRate(plan), hbm: hbmBandwidth(plan), actBytes: actB, shape,
    dense: layerUnit(plan, shape, a, false, loraF), moe: m.moe ? layerUnit(plan, shape, a, true, loraF) : ZERO_UNIT,
    loraFlops: loraF, lmHeadFlops: lmHeadFlops(m, shape),
    // With SP each all-reduce becomes a reduce-scatter plus an all-gather: the same 2(n−1)/n·S on the wire.
    tpOne: shape.tp > 1 ? linkSeconds('all-reduce', tpMessageBytes(tokens, m.hiddenSize, actB), axisLink(plan, 'tp')) : 0,
    cpOne: cp.size > 1 ? linkSeconds('all-gather', cpKvBytes(tokens * cp.size, m.kvHeads, m.headDim, actB, shape.tp), cp) : 0,
    epOne: m.moe && posInt(par.ep) > 1 ? linkSeconds('all-to-all', epAllToAllBytes(tokens, m.moe.topK, m.hiddenSize, actB), axisLink(plan, 'ep')) : 0,
    p2p: pp > 1 ? linkSeconds('send-recv', ppMessageBytes(tokens, m.hiddenSize, actB, par.sp ? shape.tp : 1), ppLink) : 0,
    cpSize: cp.size, dpSize, shard, replicas, edp,
    shardLink: shard > 1 ? axisLink(plan, 'dp', shard) : NO_LINK,
    replicaLink: replicas > 1 ? axisLink(plan, 'dp', replicas) : NO_LINK,
    edpLink: m.moe && edp > 1 ? axisLink(plan, 'dp', edp) : NO_LINK,
    ppLink, pcieLink: pcie,
  };
}

/** The elementwise-traffic constants of data/timing.json (bytes moved per stored activation byte). */
export const TRAFFIC = { forward: timing.elementwiseTrafficForward, backward: timing.elementwiseTrafficBackward } as const;
