/** Optimizer step time: a memory-bound pass over the rank's parameter shard (or a CPU pass when offloaded). */
import timing from '../../data/timing.json';
import type { Plan } from '../plan/types';
import { stageParams, type StageParams } from '../comm/stageParams';
import { hbmBandwidth, type TimeContext } from './context';
import { posInt } from './shape';
import { layoutEntry, type LayoutEntry } from './layoutCache';

/** Trainable parameters one rank of a stage updates: its ZeRO/FSDP shard of the stage's trainable parameters (LoRA: adapters). */
export function trainableShardParams(plan: Plan, stage: number, sp: StageParams = stageParams(plan, stage)): number {
  const par = plan.parallel;
  const dpSize = posInt(par.dp) * posInt(par.cp);
  const shard = par.sharding.stage >= 1 ? Math.min(dpSize, posInt(par.sharding.shardGroupSize || dpSize)) : 1;
  return sp.trainable / shard;
}

/** HBM bytes one optimizer step touches per parameter (data/timing.json, per optimizer family). */
export function optimizerTrafficBytesPerParam(plan: Plan): number {
  const table: Readonly<Record<string, number>> = timing.optimizerBytesPerParam;
  return table[plan.training.optimizer] ?? 32;
}

/**
 * Optimizer step seconds: Ψ_shard · bytes_touched / HBM bandwidth (memory-bound elementwise update, roofline),
 * or Ψ_shard · bytes_touched / CPU optimizer throughput when offloaded (Ren et al. 2021, ZeRO-Offload CPU-Adam).
 */
export function optimizerSeconds(plan: Plan, stage: number, ctx?: TimeContext, sp?: StageParams): number {
  const bytes = trainableShardParams(plan, stage, sp) * optimizerTrafficBytesPerParam(plan);
  if (plan.parallel.sharding.offloadOptimizer !== 'none') return bytes / timing.cpuOptimizerBytesPerSecond;
  return bytes / (ctx ? ctx.hbm : hbmBandwidth(plan));
}

/** optimizerSeconds, kept per layout (shared/time/layoutCache.ts), stage and optimizer: it reads nothing else that varies. */
export function cachedOptimizerSeconds(plan: Plan, stage: number, sp: StageParams, entry?: LayoutEntry<unknown>): number {
  const e = entry ?? layoutEntry(plan);
  if (!Number.isInteger(stage) || stage < 0 || stage > 4096) return optimizerSeconds(plan, stage, undefined, sp);
  if (e.optimizerFor !== plan.training.optimizer) {
    e.optimizer.length = 0;
    e.optimizerFor = plan.training.optimizer;
  }
  let t = e.optimizer[stage];
  if (t === undefined) {
    t = optimizerSeconds(plan, stage, undefined, sp);
    e.optimizer[stage] = t;
  }
  return t;
}
