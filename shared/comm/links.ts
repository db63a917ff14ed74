/**
 * Where a process group lives (inside a node or across the network) and how long one collective takes on it:
 * NCCL's latency/bandwidth model t = base + hops·hop latency + S·busFactor / bus bandwidth (NVIDIA/nccl
 * src/graph/tuning.cc), cheapest protocol for the message size, with the nccl-tests bus-bandwidth conventions.
 * A measured cluster profile (shared/hardware/profile.ts) replaces the catalog's curve where it has points.
 */
import constants from '../../data/collectives.json';
import type { ClusterSpec, ParallelAxis, Plan } from '../plan/types';
import { profileCollectiveSeconds, type ClusterProfile } from '../hardware/profile';
import type { CollectiveKind, CommAlgorithm, LinkTier } from './types';

const EFF: Readonly<Record<LinkTier, number>> = constants.busEfficiency;
/** Fraction of an inter-node adapter's rate NCCL reaches (data/collectives.json busEfficiency.network). */
const NETWORK_EFFICIENCY = EFF.network;
const KIND_EFF: Readonly<Record<LinkTier, Readonly<Partial<Record<CollectiveKind, number>>>>> = constants.kindEfficiency;
const AG_NV = KIND_EFF.nvlink['all-gather'] ?? 1, RS_NV = KIND_EFF.nvlink['reduce-scatter'] ?? 1, A2A_NV = KIND_EFF.nvlink['all-to-all'] ?? 1;
const AG_NET = KIND_EFF.network['all-gather'] ?? 1, RS_NET = KIND_EFF.network['reduce-scatter'] ?? 1, A2A_NET = KIND_EFF.network['all-to-all'] ?? 1;

/**
 * Bus bandwidth of a collective kind relative to all-reduce on a tier (data/collectives.json kindEfficiency), measured
 * on H100 nodes whose NVSwitch reduces in the switch (NVLink SHARP): NCCL's NVLS all-reduce outruns its all-gather and
 * reduce-scatter there. Elsewhere (`nvls` false) the three run as rings at one bus bandwidth: a ring all-reduce is a
 * reduce-scatter then an all-gather, which is why nccl-tests' bus-bandwidth factors 2(n−1)/n and (n−1)/n make them
 * equal (nccl-tests doc/PERFORMANCE.md).
 */
export function kindEfficiency(kind: CollectiveKind, tier: LinkTier, nvls = true): number {
  if (!nvls || tier === 'pcie' || kind === 'all-reduce' || kind === 'send-recv') return 1;
  const nv = tier === 'nvlink';
  return kind === 'all-gather' ? (nv ? AG_NV : AG_NET) : kind === 'reduce-scatter' ? (nv ? RS_NV : RS_NET) : (nv ? A2A_NV : A2A_NET);
}

interface Protocol { readonly base: number; readonly nvlinkHop: number; readonly networkHopScale: number; readonly bandwidthShare: number; readonly maxBusBandwidth?: number }
const PROTOCOLS: readonly Protocol[] = Object.values(constants.protocols) as Protocol[];

/** Degree of one parallel axis (at least 1). */
export function axisSize(plan: Plan, axis: ParallelAxis): number {
  const p = plan.parallel;
  const v = axis === 'tp' ? p.tp : axis === 'cp' ? p.cp : axis === 'ep' ? p.ep : axis === 'pp' ? p.pp : p.dp;
  return Math.max(1, Math.floor(v) || 1);
}

/**
 * Ranks between consecutive members of a group: the product of the sizes of the axes inside it in `parallel.order`
 * (innermost first). EP is carved out of the data-parallel ranks as in Megatron, so it does not widen the stride of others.
 */
export function axisStride(plan: Plan, axis: ParallelAxis): number {
  let stride = 1;
  for (const a of plan.parallel.order) {
    if (a === axis) break;
    if (a !== 'ep' || axis === 'ep') stride *= axisSize(plan, a);
  }
  return stride;
}

/**
 * GPUs whose links to each other are NVLink: a node, or the NVLink domain of a system whose NVLink spans hosts when
 * that is larger (GpuSpec.nvlinkDomain: 64 GPUs of a GB200 NVL72 rack). Collective placement counts in these units:
 * NCCL runs rings and trees over the whole NVLink domain as over one node (multi-node NVLink).
 */
