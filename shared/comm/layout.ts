/**
 * The process groups of a layout and their links: group sizes and where each group lives (inside a node or across
 * the network), for the TP, CP, EP, PP, data-parallel (shard, HSDP replica, expert-DP) groups and the PCIe host link.
 * Independent of the micro batch and of recomputation, so the time model computes it once per layout.
 */
import type { Plan } from '../plan/types';
import { axisLink, axisStride, busBandwidth, nvlinkDomainSize, productLink, type GroupLink } from './links';

/** Group sizes and links of a layout. */
export interface LayoutLinks {
  readonly p: number;
  readonly tpLink: GroupLink;
  readonly cpLink: GroupLink;
  readonly epLink: GroupLink;
  readonly ppLink: GroupLink;
  readonly pcieLink: GroupLink;
  /** DP×CP size, ZeRO/FSDP shard group, HSDP replicas, expert-DP size and their links. */
  readonly dpSize: number;
  readonly shard: number;
  readonly replicas: number;
  readonly edp: number;
  readonly shardLink: GroupLink;
  readonly replicaLink: GroupLink;
  readonly edpLink: GroupLink;
}

/** Placeholder for a group of one rank (never used for traffic). */
export const NO_LINK: GroupLink = { size: 1, tier: 'nvlink', busbw: 1, alpha: 0, perNode: 1, nodes: 1, profile: undefined, nvls: false, a2aBusbw: 0 };

/** Positive integer or 1. */
function deg(x: number): number {
  return Number.isFinite(x) && x >= 1 ? Math.floor(x) : 1;
}

/** A pipeline hop: one GPU to one GPU, so one adapter's bandwidth when it crosses the network. */
function pointToPoint(l: GroupLink): GroupLink {
  return { ...l, perNode: 1, nodes: l.tier === 'network' ? 2 : 1 };
}

/**
 * A pipeline hop's link. Neighbouring stages sit `stride` ranks apart; when the whole pipeline does not fit in a node
 * (stride · p > GPUs per node) some hop leaves it even if the first pair shares a node (TP 2 × DP 2 with PP 4 on 8-GPU
 * nodes: stages 1 → 2 cross), and the schedule runs at its slowest hop: the network then, one rank on each side.
 */
function pipelineHopLink(plan: Plan): GroupLink {
  const pair = axisLink(plan, 'pp', 2);
  if (pair.tier === 'network' || axisLink(plan, 'pp').tier !== 'network') return pointToPoint(pair);
  return pointToPoint(productLink(plan, [[2, nvlinkDomainSize(plan)]]));
}

/** Resolves the group sizes and links of a plan's layout (Megatron placement, shared/comm/links.ts). */
export function layoutLinks(plan: Plan): LayoutLinks {
  const m = plan.model;
  const par = plan.parallel;
  const dpSize = deg(par.dp) * deg(par.cp);
  // Plain DP (stage 0) reduces over all DP×CP ranks; ZeRO/FSDP shard over the shard group (HSDP: replicas of it). The
  // shard group is counted in DP ranks and spans the CP ranks too, as the memory model counts it: torchtitan shards over
  // the flattened dp_shard × cp mesh (parallelize.py `dp_shard_cp`), Megatron's distributed optimizer over DP × CP.
  const shard = par.sharding.stage === 0 ? dpSize : Math.min(dpSize, deg(par.sharding.shardGroupSize || par.dp) * deg(par.cp));
  const replicas = Math.max(1, Math.floor(dpSize / shard));
  // The shard (or plain DP) group spans the CP ranks and shard/cp DP ranks; HSDP replicas sit outside the shard group.
  const cp = deg(par.cp);
  const dpStride = axisStride(plan, 'dp');
  const shardParts: [number, number][] = cp > 1 ? [[cp, axisStride(plan, 'cp')], [shard / cp, dpStride]] : [[shard, dpStride]];
  const edp = Math.max(1, Math.floor((dpSize * deg(par.tp)) / (deg(par.ep) * deg(par.etp))));
  const pp = deg(par.pp);
  const offload = par.sharding.offloadOptimizer !== 'none' || par.sharding.offloadParams !== 'none';
  return {
    p: pp,
    tpLink: deg(par.tp) > 1 ? axisLink(plan, 'tp') : NO_LINK,
    cpLink: deg(par.cp) > 1 ? axisLink(plan, 'cp') : NO_LINK,
    epLink: m.moe && deg(par.ep) > 1 ? axisLink(plan, 'ep') : NO_LINK,
    ppLink: pp > 1 ? pipelineHopLink(plan) : NO_LINK,
    pcieLink: offload
      ? { size: 1, tier: 'pcie', busbw: busBandwidth(plan, 'pcie', 1, 1), alpha: plan.cluster.gpu.intraNodeLatency, perNode: 1, nodes: 1, profile: undefined, nvls: false, a2aBusbw: 0 } : NO_LINK,
    dpSize, shard, replicas, edp,
    shardLink: shard > 1 ? productLink(plan, shardParts) : NO_LINK,
    replicaLink: replicas > 1 ? productLink(plan, [[replicas, dpStride * Math.max(1, shard / cp)]]) : NO_LINK,
    // The expert-data-parallel group holds the ranks with the same expert shard: EP (and expert TP) sit inside it, so
    // its members are ep · etp ranks apart (Megatron's expert rank order tp-ep-dp-pp with tp = expert TP,
    // parallel_state.py; torchtitan's efsdp outside dp_shard_in_ep × cp × tp).
    edpLink: m.moe && edp > 1 ? productLink(plan, [[edp, deg(par.ep) * deg(par.etp)]]) : NO_LINK,
  };
}
