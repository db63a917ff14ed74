/**
 * Sharding variants of the current plan for the memory dashboard: replicated DP, ZeRO-1/2/3, FSDP FULL_SHARD,
 * SHARD_GRAD_OP and HSDP, and a sweep over the data-parallel size (the picture of the ZeRO paper's Table 1).
 * Pure: the memory estimator is passed in, so this runs in the extension host and in unit tests alike.
 */
import type { MemoryEstimate } from '../../shared/plan/result';
import type { Plan, ShardingSpec } from '../../shared/plan/types';
import type { DpSweep, MemoryVariant } from '../../shared/protocol';
import { currentLabel } from '../../shared/wording/sharding';
import { clean, stageBar } from './components';

export { currentLabel };

/** The core's memory estimate of a plan (shared/memory), or undefined while the core is not available. */
export type EstimateFn = (plan: Plan) => MemoryEstimate | undefined;

interface VariantDef {
  readonly id: string;
  readonly label: string;
  readonly sharding: (p: Plan) => Partial<ShardingSpec> | undefined;
}

/** ZeRO stage k with DeepSpeed semantics over the whole data-parallel group. */
const zero = (stage: 0 | 1 | 2 | 3) => (p: Plan): Partial<ShardingSpec> => ({
  style: stage === 0 ? 'ddp' : 'deepspeed', stage, shardGroupSize: p.parallel.dp, fsdpStrategy: undefined,
  offloadOptimizer: 'none', offloadParams: 'none',
});

/** FSDP with a strategy; HSDP shards within a node and replicates across nodes. */
const fsdp = (strategy: 'FULL_SHARD' | 'SHARD_GRAD_OP' | 'HYBRID_SHARD') => (p: Plan): Partial<ShardingSpec> | undefined => {
  const dp = p.parallel.dp;
  const perNode = Math.max(1, Math.floor(p.cluster.gpusPerNode / Math.max(1, p.parallel.tp * p.parallel.cp)));
  const group = strategy === 'HYBRID_SHARD' ? Math.min(dp, perNode) : dp;
  if (strategy === 'HYBRID_SHARD' && (group >= dp || dp % group !== 0)) return undefined;
  return {
    style: 'fsdp', stage: strategy === 'SHARD_GRAD_OP' ? 2 : 3, fsdpStrategy: strategy, shardGroupSize: group,
    offloadOptimizer: 'none', offloadParams: 'none',
  };
};

const DEFS: readonly VariantDef[] = [
  { id: 'replicated', label: 'DP (replicated)', sharding: zero(0) },
  { id: 'zero1', label: 'ZeRO-1', sharding: zero(1) },
  { id: 'zero2', label: 'ZeRO-2', sharding: zero(2) },
  { id: 'zero3', label: 'ZeRO-3', sharding: zero(3) },
  { id: 'fsdp-grad-op', label: 'FSDP grad-op', sharding: fsdp('SHARD_GRAD_OP') },
  { id: 'fsdp-full', label: 'FSDP full', sharding: fsdp('FULL_SHARD') },
  { id: 'hsdp', label: 'HSDP', sharding: fsdp('HYBRID_SHARD') },
];

/** The plan with its sharding replaced. */
function withSharding(plan: Plan, s: Partial<ShardingSpec>): Plan {
  return { ...plan, parallel: { ...plan.parallel, sharding: { ...plan.parallel.sharding, ...s } } };
}

/**
 * The memory variants: the file as written first, then each standard variant the estimator can compute.
 * Without an estimator only the file and the server's replicated baseline are shown.
 */
export function memoryVariants(plan: Plan | undefined, memory: MemoryEstimate, estimate?: EstimateFn): MemoryVariant[] {
  const out: MemoryVariant[] = [{
    id: 'current', label: plan ? currentLabel(plan.parallel.sharding) : 'This file', current: true,
    stages: memory.stages.map(stageBar),
  }];
  if (!plan || !estimate) {
    out.push({ id: 'replicated', label: 'DP (replicated)', current: false, stages: memory.replicated.stages.map(stageBar) });
    return out;
  }
  for (const def of DEFS) {
    const s = def.sharding(plan);
    if (!s) continue;
    const m = safeEstimate(estimate, withSharding(plan, s));
    if (m && m.stages.length) out.push({ id: def.id, label: def.label, current: false, stages: m.stages.map(stageBar) });
  }
  return out;
}

function safeEstimate(estimate: EstimateFn, plan: Plan): MemoryEstimate | undefined {
  try {
    return estimate(plan);
  } catch {
    return undefined;
  }
}

/** Data-parallel sizes of the sweep: powers of two from 1 to max(1024, current dp). */
export function sweepSizes(dp: number): number[] {
  const out: number[] = [];
  for (let n = 1; n <= Math.max(1024, dp); n *= 2) out.push(n);
  if (!out.includes(dp) && dp > 0) out.push(dp);
  return out.sort((a, b) => a - b);
}

/**
 * Model-state bytes per GPU of the peak stage for replicated DP and ZeRO-1/2/3 at each dp size, all else fixed
 * (Rajbhandari et al. 2020, Table 1 varies N_d the same way).
 */
export function dpSweep(plan: Plan | undefined, estimate?: EstimateFn): DpSweep | undefined {
  if (!plan || !estimate) return undefined;
  const dpSizes = sweepSizes(plan.parallel.dp);
  const series = ([0, 1, 2, 3] as const).map((stage) => {
    const bytes = dpSizes.map((dp) => {
      const p: Plan = { ...plan, parallel: { ...plan.parallel, dp } };
      const m = safeEstimate(estimate, withSharding(p, zero(stage)(p)));
      return m ? Math.max(0, ...m.stages.map((s) => clean(s.modelStatesBytes))) : 0;
    });
    return { label: stage === 0 ? 'DP (replicated)' : `ZeRO-${stage}`, bytes };
  });
  return series.some((s) => s.bytes.some((b) => b > 0)) ? { dpSizes, series } : undefined;
}
