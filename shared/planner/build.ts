/**
 * Turns a base plan and a layout into the plan the estimators read. Plans stay immutable: each call spreads the
 * base objects and replaces only the layout's fields.
 */
import { rederive } from '../plan/derive';
import { overlapCommDefault, reshardFor } from '../plan/derived';
import type { ClusterSpec, InputSource, OffloadTarget, ParallelSpec, Plan, ShardingSpec, ShardingStyle, TrainingSpec } from '../plan/types';
import type { Layout } from './types';
import type { PlanPath } from '../plan/paths';

/** The parallel choices of a layout, without its costs. */
export type LayoutChoice = Omit<Layout, 'stepSeconds' | 'peakAllocatedBytes' | 'peakReservedBytes' | 'fits' | 'estimate'>;

/**
 * The sharding a framework uses for a ZeRO-equivalent stage and an optimizer offload target, or undefined when the
 * framework cannot express it (Megatron: distributed optimizer = ZeRO-1 only; FSDP: no ZeRO-1; offload needs sharding).
 */
export function shardingFor(
  base: ShardingSpec, zero: 0 | 1 | 2 | 3, offload: OffloadTarget, dp: number, shardGroup = dp,
): ShardingSpec | undefined {
  if (offload !== 'none' && zero === 0) return undefined;
  const common = { shardGroupSize: shardGroup, offloadOptimizer: offload };
  const style: ShardingStyle = base.style;
  const hybrid = shardGroup < dp;
  if (hybrid) {
    // HSDP (PyTorch FSDP HYBRID_SHARD / _HYBRID_SHARD_ZERO2): FSDP only, sharded stages only.
    if ((style !== 'fsdp' && style !== 'fsdp2') || (zero !== 2 && zero !== 3) || dp % shardGroup !== 0) return undefined;
    if (offload !== 'none') return undefined;
    const fsdpStrategy = zero === 3 ? 'HYBRID_SHARD' : '_HYBRID_SHARD_ZERO2';
    return { ...base, ...common, stage: zero, fsdpStrategy, offloadParams: 'none' };
  }
  if (style === 'deepspeed') {
    return { ...base, ...common, stage: zero, offloadParams: zero === 3 ? base.offloadParams : 'none' };
  }
  if (style === 'fsdp' || style === 'fsdp2') {
    if (zero === 1) return undefined;
    // FSDP offloads parameters, gradients and optimizer states together (CPUOffload(offload_params=True)).
    if (offload !== 'none' && zero !== 3) return undefined;
    const fsdpStrategy = zero === 3 ? 'FULL_SHARD' : zero === 2 ? 'SHARD_GRAD_OP' : 'NO_SHARD';
    return { ...base, ...common, stage: zero, fsdpStrategy, offloadParams: offload };
  }
  if (zero > 1) return undefined;
  return { ...base, ...common, style: zero === 1 ? 'megatron-distopt' : 'ddp', stage: zero, offloadParams: 'none' };
}

/**
 * A layout's sharding with the values derivePlan derives from the stage and degrees (gradient-reduction overlap,
 * torchtitan's reshard policy) derived again unless the base plan's file states them: the search's plans then equal
 * planForLayout's.
 */
export function rederivedSharding(base: Plan, s: ShardingSpec, pp: number): ShardingSpec {
  const stated = base.stated;
  if (!stated) return s;
  const ss = stated.parallel?.sharding;
  const overlapComm = ss?.overlapComm ?? overlapCommDefault(s.style, s.stage);
  const reshardAfterForward = reshardFor(s.style, s.stage, ss?.reshardAfterForward, stated.format, pp);
  return overlapComm === s.overlapComm && reshardAfterForward === s.reshardAfterForward ? s : { ...s, overlapComm, reshardAfterForward };
}

/** The cluster for a GPU count: whole nodes of the base node size, or one partial node. */
export function clusterFor(base: ClusterSpec, gpus: number): ClusterSpec | undefined {
  if (!Number.isInteger(gpus) || gpus < 1) return undefined;
  if (gpus === base.gpusPerNode * base.nodes) return base;
  if (gpus < base.gpusPerNode) return { ...base, gpusPerNode: gpus, nodes: 1 };
  if (gpus % base.gpusPerNode !== 0) return undefined;
  return { ...base, nodes: gpus / base.gpusPerNode };
}

/** The parallel spec of a layout (schedule interleaved when VPP > 1). */
export function parallelFor(
  base: ParallelSpec, c: Pick<LayoutChoice, 'tp' | 'pp' | 'vpp' | 'cp' | 'ep' | 'dp' | 'sp' | 'stageLayers'>, sharding: ShardingSpec,
): ParallelSpec {
  const schedule = c.vpp > 1 ? 'interleaved' : base.schedule === 'interleaved' ? '1f1b' : base.schedule;
  // Explicit literals (no spread): this runs once per layout family in the search loop.
  if (c.stageLayers) {
    return {
      dp: c.dp, tp: c.tp, sp: c.sp, pp: c.pp, vpp: c.vpp, schedule, cp: c.cp, ep: c.ep, etp: c.tp, sharding,
      order: base.order, tpCommOverlap: base.tpCommOverlap, epDispatcher: base.epDispatcher, epCommOverlap: base.epCommOverlap, stageLayers: c.stageLayers,
    };
  }
  return {
    dp: c.dp, tp: c.tp, sp: c.sp, pp: c.pp, vpp: c.vpp, schedule, cp: c.cp, ep: c.ep, etp: c.tp, sharding,
    order: base.order, tpCommOverlap: base.tpCommOverlap, epDispatcher: base.epDispatcher, epCommOverlap: base.epCommOverlap,
  };
}

