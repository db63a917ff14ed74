/**
 * Every collective one rank of one pipeline stage takes part in during an optimizer step, with its volume, link, time
 * and the part of it that compute does not hide. The in-layer TP/EP/CP collectives are timed with the layer's kernels
 * (shared/time/layerCost.ts) and listed here; data-parallel and ZeRO/FSDP traffic, pipeline sends and offload copies are
 * composed here from the volumes and links of shared/comm/.
 */
import type { EpDispatcher, Plan } from '../plan/types';
import { algorithmFor, kindBusBandwidth, linkSeconds, type GroupLink } from '../comm/links';
import { dispatchPass, moeTokensPerRank } from '../comm/dispatch';
import type { LayoutLinks } from '../comm/layout';
import { moeLayersIn } from '../model/params';
import { firstLayerOfStage, stageLayerCount, type StageParams } from '../comm/stageParams';
import type { StageTraffic } from '../comm/stageTraffic';
import type { Collective, CollectiveKind, CommGroup } from '../comm/types';
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
import { pipelineEngineOf } from '../memory/pipeline';
import { ringKvHeads, torchRing, torchRingGatherBytes, torchRingGradBytes } from './kernels/ring';
import { deepspeedPipeline, deepspeedPipePartitioned, deepspeedPipelineTransfers } from './deepspeedPipe';
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