export function nvlinkDomainSize(plan: Plan): number {
  return nvlinkDomainOf(plan.cluster);
}

/** nvlinkDomainSize of a cluster: max(1, GPUs per node, the GPU's NVLink domain). Larger than a node when NVLink spans hosts. */
export function nvlinkDomainOf(c: Pick<ClusterSpec, 'gpusPerNode' | 'gpu'>): number {
  return Math.max(1, c.gpusPerNode, c.gpu.nvlinkDomain ?? 0);
}

/** Members of a group of `size` ranks at `stride` that share one node (NVLink domain): min(size, max(1, ⌊domain / stride⌋)). */
export function membersPerNode(plan: Plan, size: number, stride: number): number {
  return Math.max(1, Math.min(size, Math.floor(nvlinkDomainSize(plan) / stride)));
}

/** The link inside a node: NVLink/xGMI, or PCIe for GPUs whose intra-node bandwidth is no more than their host link (no NVLink). */
export function intraNodeTier(plan: Plan): LinkTier {
  const g = plan.cluster.gpu;
  return g.intraNodeBandwidth <= g.hostBandwidth ? 'pcie' : 'nvlink';
}

/** A group fits in a node (NVLink domain) when stride · size ≤ its GPUs (the plan's rank order, TP innermost); else it crosses the network. */
export function groupTier(plan: Plan, size: number, stride: number): LinkTier {
  if (stride * size > nvlinkDomainSize(plan)) return 'network';
  return intraNodeTier(plan);
}

/**
 * Inter-node bandwidth kept when a group spans `nodes` nodes: (1 − drop)^max(0, log2(nodes/2)) with the fabric's
 * measured loss per doubling (data/collectives.json fabric.dropPerDoubling; 0 on a non-blocking fat tree).
 */
export function fabricScaling(nodes: number): number {
  // (1 − drop)^log2(x) = x^log2(1 − drop): one power instead of a power and a logarithm (the planner calls this per layout).
  return nodes > 2 ? Math.pow(nodes / 2, LOG2_KEEP) : 1;
}
const LOG2_KEEP = Math.log2(1 - constants.fabric.dropPerDoubling);

/**
 * Bus bandwidth of a group, bytes/s: NVLink (or PCIe) × efficiency inside a node; across nodes the group's members in
 * one node each drive their own adapter, so min(NVLink, members per node × adapter) × efficiency × fabric scaling
 * (hierarchical/multi-ring NCCL).
 */
export function busBandwidth(plan: Plan, tier: LinkTier, perNode: number, nodes: number): number {
  const g = plan.cluster.gpu;
  if (tier === 'pcie') return Math.min(g.hostBandwidth, g.intraNodeBandwidth > 0 ? g.intraNodeBandwidth : g.hostBandwidth) * EFF.pcie;
  if (tier === 'nvlink') return g.intraNodeBandwidth * EFF.nvlink;
  return Math.min(g.intraNodeBandwidth * EFF.nvlink, perNode * g.interNodeBandwidth * EFF.network) * fabricScaling(nodes);
}

/**
 * What one GPU's own inter-node adapter carries, bytes/s, when a group spans `nodes` nodes: the catalog's adapter rate
 * × NCCL's network efficiency (data/collectives.json busEfficiency.network) × the fabric's scaling (fabricScaling).
 */
export function adapterBandwidth(plan: Plan, nodes: number): number {
  return plan.cluster.gpu.interNodeBandwidth * NETWORK_EFFICIENCY * fabricScaling(nodes);
}

/**
 * Bus bandwidth of an all-to-all whose group spans nodes, bytes/s. Unlike a ring, where each chunk crosses between two
 * nodes once and every adapter of the node carries a share, an all-to-all sends each rank's own (n − perNode)/n of its
 * message to ranks on other nodes, and the node's adapters, one per GPU, are shared by as many senders (PXN only moves
 * a message to a peer's adapter): that part leaves at one adapter's rate, A = interNodeBandwidth × network efficiency ×
 * fabric scaling, while the (perNode − 1)/n that stays in the node runs over NVLink (or PCIe) at the same time. So
 * t = S · max((n − perNode)/(n·A), (perNode − 1)/(n·I)) and, in nccl-tests' convention, busbw = S·(n − 1)/n / t
 * = (n − 1) / max((n − perNode)/A, (perNode − 1)/I), I the intra-node bus bandwidth. Two nodes of eight H100 with one
 * 400 Gb/s adapter per GPU: 45 × 15/8 ≈ 84 GB/s, half of a ring all-gather's 185 (data/collectives.json). DeepEP's
 * README reports its internode dispatch and combine bound by that adapter (about 50 GB/s per CX7 400 Gb/s card) rather
 * than by NVLink; docs/time-model.md#expert-parallel-dispatch.
 */
