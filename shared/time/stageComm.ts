/**
 * Every collective one rank of one pipeline stage takes part in during an optimizer step, with its volume, link, time
 * and the part of it that compute does not hide. The in-layer TP/EP/CP collectives are timed with the layer's kernels
 * (shared/time/layerCost.ts) and listed here; data-parallel and ZeRO/FSDP traffic, pipeline sends and offload copies are
 * composed here from the volumes and links of shared/comm/.
 */
import type { EpDispatcher, Plan } from '../plan/types';
import { algorithmFor, kindBusBandwidth, linkSeconds } from '../comm/links';
import { dispatchPass, moeTokensPerRank } from '../comm/dispatch';
import type { LayoutLinks } from '../comm/layout';
import { moeLayersIn } from '../model/params';
import { firstLayerOfStage, stageLayerCount, type StageParams } from '../comm/stageParams';
import type { StageTraffic } from '../comm/stageTraffic';
import type { Collective, CollectiveKind } from '../comm/types';
import * as V from '../comm/volumes';
import { TimeCache } from './cache';
import { timeContext, type TimeContext } from './context';
import { exposedBehind } from './layerCost';
import { microbatchWork, recomputedLayers, type MicrobatchWork } from './microbatch';
import type { TimeParams } from './params';
import { activationBytes, posInt, tokensPerRank } from './shape';
import { kvHeadsPerRank, qHeadsPerRank } from '../model/rankParams';
import { qkHeadDim, vHeadDim } from '../model/mla';
import { pipelineHops } from './stepTime';
import { syncSchedule } from './syncSchedule';
import { stepEntries, type Entry, type Exposure } from './stepEntries';
import { ringKvHeads, torchRing, torchRingGatherBytes, torchRingGradBytes } from './kernels/ring';
import { deepspeedPipeline, deepspeedPipelineTransfers } from './deepspeedPipe';
import { gradSyncExposed, hybridReduceExposed, interleavedSyncHidden, perLayerExposed } from './syncExposure';

export { firstBucketFraction } from '../comm/stageTraffic';

/** Step-level communication of one stage, as the schedule needs it. */
export interface StageComm {
  readonly collectives: readonly Collective[];
  /** Gradient synchronisation that starts in the last backward (DDP/ZeRO-1 all-reduce or reduce-scatter), seconds. */
  readonly gradSync: number;
  /** Part of the last backward the gradient sync can hide behind, seconds (0 without overlap). */
  readonly gradSyncWindow: number;
  /**
   * Gradient sync hidden in an interleaved pipeline's cooldown, each chunk's reduce launched after its own last backward
   * (Megatron with overlapped grad reduce and virtual stages, interleavedSyncHidden), seconds; 0 otherwise.
   */
  readonly gradSyncCooldown: number;
  /** Exposed seconds added to every micro-batch's forward and backward (ZeRO-2/3 per-micro-batch traffic). */
  readonly perMicrobatchForward: number;
  readonly perMicrobatchBackward: number;
  /** Seconds after the optimizer step (ZeRO-1/2 parameter all-gather, offload copies), exposed. */
  readonly postStep: number;
  /** One pipeline send of one micro-batch chunk to the next stage, seconds. */
  readonly p2p: number;
  /** The stage's per-rank parameters the volumes were computed from. */
  readonly params: StageParams;
}

/** DeepEP's and HybridEP's traffic: a token once per remote node, forwarded inside the node. */
const NODE_ONCE = 'each token once per remote node holding one of its k experts over RDMA (b·(s/cp)·h·B per node), forwarded over NVLink';