interface Entry {
  id: string; label: string; kind: CollectiveKind; group: CommGroup; link: GroupLink; stage: number;
  bytes: number; count: number; overlapped: boolean; exposed: number; formula: string; citation: string; seconds?: number;
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

/** Exposure of a step-level entry, filled once the stage's totals are known. */
type Exposure = 'grad' | 'post' | 'zero3' | 'rs' | 'hsdp' | 'dp' | 'offload-params' | 'pp';
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
    params: { dense: 0, expert: 0, largestLayer: 0, trainable: 0 }, rsExp: 0, hsdpExp: 0, dpExp: 0, agExp: 0, offExp: 0,
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
  // torch pipelining with FSDP2 reduces the stage's gradients once, after its last backward, and gathers once per step.
  const pipelined = V.torchPipelinedFsdp(ctx.p, pipelineEngineOf(plan.engine), sh.style, zero);
  // The sync hides behind the last backward pass: one chunk of the stage (1/v of it) after the first bucket fills.
  const window = overlap && !pipelined ? ((1 - fBucket) * w.backward) / ctx.v : 0;
  // Sums in the order of the collectives' listing (stepEntries).
  let gradSync = 0;
  let postStep = 0;
  let perF = 0, perB = 0, rsExp = 0, hsdpExp = 0, dpExp = 0, agExp = 0, offExp = 0;
  // A replicated stage all-reduces behind its last backward, or behind every backward (torch replicate).
  if (k.dpSeconds > 0 && ctx.p === 1 && V.replicaReduceEveryMicrobatch(sh.style, zero, plan.training.syncEveryMicroBatch)) {
    dpExp = gradSyncExposed(k.dpSeconds, window, cost);
    perB += dpExp;
  } else gradSync += k.dpSeconds;
  let hsdpEveryMb = false;
  if (k.hasDense && zero >= 1) {
    if (zero >= 2 && !pipelined && V.zeroGradReduceEveryMicrobatch(sh.style, plan.training.syncEveryMicroBatch)) {
      const pass = (1 - fBucket) * w.backward;
      rsExp = perLayerExposed(k.rsLayerSeconds, k.layers, pass, overlap, cost);
      // FSDP's hybrid sharding all-reduces each group's reduced shard across the replicas right after its
      // reduce-scatter, on its own stream (FSDP2 foreach_reduce, FSDP1 _reduce_grad): in every micro-batch too.
      hsdpEveryMb = k.hsdpLayerSeconds > 0 && (sh.style === 'fsdp' || sh.style === 'fsdp2');
      if (hsdpEveryMb) hsdpExp = hybridReduceExposed(k.rsLayerSeconds, k.hsdpLayerSeconds, k.layers, pass, overlap, cost) - rsExp;
      perB += rsExp + hsdpExp;
    } else gradSync += k.rsSeconds; // ZeRO-1, FSDP under no_sync or a pipelined FSDP2 stage: once per step.
    const agOne = k.agSeconds;
    if (zero <= 2) {
      // Megatron's --overlap-param-gather hides the gather behind the next step's forward; it still costs overlapCost.
      postStep += sh.style === 'megatron-distopt' && overlap ? exposedBehind(agOne, w.forward * m, true, cost) : agOne;
    } else if (pipelined && !sh.reshardAfterForward) {
      // Gathered in the step's first forward, layer by layer behind it, and kept: a once-per-step cost.
      agExp = perLayerExposed(k.agLayerSeconds, k.layers, w.forward, overlap, cost);
      postStep += agExp;
    } else {
      const agF = perLayerExposed(k.agLayerSeconds, k.layers, w.forward, overlap, cost);
      const agB = V.zero3AllGathersPerMicrobatch(sh.reshardAfterForward) === 2 ? perLayerExposed(k.agLayerSeconds, k.layers, w.backward, overlap, cost) : 0;
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
  if (!hsdpEveryMb) gradSync += k.hsdpSeconds;
  postStep += k.offloadOptSeconds;
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
  const dpEveryMb = k.dpSeconds > 0 && ctx.p === 1 && V.replicaReduceEveryMicrobatch(plan.parallel.sharding.style, plan.parallel.sharding.stage, plan.training.syncEveryMicroBatch);
  stepEntries(plan, stage, ctx, k, entry.links, entries, kinds, hsdpExp > 0, dpEveryMb);
  const pipelined = V.torchPipelinedFsdp(p, pipelineEngineOf(plan.engine), plan.parallel.sharding.style, plan.parallel.sharding.stage);
  const gathersPerStep = pipelined && !plan.parallel.sharding.reshardAfterForward ? 1 : m;
  const gradExposed = gradSyncExposed(gradSync, window + cooldown, cache.params.overlapCost);
  const collectives: Collective[] = [];
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    const x = kinds[i];
    const s = e.seconds ?? linkSeconds(e.kind, e.bytes, e.link) * e.count;
    const exposed = x === 'grad' ? (gradSync > 0 ? (gradExposed * s) / gradSync : 0)
      : x === 'post' ? (e.overlapped ? cache.params.overlapCost * s : s) : x === 'zero3' ? agExp * gathersPerStep : x === 'rs' ? rsExp * m : x === 'hsdp' ? hsdpExp * m : x === 'dp' ? dpExp * m
        : x === 'offload-params' ? offExp : e.id === 'pp-send-recv' ? (deepspeedPipeline(plan) ? s : (pipelineHops(p, ctx.v) * p2p) / p) : e.exposed;
    collectives.push(collective({ ...e, exposed }));
  }
  return { collectives, gradSync, gradSyncWindow: window, gradSyncCooldown: cooldown, perMicrobatchForward: perF, perMicrobatchBackward: perB, postStep, p2p, params: sp };
}

/** Lists the step-level collectives of a stage (sizes from stageTraffic) with how their exposure is computed. */
function stepEntries(plan: Plan, stage: number, ctx: TimeContext, k: StageTraffic, links: LayoutLinks, entries: Entry[], kinds: Exposure[], hsdpEveryMb: boolean, dpEveryMb: boolean): void {
  const par = plan.parallel;
  const sh = par.sharding;
  const { m, v, p } = ctx;
  const zero = sh.stage;
  const overlap = sh.overlapComm;
  const cite = 'Rajbhandari et al. 2020 (ZeRO) §7.2; nccl-tests PERFORMANCE.md';
  const dense = links.shardLink;
  if (k.hasDense && zero === 0) {
    addEntry(entries, kinds, { id: 'dp-grad-allreduce', label: 'DP gradient all-reduce', kind: 'all-reduce', group: 'dp', link: dense, stage, bytes: k.dpBytes,
      count: dpEveryMb ? m : 1, overlapped: overlap, exposed: 0,
      formula: `2(N−1)/N · Ψ_stage · B_grad, bucketed, overlapped with ${dpEveryMb ? 'every backward (torch replicate syncs in each)' : 'the last backward'}`,
      citation: dpEveryMb ? `${cite}; torch/distributed/_composable/replicate.py` : cite }, dpEveryMb ? 'dp' : 'grad');
    if (k.agBytes > 0) {
      addEntry(entries, kinds, { id: 'zero-param-all-gather', label: 'BF16_Optimizer weight all-gather', kind: 'all-gather', group: 'dp',
        link: dense, stage, bytes: k.agBytes, count: 1, overlapped: false, exposed: 0,
        formula: '(N−1)/N · Ψ_stage · B_param once per step (DeepSpeed without ZeRO in bf16: partitioned fp32 master weights)',
        citation: 'DeepSpeed deepspeed/runtime/bf16_optimizer.py, engine.py _do_optimizer_sanity_check' }, 'post');
    }
  }
  if (k.hasDense && zero >= 1) {
    const pipelined = V.torchPipelinedFsdp(p, pipelineEngineOf(plan.engine), sh.style, zero);
    const perMb = zero >= 2 && !pipelined && V.zeroGradReduceEveryMicrobatch(sh.style, plan.training.syncEveryMicroBatch);
    const once = pipelined ? ' once per step, after the stage\'s last backward (torch pipelining)' : ' once per step (the other micro-batches under no_sync)';
    addEntry(entries, kinds, { id: 'zero-grad-reduce-scatter', label: 'ZeRO gradient reduce-scatter', kind: 'reduce-scatter', group: 'dp', link: dense, stage,
      bytes: k.rsBytes, count: perMb ? m : 1, overlapped: overlap && !pipelined, exposed: 0,
      formula: '(N−1)/N · Ψ_stage · B_grad' + (perMb ? ' per micro-batch' : zero >= 2 ? once : ' per step'),
      citation: pipelined ? `${cite}; torch/distributed/pipelining/stage.py backward_maybe_with_nosync`
        : zero >= 2 && !perMb ? `${cite}; torch FSDP no_sync / set_requires_gradient_sync` : cite }, perMb ? 'rs' : 'grad');
    if (zero <= 2) {
      const hidden = sh.style === 'megatron-distopt' && overlap;
      addEntry(entries, kinds, { id: 'zero-param-all-gather', label: 'ZeRO parameter all-gather after the step', kind: 'all-gather', group: 'dp',
        link: dense, stage, bytes: k.agBytes, count: 1, overlapped: hidden, exposed: 0,
        formula: '(N−1)/N · Ψ_stage · B_param once per step (ZeRO-1/2: 2Ψ with the reduce-scatter)', citation: cite }, 'post');
    } else {
      const gathers = V.zero3AllGathersPerMicrobatch(sh.reshardAfterForward);
      const once = pipelined && !sh.reshardAfterForward;
      addEntry(entries, kinds, { id: 'zero3-param-all-gather', label: 'ZeRO-3/FSDP parameter all-gather', kind: 'all-gather', group: 'dp', link: dense,
        stage, bytes: k.agBytes, count: once ? 1 : gathers * m, overlapped: overlap, exposed: 0,
        formula: once
          ? '(N−1)/N · Ψ_stage · B_param once per step: gathered in the first forward and kept until the stage\'s last backward (torch pipelining), prefetched'
          : `(N−1)/N · Ψ_stage · B_param, ${gathers === 2 ? 'forward and backward (3Ψ with the reduce-scatter)' : 'forward only, kept for backward (2Ψ)'} per micro-batch, prefetched`,
        citation: once ? 'Zhao et al. 2023 (PyTorch FSDP); torch/distributed/pipelining/stage.py backward_maybe_with_nosync; torchtitan parallelize (reshard_after_forward off under PP)'
          : 'Rajbhandari et al. 2020 §7.2.2; Zhao et al. 2023 (PyTorch FSDP); Llama 3 §3.3.2' }, 'zero3');
    }
  }
  if (k.hasEdp) {
    addEntry(entries, kinds, { id: 'edp-grad-allreduce', label: 'Expert-DP gradient all-reduce', kind: 'all-reduce', group: 'dp', link: links.edpLink, stage, bytes: k.edpBytes, count: 1,
      overlapped: overlap, exposed: 0, formula: '2(N_edp−1)/N_edp · Ψ_experts · B_grad, N_edp = d·cp·t/(ep·etp)', citation: 'Megatron-LM expert data parallelism' }, 'grad');
  }
  if (links.replicas > 1 && zero >= 1) {
    addEntry(entries, kinds, { id: 'hsdp-replicate-allreduce', label: 'HSDP replicate all-reduce', kind: 'all-reduce', group: 'dp', link: links.replicaLink, stage,
      bytes: k.hsdpBytes, count: hsdpEveryMb ? m : 1, overlapped: overlap, exposed: 0,
      formula: `2(R−1)/R · Ψ_stage/N_shard · B_grad across replicas${hsdpEveryMb ? ', each group after its reduce-scatter, every micro-batch' : ''}`,
      citation: hsdpEveryMb ? 'Zhao et al. 2023 (PyTorch FSDP) §3.2.2 hybrid sharding; torch FSDP2 foreach_reduce, FSDP1 _reduce_grad'
        : 'Zhao et al. 2023 (PyTorch FSDP) §3.2.2 hybrid sharding' }, hsdpEveryMb ? 'hsdp' : 'grad');
  }
  if (sh.offloadOptimizer !== 'none') {
    addEntry(entries, kinds, { id: 'offload-optimizer', label: 'Optimizer offload copies (PCIe)', kind: 'send-recv', group: 'dp', link: links.pcieLink, stage,
      bytes: k.offloadOptBytes, count: 1, overlapped: false, exposed: 0, formula: 'Ψ_shard·(B_grad + 2) over PCIe per step', citation: 'Ren et al. 2021 (ZeRO-Offload) §4' }, 'post');
  }
  if (sh.offloadParams !== 'none') {
    addEntry(entries, kinds, { id: 'offload-params', label: 'Parameter offload fetches (PCIe)', kind: 'send-recv', group: 'dp', link: links.pcieLink, stage,
      bytes: k.offloadParamBytes, count: m, overlapped: false, exposed: 0, formula: '2·Ψ_shard·B_param over PCIe per micro-batch',
      citation: 'Rajbhandari et al. 2021 (ZeRO-Infinity)' }, 'offload-params');
  }
  if (p > 1) {
    const partitioned = deepspeedPipePartitioned(plan);
    const bytes = V.ppMessageBytes(ctx.tokens, plan.model.hiddenSize, ctx.actBytes, par.sp || partitioned ? posInt(par.tp) : 1);
    const blocking = deepspeedPipeline(plan);
    addEntry(entries, kinds, { id: 'pp-send-recv', label: 'Pipeline send/recv', kind: 'send-recv', group: 'pp', link: ctx.ppLink, stage, bytes,
      count: blocking ? 2 * m * deepspeedPipelineTransfers(stage, p) : V.ppSendsPerStep(m, v, v > 1 || stage < p - 1, v > 1 || stage > 0),
      overlapped: !blocking, exposed: 0,
      formula: blocking
        ? 'b·s·h·B (÷t under TP: DeepSpeed sends partitions) per micro-batch, activations and gradients received and sent, each a blocking call of DeepSpeed\'s pipeline engine'
        : 'b·s·h·B (÷t with SP) per micro-batch per chunk, forward activations and backward gradients',
      citation: blocking ? 'DeepSpeed deepspeed/runtime/pipe/engine.py, p2p.py' : 'Narayanan et al. 2021 §2.2, §4.1' }, 'pp');
    // One received tensor per neighbour and micro-batch: the activation from the previous stage, the gradient from the next.
    const receives = partitioned ? deepspeedPipelineTransfers(stage, p) : 0;
    if (receives > 0) {
      const full = V.ppMessageBytes(ctx.tokens, plan.model.hiddenSize, ctx.actBytes, 1);
      addEntry(entries, kinds, { id: 'pp-partition-gather', label: 'PP input all-gather (TP parts)', kind: 'all-gather', group: 'tp', link: links.tpLink, stage,
        bytes: full, count: m * receives, overlapped: false, exposed: m * receives * ctx.p2pGather,
        formula: 'b·s·h·B per received activation or gradient, rebuilt from its t partitions before the pass',
        citation: 'DeepSpeed deepspeed/runtime/pipe/engine.py (pipe_partitioned, grad_partitioned)' }, 'pp');
    }
  }
}

/** Appends an entry and how its exposure is computed. */
function addEntry(entries: Entry[], kinds: Exposure[], e: Entry, x: Exposure): void {
  entries.push(e);
  kinds.push(x);
}