export function networkAllToAllBandwidth(plan: Plan, size: number, perNode: number, nodes: number): number {
  if (size <= perNode) return 0;
  const adapter = adapterBandwidth(plan, nodes);
  const intra = perNode > 1 ? busBandwidth(plan, intraNodeTier(plan), perNode, 1) : Infinity;
  const t = Math.max((size - perNode) / adapter, (perNode - 1) / intra);
  return t > 0 ? (size - 1) / t : 0;
}

/** nccl-tests factor from algorithm bandwidth to bus bandwidth: all-reduce 2(n−1)/n, AG/RS/all-to-all (n−1)/n, send-recv 1. */
export function busFactor(kind: CollectiveKind, n: number): number {
  if (n <= 1) return kind === 'send-recv' ? 1 : 0;
  if (kind === 'all-reduce') return (2 * (n - 1)) / n;
  if (kind === 'send-recv') return 1;
  return (n - 1) / n;
}

/** Algorithm NCCL would pick: ring inside a node, hierarchical across nodes, tree for large inter-node all-reduce. */
export function algorithmFor(kind: CollectiveKind, tier: LinkTier, n: number, perNode: number): CommAlgorithm {
  if (kind === 'send-recv') return tier === 'pcie' ? 'copy' : 'point-to-point';
  if (kind === 'all-to-all') return 'pairwise';
  if (tier !== 'network') return 'ring';
  if (kind === 'all-reduce' && n / perNode > 64) return 'tree';
  return perNode > 1 ? 'hierarchical' : 'ring';
}

/** Latency steps of one collective: ring 2(n−1) (all-reduce) or n−1; tree 2·log2(n); point-to-point 1. */
export function latencySteps(kind: CollectiveKind, algorithm: CommAlgorithm, n: number): number {
  if (n <= 1 && kind !== 'send-recv') return 0;
  if (algorithm === 'point-to-point' || algorithm === 'copy') return 1;
  if (algorithm === 'tree') return 2 * Math.ceil(Math.log2(n));
  return kind === 'all-reduce' ? 2 * (n - 1) : n - 1;
}

/**
 * Seconds of one collective: the cheapest NCCL protocol of base + steps·hop + S·busFactor(n)/(busbw·share)
 * (tuning.cc's model; nccl-tests PERFORMANCE.md: busbw = algbw·factor). `bytes` is the per-rank message size S of
 * nccl-tests; `hop` the catalog's per-step latency of the tier (its Simple-protocol hop on the network).
 */
export function collectiveSeconds(
  kind: CollectiveKind, bytes: number, n: number, busbw: number, hop: number, algorithm: CommAlgorithm, tier: LinkTier = 'network',
): number {
  if (!(bytes > 0) || !(busbw > 0) || (n <= 1 && kind !== 'send-recv')) return 0;
  const steps = latencySteps(kind, algorithm, n);
  const wire = bytes * busFactor(kind, n);
  // A link whose catalog latency is 0 is an ideal one (test fixtures, what-if views): no protocol latencies either.
  if (hop === 0) return wire / busbw;
  // Beyond 100 µs on the wire the bandwidth term dominates and Simple (full bandwidth) wins: skip the comparison.
  const simple = PROTOCOLS[PROTOCOLS.length - 1];
  if (wire / busbw > 1e-4) return simple.base + steps * (tier === 'nvlink' ? simple.nvlinkHop : hop * simple.networkHopScale) + wire / (busbw * simple.bandwidthShare);
  let best = Infinity;
  for (const p of PROTOCOLS) {
    const h = tier === 'nvlink' ? p.nvlinkHop : hop * p.networkHopScale;
    const bw = Math.min(busbw * p.bandwidthShare, p.maxBusBandwidth ?? Infinity);
    const t = p.base + steps * h + wire / bw;
    if (t < best) best = t;
  }
  return best;
}