/** How each MoE dispatcher's traffic is shown (shared/comm/dispatch.ts times it). */
const EP_DISPATCH: Readonly<Record<EpDispatcher, { label: string; kind: CollectiveKind; formula: string; citation: string }>> = {
  alltoall: {
    label: 'EP all-to-all (dispatch + combine)', kind: 'all-to-all', formula: 'NCCL all-to-all of b·(s/cp)·k·h·B, across nodes at the adapter bound',
    citation: 'Lepikhin et al. 2020 (GShard); Megatron-LM MoE token dispatcher',
  },
  allgather: {
    label: 'EP all-gather + reduce-scatter (tokens)', kind: 'all-gather',
    formula: 'all-gather of every rank\'s b·(s/cp)·h·B tokens (ep·T·h·B gathered) and a reduce-scatter of the outputs',
    citation: 'Megatron-LM megatron/core/transformer/moe/token_dispatcher.py (MoEAllGatherTokenDispatcher)',
  },
  deepep: {
    label: 'EP dispatch + combine (DeepEP)', kind: 'all-to-all',
    formula: NODE_ONCE,
    citation: 'deepseek-ai/DeepEP README (normal kernels, NVLink and RDMA forwarding); Megatron-LM flex dispatcher',
  },
  hybridep: {
    label: 'EP dispatch + combine (HybridEP)', kind: 'all-to-all',
    formula: NODE_ONCE,
    citation: 'NVIDIA HybridEP (DeepEP hybrid-ep branch); Megatron-LM flex dispatcher --moe-flex-dispatcher-backend hybridep',
  },
};

/** Builds a Collective from an entry; seconds = count × one occurrence unless given. */
function collective(e: Entry): Collective {
  const one = linkSeconds(e.kind, e.bytes, e.link);
  const seconds = e.seconds ?? e.count * one;
  return {
    id: e.id, label: e.label, kind: e.kind, group: e.group, groupSize: e.link.size, perNode: e.link.perNode, stage: e.stage,
    bytesPerOccurrence: e.bytes, countPerStep: e.count, bytesPerRank: e.bytes * e.count,
    algorithm: algorithmFor(e.kind, e.link.tier, e.link.size, e.link.perNode), tier: e.link.tier, busBandwidth: kindBusBandwidth(e.kind, e.link),
    seconds, overlapped: e.overlapped, exposedSeconds: Math.min(seconds, Math.max(0, e.exposed)), formula: e.formula, citation: e.citation,
  };
}

/**
 * In-layer TP, EP and CP collectives of a stage (timed with the layer kernels). Their exposed time is the micro-batch
 * work's exposed in-layer communication, split between them in proportion to their seconds.
 */
