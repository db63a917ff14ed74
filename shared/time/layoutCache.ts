/**
 * Per-layout invariants of the time and communication model, computed once per parallel spec: the links of every
 * process group, the data-parallel group sizes, each stage's per-rank parameters, step-level traffic and optimizer time,
 * the step contexts per micro-batch shape and the runs of alike stages. Plans are immutable, so an entry is found by the
 * identity of `plan.parallel` and checked against the model, cluster and LoRA objects it was built from; layouts that
 * differ only in sharding share the parts that read no sharding field. The planner builds one parallel spec per layout
 * family and evaluates many micro batches and recomputation choices with it; every figure still comes from the same
 * term functions (test/unit/planner/fastPathCaches.test.ts checks the cached path against uncached estimates).
 */
import type { ClusterSpec, LoraSpec, ModelSpec, ParallelSpec, Plan, TrainingSpec } from '../plan/types';
import { axisLink, busBandwidth, type GroupLink } from '../comm/links';
import { stageParams, type StageParams } from '../comm/stageParams';
import { stageTraffic, type StageTraffic } from '../comm/stageTraffic';
import { posInt } from './shape';

/** Group sizes and links of a layout (independent of the micro batch and of recomputation). */
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
export const NO_LINK: GroupLink = { size: 1, tier: 'nvlink', busbw: 1, alpha: 0, perNode: 1 };

/** A pipeline hop: one GPU to one GPU, so one adapter's bandwidth when it crosses the network. */
function pointToPoint(l: GroupLink): GroupLink {
  return { size: l.size, tier: l.tier, busbw: l.busbw, alpha: l.alpha, perNode: 1 };
}

/** Resolves the group sizes and links of a plan's layout (Megatron placement, shared/comm/links.ts). */
export function layoutLinks(plan: Plan): LayoutLinks {
  const m = plan.model;
  const par = plan.parallel;
  const dpSize = posInt(par.dp) * posInt(par.cp);
  // Plain DP (stage 0) reduces over all DP×CP ranks; ZeRO/FSDP shard over the shard group (HSDP: replicas of it).
  const shard = par.sharding.stage === 0 ? dpSize : Math.min(dpSize, posInt(par.sharding.shardGroupSize || dpSize));
  const replicas = Math.max(1, Math.floor(dpSize / shard));
  const edp = Math.max(1, Math.floor((dpSize * posInt(par.tp)) / (posInt(par.ep) * posInt(par.etp))));
  const pp = posInt(par.pp);
  const offload = par.sharding.offloadOptimizer !== 'none' || par.sharding.offloadParams !== 'none';
  return {
    p: pp,
    tpLink: posInt(par.tp) > 1 ? axisLink(plan, 'tp') : NO_LINK,
    cpLink: posInt(par.cp) > 1 ? axisLink(plan, 'cp') : NO_LINK,
    epLink: m.moe && posInt(par.ep) > 1 ? axisLink(plan, 'ep') : NO_LINK,
    ppLink: pp > 1 ? pointToPoint(axisLink(plan, 'pp', 2)) : NO_LINK,
    pcieLink: offload
      ? { size: 1, tier: 'pcie', busbw: busBandwidth(plan, 'pcie', 1), alpha: plan.cluster.gpu.intraNodeLatency, perNode: 1 } : NO_LINK,
    dpSize, shard, replicas, edp,
    shardLink: shard > 1 ? axisLink(plan, 'dp', shard) : NO_LINK,
    replicaLink: replicas > 1 ? axisLink(plan, 'dp', replicas) : NO_LINK,
    edpLink: m.moe && edp > 1 ? axisLink(plan, 'dp', edp) : NO_LINK,
  };
}

/** What one parallel spec's cache entry holds; `contexts` is filled by shared/time/context.ts, `runs` by stepTime.ts. */
export interface LayoutEntry<C, R = unknown> {
  readonly parallel: ParallelSpec;
  readonly model: ModelSpec;
  readonly cluster: ClusterSpec;
  readonly lora: LoraSpec | undefined;
  readonly links: LayoutLinks;
  /** Per-rank parameters by stage index, filled on first use; shared with sameCore layouts. */
  readonly stageParams: (StageParams | undefined)[];
  /** Step-level traffic by stage index (depends on the sharding). */
  readonly traffic: (StageTraffic | undefined)[];
  /** Optimizer-step seconds by stage for `optimizerFor` (shared/time/optimizer.ts). */
  readonly optimizer: number[];
  optimizerFor: string | undefined;
  /** Step contexts built for this layout, one per distinct micro-batch shape (see sameShape); shared with sameCore layouts. */
  readonly contexts: C[];
  /** Runs of alike pipeline stages per recomputation setting (shared/time/stepTime.ts). */
  readonly runs: R[];
}