/** A resolved link for a group: tier, bus bandwidth, per-step latency, members per node and nodes spanned. */
export interface GroupLink {
  readonly size: number;
  readonly tier: LinkTier;
  readonly busbw: number;
  readonly alpha: number;
  readonly perNode: number;
  readonly nodes: number;
  /** The cluster's measured profile, when the plan has one (its collective curves replace the model's). */
  readonly profile?: ClusterProfile;
  /** The GPUs' NVSwitch reduces in the switch (GpuSpec.nvlinkSharp): all-reduce outruns all-gather and reduce-scatter. */
  readonly nvls: boolean;
  /** Bus bandwidth of an all-to-all on this group when it crosses nodes (networkAllToAllBandwidth); 0 inside a node. */
  readonly a2aBusbw: number;
}

/** Per-step latency (alpha) of a tier from the GPU catalog, seconds. */
export function stepLatency(plan: Plan, tier: LinkTier): number {
  const g = plan.cluster.gpu;
  return tier === 'network' ? g.interNodeLatency : g.intraNodeLatency;
}

/** Resolves the link of a parallel axis's group from the placement. */
export function axisLink(plan: Plan, axis: ParallelAxis, sizeOverride?: number): GroupLink {
  const size = sizeOverride ?? axisSize(plan, axis);
  const stride = axisStride(plan, axis);
  const tier = groupTier(plan, size, stride);
  const perNode = membersPerNode(plan, size, stride);
  const nodes = Math.max(1, Math.ceil(size / perNode));
  const profile = plan.cluster.profile;
  // One object shape for every link (profile present or undefined): the hot paths that read links stay monomorphic.
  const a2aBusbw = tier === 'network' ? networkAllToAllBandwidth(plan, size, perNode, nodes) : 0;
  return { size, tier, busbw: busBandwidth(plan, tier, perNode, nodes), alpha: stepLatency(plan, tier), perNode, nodes, profile, nvls: !!plan.cluster.gpu.nvlinkSharp, a2aBusbw };
}

/**
 * The link of a group made of several axes' groups, each as [size, stride] (FSDP over dp_shard × cp, plain DP over
 * DP × CP, HSDP replicas outside the shard group): members per node multiply from the innermost axis outwards while the
 * inner axes fit in a node; the group crosses the network when fewer than all of its members share one.
 */
export function productLink(plan: Plan, parts: readonly (readonly [number, number])[]): GroupLink {
  const gpn = nvlinkDomainSize(plan);
  const sorted = [...parts].sort((a, b) => a[1] - b[1]);
  let size = 1, perNode = 1, fits = true;
  for (const [s, stride] of sorted) {
    size *= s;
    if (!fits) continue;
    const k = Math.max(1, Math.min(s, Math.floor(gpn / Math.max(1, stride))));
    perNode *= k;
    fits = k === s;
  }
  const g = plan.cluster.gpu;
  const tier: LinkTier = perNode < size ? 'network' : intraNodeTier(plan);
  const nodes = Math.max(1, Math.ceil(size / perNode));
  const a2aBusbw = tier === 'network' ? networkAllToAllBandwidth(plan, size, perNode, nodes) : 0;
  return { size, tier, busbw: busBandwidth(plan, tier, perNode, nodes), alpha: stepLatency(plan, tier), perNode, nodes, profile: plan.cluster.profile, nvls: !!g.nvlinkSharp, a2aBusbw };
}

/** Seconds of one collective on a resolved group link (measured when the cluster profile has this group layout). */
export function linkSeconds(kind: CollectiveKind, bytes: number, link: GroupLink): number {
  if (link.profile) {
    const t = profileCollectiveSeconds(link.profile, kind, bytes, link.size, link.perNode);
    if (t !== undefined) return t;
  }
  const alg = algorithmFor(kind, link.tier, link.size, link.perNode);
  return collectiveSeconds(kind, bytes, link.size, kindBusBandwidth(kind, link), link.alpha, alg, link.tier);
}

/** Bus bandwidth one collective kind reaches on a resolved link: all-to-all across nodes at its adapter bound, else the link's × kindEfficiency. */
export function kindBusBandwidth(kind: CollectiveKind, link: GroupLink): number {
  if (kind === 'all-to-all' && link.tier === 'network' && link.a2aBusbw > 0) return link.a2aBusbw;
  return link.busbw * kindEfficiency(kind, link.tier, link.nvls);
}