function inLayerEntries(plan: Plan, stage: number, w: MicrobatchWork, m: number, l: LayoutLinks): Entry[] {
  const out: Entry[] = [];
  const mod = plan.model;
  const tr = plan.training;
  const n = stageLayerCount(plan, stage);
  const start = firstLayerOfStage(plan, stage);
  const nR = recomputedLayers(plan, n);
  const tokens = tokensPerRank(plan);
  const actB = activationBytes(tr.precision);
  const total = w.tpSeconds + w.epSeconds + w.cpSeconds;
  const share = (x: number) => (total > 0 ? (w.exposedCommSeconds * x) / total : 0) * m;
  if (l.tpLink.size > 1 && n > 0) {
    const per = n * 4 + nR * 2;
    const sp = plan.parallel.sp;
    out.push({
      id: 'tp-activations', label: sp ? 'TP all-gather + reduce-scatter (SP)' : 'TP all-reduce', kind: sp ? 'all-gather' : 'all-reduce',
      group: 'tp', link: l.tpLink, stage, bytes: V.tpMessageBytes(tokens, mod.hiddenSize, actB), count: per * m * (sp ? 2 : 1),
      overlapped: plan.parallel.tpCommOverlap, exposed: share(w.tpSeconds), seconds: w.tpSeconds * m,
      formula: (sp ? 'AG + RS of b·(s/cp)·h·B at their own bus bandwidth (Transformer Engine overlap: peer-to-peer at the link rate)' : 'all-reduce of b·(s/cp)·h·B') + ', 2 fwd + 2 bwd (+2 recompute) per layer per micro-batch'
        + (plan.parallel.tpCommOverlap ? ', each hidden behind the GEMM it feeds: max(0, c − g) + overlapCost·min(c, g)' : ', exposed'),
      citation: 'Narayanan et al. 2021 §3.2; Korthikanti et al. 2022 §4.2.2 (SP); Wang et al. 2022 (overlap with decomposed GEMMs)',
    });
  }
  const moeLayers = moeLayersIn(mod, start, start + n);
  if (l.epLink.size > 1 && moeLayers > 0 && mod.moe) {
    const dispatcher = plan.parallel.epDispatcher ?? 'alltoall';
    const how = EP_DISPATCH[dispatcher];
    out.push({
      id: 'ep-all-to-all', label: how.label, kind: how.kind, group: 'ep', link: l.epLink, stage,
      bytes: dispatchPass(plan, dispatcher, moeTokensPerRank(plan, tokens), mod.moe, mod.hiddenSize, actB, l.epLink).bytes,
      count: (moeLayers * 4 + Math.min(moeLayers, nR) * 2) * m,
      overlapped: !!plan.parallel.epCommOverlap, exposed: share(w.epSeconds), seconds: w.epSeconds * m,
      formula: `${how.formula}, dispatch + combine in forward and backward per MoE layer per micro-batch`
        + (plan.parallel.epCommOverlap ? ', hidden behind the merged micro-batch\'s compute: max(0, c − g) + overlapCost·min(c, g)' : ', exposed'),
      citation: how.citation,
    });
  }
  if (l.cpLink.size > 1 && n > 0 && torchRing(plan) && plan.training.flashAttention) {
    // PyTorch's ring: one K/V all-gather per layer and pass (forward, recomputed forward, backward) behind the first
    // block, and cp − 1 fp32 dK/dV rotations per layer in backward (shared/time/kernels/ring.ts).
    const cp = l.cpLink.size;
    const tp = posInt(plan.parallel.tp);
    const kv = (tokens * ringKvHeads(plan, qHeadsPerRank(mod.heads, tp), kvHeadsPerRank(posInt(mod.kvHeads), tp)) * (qkHeadDim(mod) + vHeadDim(mod))) / 2;
    const gBytes = torchRingGatherBytes(cp, kv, actB), dBytes = torchRingGradBytes(kv);
    const gCount = (2 * n + nR) * m, dCount = n * (cp - 1) * m;
    const gSec = linkSeconds('all-gather', gBytes, l.cpLink) * gCount, dSec = linkSeconds('send-recv', dBytes, l.cpLink) * dCount;
    const split = (x: number) => (gSec + dSec > 0 ? (share(w.cpSeconds) * x) / (gSec + dSec) : 0);
    out.push({
      id: 'cp-kv-all-gather', label: 'CP K/V all-gather (PyTorch ring)', kind: 'all-gather', group: 'cp', link: l.cpLink, stage,
      bytes: gBytes, count: gCount, overlapped: true, exposed: split(gSec), seconds: gSec,
      formula: 'cp·2·b·(s/cp)·heads·d_h·B per layer and pass (torchtitan repeats K/V to the a/t query heads), hidden only behind the first (causal) block: max(0, c − a₀) + overlapCost·min(c, a₀)',
      citation: 'PyTorch torch/distributed/tensor/experimental/_attention.py (_AllGatherRotater); torchtitan context_parallel_rotate_method "allgather"',
    });
    out.push({
      id: 'cp-dkv-rotation', label: 'CP dK/dV rotation (PyTorch ring)', kind: 'send-recv', group: 'cp', link: l.cpLink, stage,
      bytes: dBytes, count: dCount, overlapped: true, exposed: split(dSec), seconds: dSec,
      formula: 'cp − 1 backward steps of 2·b·(s/cp)·heads·d_h·4 (fp32 accumulators) per layer, each behind one attention step',
      citation: 'PyTorch torch/distributed/tensor/experimental/_attention.py (_templated_ring_attention_backward, dkv_rotater)',
    });
  } else if (l.cpLink.size > 1 && n > 0) {
    out.push({
      id: 'cp-kv-exchange', label: 'CP ring K/V exchange', kind: 'send-recv', group: 'cp', link: l.cpLink, stage,
      bytes: tokens * kvHeadsPerRank(posInt(mod.kvHeads), posInt(plan.parallel.tp)) * (qkHeadDim(mod) + vHeadDim(mod)) * actB,
      count: (n * 3 + nR) * (l.cpLink.size - 1) * m, overlapped: true, exposed: share(w.cpSeconds), seconds: w.cpSeconds * m,
      formula: 'cp − 1 ring steps of this rank\'s K and V (2·b·(s/cp)·g·d_h·B/t; dK and dV too in backward) per layer, each behind one attention step: max(0, c − a/cp) + overlapCost·min(c, a/cp)',
      citation: 'Liu et al. 2023 (Ring Attention); Megatron-LM context parallelism',
    });
  }
  return out;
}