/**
 * The last four layouts, found by identity. A small ring instead of a WeakMap: the planner walks one layout family at a
 * time, and short-lived weak-map entries cost more garbage-collection time than they save.
 */
const RING: (LayoutEntry<unknown, unknown> | undefined)[] = [undefined, undefined, undefined, undefined];
let next = 0;
let last: LayoutEntry<unknown, unknown> | undefined;

/** Most step contexts kept per layout (the planner tries every divisor of the per-replica batch as micro batch). */
export const MAX_CONTEXTS = 64;

/** Whether an entry was built from this plan's parallel spec, model, cluster and LoRA objects. */
function matches(e: LayoutEntry<unknown, unknown> | undefined, plan: Plan): boolean {
  return e !== undefined && e.parallel === plan.parallel && e.model === plan.model && e.cluster === plan.cluster && e.lora === plan.lora;
}

/** The cache entry of a plan's layout, built on first use or when the model, cluster or LoRA object changed. */
export function layoutEntry<C, R = unknown>(plan: Plan): LayoutEntry<C, R> {
  if (matches(last, plan)) return last as LayoutEntry<C, R>;
  for (let i = 0; i < RING.length; i++) {
    const e = RING[i];
    if (e && matches(e, plan)) {
      last = e;
      return e as LayoutEntry<C, R>;
    }
  }
  // The planner's consecutive layouts often differ only in sharding: they share everything that does not read it.
  const prev = last && last.model === plan.model && last.cluster === plan.cluster && last.lora === plan.lora
    && sameCore(last.parallel, plan.parallel) ? last : undefined;
  const entry: LayoutEntry<unknown, unknown> = {
    parallel: plan.parallel, model: plan.model, cluster: plan.cluster, lora: plan.lora, links: layoutLinks(plan),
    stageParams: prev ? prev.stageParams : [], traffic: [], optimizer: [], optimizerFor: undefined,
    contexts: prev ? prev.contexts : [], runs: prev ? prev.runs : [],
  };
  RING[next] = entry;
  next = (next + 1) % RING.length;
  last = entry;
  return entry as LayoutEntry<C, R>;
}

/** stageParams of shared/comm/stageParams.ts, computed once per layout and stage. */
export function cachedStageParams(plan: Plan, stage: number): StageParams {
  const list = layoutEntry(plan).stageParams;
  if (!Number.isInteger(stage) || stage < 0 || stage > 4096) return stageParams(plan, stage);
  let sp = list[stage];
  if (!sp) {
    sp = stageParams(plan, stage);
    list[stage] = sp;
  }
  return sp;
}

/** stageTraffic of shared/comm/stageTraffic.ts, computed once per layout, stage, gradient dtype and precision. */
export function cachedStageTraffic(plan: Plan, stage: number, entry?: LayoutEntry<unknown>): StageTraffic {
  const e = entry ?? layoutEntry(plan);
  const t = plan.training;
  if (!Number.isInteger(stage) || stage < 0 || stage > 4096) return stageTraffic(plan, stage, e.links, stageParams(plan, stage));
  let k = e.traffic[stage];
  if (!k || k.gradDtype !== t.gradDtype || k.precision !== t.precision) {
    k = stageTraffic(plan, stage, e.links, cachedStageParams(plan, stage));
    e.traffic[stage] = k;
  }
  return k;
}

/**
 * Whether two parallel specs agree on everything but the sharding: then step contexts, stage runs and stage parameters
 * are the same (they read no sharding field).
 */
export function sameCore(a: ParallelSpec, b: ParallelSpec): boolean {
  return a === b || (a.tp === b.tp && a.pp === b.pp && a.vpp === b.vpp && a.schedule === b.schedule && a.cp === b.cp && a.ep === b.ep
    && a.etp === b.etp && a.sp === b.sp && a.dp === b.dp && a.order === b.order && a.stageLayers === b.stageLayers
    && a.tpCommOverlap === b.tpCommOverlap);
}

/** Whether two training specs give the same step context (everything but recomputation, gradient dtype and optimizer). */
export function sameShape(a: TrainingSpec, b: TrainingSpec): boolean {
  return a === b || (a.microBatch === b.microBatch && a.seqLen === b.seqLen && a.precision === b.precision
    && a.flashAttention === b.flashAttention && a.gradAccum === b.gradAccum && a.globalBatch === b.globalBatch);
}