/**
 * The training spec of a layout: the base plan's, with a new micro batch, accumulation and recomputation. Everything
 * else the file said stays (the model's implementation, the
 * loss, Liger's kernels, the optimizer's, packing, …): the search must estimate the plan the full estimate re-reads.
 * Built once per (micro batch, accumulation) and recomputation in a search (search.ts trainingCache).
 */
export function trainingFor(base: TrainingSpec, c: Pick<LayoutChoice, 'microBatch' | 'gradAccum' | 'recompute'>): TrainingSpec {
  return { ...base, microBatch: c.microBatch, gradAccum: c.gradAccum, recompute: c.recompute };
}

/** The plan the search evaluates: base plan with a new cluster, parallel and training spec (sources unchanged). */
export function searchPlan(base: Plan, cluster: ClusterSpec, parallel: ParallelSpec, training: TrainingSpec): Plan {
  return base.lora
    ? { engine: base.engine, model: base.model, training, parallel, cluster, overhead: base.overhead, lora: base.lora, sources: base.sources }
    : { engine: base.engine, model: base.model, training, parallel, cluster, overhead: base.overhead, sources: base.sources };
}

const PLANNER_SOURCE = { kind: 'derived', detail: 'layout planner' } as const;
const CHANGED_PATHS: readonly PlanPath[] = [
  'parallel.dp', 'parallel.tp', 'parallel.sp', 'parallel.pp', 'parallel.vpp', 'parallel.cp', 'parallel.ep', 'parallel.etp',
  'parallel.stageLayers', 'parallel.sharding.stage', 'parallel.sharding.style', 'parallel.sharding.fsdpStrategy',
  'parallel.sharding.shardGroupSize', 'parallel.sharding.offloadOptimizer', 'parallel.sharding.offloadParams',
  'training.microBatch', 'training.gradAccum', 'training.recompute', 'cluster.gpusPerNode', 'cluster.nodes', 'cluster.worldSize',
];

/**
 * The full plan of a layout: the base plan's stated inputs with the layout's choices in their place, derived again by
 * derivePlan (overlap, reshard policy, buckets and schedule follow the new stage and degrees as they would in the
 * file); the engine stays the base plan's. Undefined when the framework cannot express the layout.
 */
export function planForLayout(base: Plan, c: LayoutChoice, gpus: number): Plan | undefined {
  const chosen = shardingFor(base.parallel.sharding, c.zero, c.offload, c.dp, c.shardGroup ?? c.dp);
  const cluster = clusterFor(base.cluster, gpus);
  if (!chosen || !cluster) return undefined;
  const sharding = rederivedSharding(base, chosen, c.pp);
  const sources: Partial<Record<PlanPath, InputSource>> = {};
  for (const p of CHANGED_PATHS) sources[p] = PLANNER_SOURCE;
  return rederive(base, {
    engine: base.engine,
    cluster: { worldSize: gpus, gpusPerNode: cluster.gpusPerNode, nodes: cluster.nodes },
    parallel: {
      dp: c.dp, tp: c.tp, pp: c.pp, vpp: c.vpp, cp: c.cp, ep: c.ep, etp: c.tp, sp: c.sp,
      stageLayers: c.stageLayers, firstStageLayers: undefined, lastStageLayers: undefined, vppLayers: undefined, dpReplicate: undefined, shardInstances: undefined,
      sharding: {
        style: sharding.style, stage: sharding.stage, fsdpStrategy: sharding.fsdpStrategy, shardGroupSize: sharding.shardGroupSize,
        offloadOptimizer: sharding.offloadOptimizer, offloadParams: sharding.offloadParams, reshardAfterForward: sharding.reshardAfterForward,
      },
    },
    training: { microBatch: c.microBatch, gradAccum: c.gradAccum, globalBatch: base.training.globalBatch, recompute: c.recompute, deviceBatch: undefined },
    sources,
  });
}

/** The layout a plan already uses (for "current vs proposed" deltas). */
export function layoutOfPlan(plan: Plan): LayoutChoice {
  const p = plan.parallel;
  return {
    tp: p.tp, pp: p.pp, vpp: p.vpp, cp: p.cp, ep: p.ep, dp: p.dp, sp: p.sp,
    zero: p.sharding.stage, sharding: p.sharding.style, fsdpStrategy: p.sharding.fsdpStrategy,
    ...(p.sharding.shardGroupSize < p.dp ? { shardGroup: p.sharding.shardGroupSize } : {}),
    distributedOptimizer: p.sharding.style === 'megatron-distopt',
    microBatch: plan.training.microBatch, gradAccum: plan.training.gradAccum, recompute: plan.training.recompute,
    offload: p.sharding.offloadOptimizer, stageLayers: p.stageLayers,
  };
}