const NONE_C: Collective[] = [];

/** The numbers of StageComm plus the exposures the listing needs, as one reusable record (the planner's scratch). */
export interface StageCommNumbers {
  collectives: readonly Collective[];
  gradSync: number;
  gradSyncWindow: number;
  gradSyncCooldown: number;
  perMicrobatchForward: number;
  perMicrobatchBackward: number;
  postStep: number;
  p2p: number;
  params: StageParams;
  /** Exposed seconds per micro-batch of the ZeRO-2 reduce-scatter and ZeRO-3 gathers; offload fetches per step. */
  rsExp: number;
  /** Exposed seconds per micro-batch that FSDP's HSDP replica all-reduce adds when every micro-batch reduces. */
  hsdpExp: number;
  /** Exposed seconds per micro-batch of a replicated stage's all-reduce when every micro-batch reduces (torch replicate). */
  dpExp: number;
  agExp: number;
  offExp: number;
}

/** A fresh record for stageCommInto (reused by the planner's fast path across calls). */
export function newStageCommNumbers(): StageCommNumbers {
  return {
    collectives: NONE_C, gradSync: 0, gradSyncWindow: 0, gradSyncCooldown: 0, perMicrobatchForward: 0, perMicrobatchBackward: 0, postStep: 0, p2p: 0,
    params: { dense: 0, expert: 0, largestLayer: 0, layerDense: 0, trainable: 0 }, rsExp: 0, hsdpExp: 0, dpExp: 0, agExp: 0, offExp: 0,
  };
}

/**
 * The numbers of stageComm written into `out` without allocating (the planner's fast path); the collectives are not
 * listed (`out.collectives` is left empty). `k` is the stage's cached step-level traffic.
 */
export function stageCommInto(plan: Plan, stage: number, ctx: TimeContext, w: MicrobatchWork, k: StageTraffic, params: TimeParams, out: StageCommNumbers): StageCommNumbers {
  const sh = plan.parallel.sharding;
  const m = ctx.m;
  const zero = sh.stage;
  const overlap = sh.overlapComm;
  const fBucket = k.firstBucket;
  const cost = params.overlapCost;
  // Every micro-batch or once per step; torch pipelining with FSDP2 reduces after the stage's last backward.
  const sched = syncSchedule(plan, ctx.p, k);
  const pipelined = sched.pipelined;
  // The sync hides behind the last backward pass: one chunk of the stage (1/v of it) after the first bucket fills.
  const window = overlap && !pipelined ? ((1 - fBucket) * w.backward) / ctx.v : 0;
  // Sums in the order of the collectives' listing (stepEntries).
  let gradSync = 0;
  let postStep = 0;
  let perF = 0, perB = 0, rsExp = 0, hsdpExp = 0, dpExp = 0, agExp = 0, offExp = 0;
  // A replicated stage all-reduces behind its last backward, or behind every backward (torch replicate).
  if (sched.replicaEveryMicrobatch) {
    dpExp = gradSyncExposed(k.dpSeconds, window, cost);
    perB += dpExp;
  } else gradSync += k.dpSeconds;
  if (k.hasDense && zero >= 1) {
    if (sched.reduceEveryMicrobatch) {
      const pass = (1 - fBucket) * w.backward;
      rsExp = perLayerExposed(k.rsLayerSeconds, k.layers, pass, overlap, cost);
      // FSDP's hybrid sharding all-reduces each group's reduced shard across the replicas right after its
      // reduce-scatter, on its own stream (FSDP2 foreach_reduce, FSDP1 _reduce_grad): in every micro-batch too.
      if (sched.hybridEveryMicrobatch) hsdpExp = hybridReduceExposed(k.rsLayerSeconds, k.hsdpLayerSeconds, k.layers, pass, overlap, cost) - rsExp;
      perB += rsExp + hsdpExp;
    } else gradSync += k.rsSeconds; // ZeRO-1, FSDP under no_sync or a pipelined FSDP2 stage: once per step.
    const agOne = k.agSeconds;
    if (V.gatherStage(sh.style, zero) <= 2) {
      // Megatron's --overlap-param-gather hides the gather behind the next step's forward; it still costs overlapCost.
      postStep += sh.style === 'megatron-distopt' && overlap ? exposedBehind(agOne, w.forward * m, true, cost) : agOne;
    } else if (sched.gatherOncePerStep) {
      // Gathered in the step's first forward, layer by layer behind it, and kept: a once-per-step cost.
      agExp = perLayerExposed(k.agLayerSeconds, k.layers, w.forward, overlap, cost);
      postStep += agExp;
    } else {
      const agF = perLayerExposed(k.agLayerSeconds, k.layers, w.forward, overlap, cost);
      const agB = V.zero3AllGathersPerMicrobatch(V.gatherReshards(sh.style, zero, sh.reshardAfterForward)) === 2 ? perLayerExposed(k.agBackLayerSeconds, k.layers, w.backward, overlap, cost) : 0;
      perF += agF;
      perB += agB;
      agExp = agF + agB;
    }
  }
  // BF16_Optimizer (DeepSpeed without ZeRO in bf16) gathers its updated weights after the step, not overlapped.
  if (k.hasDense && zero === 0) postStep += k.agSeconds;
  // FSDP2's copy-out of each gather and copy-in of each reduce-scatter run on (or block) the compute stream.
  if (k.copyForwardBytes > 0) perF += ctx.hbmSeconds(k.copyForwardBytes);
  if (k.copyBackwardBytes > 0) perB += ctx.hbmSeconds(k.copyBackwardBytes);
  gradSync += k.edpSeconds;
  if (!(k.hasDense && sched.hybridEveryMicrobatch)) gradSync += k.hsdpSeconds;
  postStep += k.offloadOptSeconds;
  // Megatron's embedding-group all-reduce runs after the gradient sync finishes, before the optimizer: exposed.
  postStep += k.embSeconds;
  if (sh.offloadParams !== 'none') {
    const one = k.offloadParamSeconds;
    perF += one / 2;
    perB += one / 2;
    offExp = one * m;
  }
  // DeepSpeed's pipeline engine waits for every transfer of its stage between passes: each forward its activation
  // receive and send, each backward its gradient receive and send (blocking p2p, deepspeedPipelineTransfers).
  // Under TP each received tensor is then all-gathered from its partitions (forward: the activation from the previous
  // stage; backward: the gradient from the next).
  const blocking = deepspeedPipeline(plan) ? deepspeedPipelineTransfers(stage, ctx.p) : 0;
  perF += blocking * ctx.p2p + (blocking > 0 && stage > 0 ? ctx.p2pGather : 0);
  perB += blocking * ctx.p2p + (blocking > 0 && stage < ctx.p - 1 ? ctx.p2pGather : 0);
  out.collectives = NONE_C;
  out.gradSync = gradSync;
  out.gradSyncWindow = window;
  out.gradSyncCooldown = plan.engine === 'megatron' && overlap && !pipelined ? interleavedSyncHidden(gradSync, ctx.v, ctx.p, (w.backward + perB + w.recompute) / ctx.v, window) : 0;
  out.perMicrobatchForward = perF;
  out.perMicrobatchBackward = perB;
  out.postStep = postStep;
  // Blocking transfers are in the passes already; the schedule's sends (pipelineHops) are the overlapped engines'.
  out.p2p = ctx.p > 1 && blocking === 0 ? ctx.p2p : 0;
  out.params = k.params;
  out.rsExp = rsExp;
  out.hsdpExp = hsdpExp;
  out.dpExp = dpExp;
  out.agExp = agExp;
  out.offExp = offExp;
  return out;
}

/**
 * Step-level communication of one stage (Rajbhandari et al. 2020 §7; Zhao et al. 2023 FSDP). With `list` false only the
 * numbers are computed; with `list` true every collective is listed with its exposure.
 */
export function stageComm(
  plan: Plan, stage: number, cache: TimeCache = new TimeCache(), ctx: TimeContext = timeContext(plan, cache),
  w: MicrobatchWork = microbatchWork(plan, stage, ctx), list = true,
): StageComm {
  const { m, p } = ctx;
  const entry = cache.entry(plan);
  const k = cache.stageTraffic(plan, stage, entry);
  const c = stageCommInto(plan, stage, ctx, w, k, cache.params, newStageCommNumbers());
  const { gradSync, gradSyncWindow: window, gradSyncCooldown: cooldown, perMicrobatchForward: perF, perMicrobatchBackward: perB, postStep, p2p, params: sp, rsExp, hsdpExp, dpExp, agExp, offExp } = c;
  if (!list) {
    return { collectives: NONE_C, gradSync, gradSyncWindow: window, gradSyncCooldown: cooldown, perMicrobatchForward: perF, perMicrobatchBackward: perB, postStep, p2p, params: sp };
  }
  const entries = inLayerEntries(plan, stage, w, m, entry.links);
  const kinds: Exposure[] = entries.map(() => 'pp');
  const sched = syncSchedule(plan, p, k);
  stepEntries(plan, stage, ctx, k, entry.links, entries, kinds, sched);
  const gathersPerStep = sched.gatherOncePerStep ? 1 : m;
  const gradExposed = gradSyncExposed(gradSync, window + cooldown, cache.params.overlapCost);
  const collectives: Collective[] = [];
  const secs = entries.map((e) => e.seconds ?? linkSeconds(e.kind, e.bytes, e.link) * e.count);
  // The dense and expert FSDP groups share one exposure of each kind, in proportion to their seconds.
  const share = (x: Exposure, i: number) => {
    let sum = 0;
    for (let j = 0; j < entries.length; j++) if (kinds[j] === x) sum += secs[j];
    return sum > 0 ? secs[i] / sum : 1;
  };
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    const x = kinds[i];
    const s = secs[i];
    const exposed = x === 'grad' ? (gradSync > 0 ? (gradExposed * s) / gradSync : 0)
      : x === 'post' ? (e.overlapped ? cache.params.overlapCost * s : s) : x === 'zero3' ? agExp * gathersPerStep * share(x, i) : x === 'rs' ? rsExp * m * share(x, i) : x === 'hsdp' ? hsdpExp * m : x === 'dp' ? dpExp * m
        : x === 'offload-params' ? offExp : e.id === 'pp-send-recv' ? (deepspeedPipeline(plan) ? s : (pipelineHops(p, ctx.v) * p2p) / p) : e.exposed;
    collectives.push(collective({ ...e, exposed }));
  }
  return { collectives, gradSync, gradSyncWindow: window, gradSyncCooldown: cooldown, perMicrobatchForward: perF, perMicrobatchBackward: perB, postStep, p2p, params: sp };
}
