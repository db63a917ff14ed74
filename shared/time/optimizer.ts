/**
 * Optimizer step time: a memory-bound pass over the rank's parameter shard (or a CPU pass when offloaded), plus the
 * launches of its multi-tensor kernels per parameter group.
 */
import timing from '../../data/timing.json';
import type { Plan } from '../plan/types';
import { stageParams, type StageParams } from '../comm/stageParams';
import { TimeCache, sameKey, type LayoutEntry } from './cache';
import { timeContext, type TimeContext } from './context';
import { posInt } from './shape';
import { deepspeedBf16Optimizer, optimizerImplOf } from '../memory/engine';

/** Trainable parameters one rank of a stage updates: its ZeRO/FSDP shard of the stage's trainable parameters (LoRA: adapters). */
export function trainableShardParams(plan: Plan, stage: number, sp: StageParams = stageParams(plan, stage)): number {
  const par = plan.parallel;
  const dpSize = posInt(par.dp) * posInt(par.cp);
  // The shard group counts DP ranks and spans the CP ranks as well (shared/comm/layout.ts).
  // BF16_Optimizer (DeepSpeed without ZeRO in bf16) updates its partition like ZeRO-1 (deepspeedBf16Optimizer).
  const sharded = par.sharding.stage >= 1 || deepspeedBf16Optimizer(plan);
  const shard = sharded ? Math.min(dpSize, posInt(par.sharding.shardGroupSize || par.dp) * posInt(par.cp)) : 1;
  return sp.trainable / shard;
}

/**
 * HBM bytes one optimizer step touches per parameter (data/timing.json, per optimizer family): one fused kernel, or one
 * fp32 pass per op for PyTorch's foreach and for-loop implementations (optimizerBytesPerParamUnfused).
 */
export function optimizerTrafficBytesPerParam(plan: Plan): number {
  const fused: Readonly<Record<string, number>> = timing.optimizerBytesPerParam;
  const unfused: Readonly<Record<string, number>> = timing.optimizerBytesPerParamUnfused;
  const o = plan.training.optimizer;
  if (optimizerImplOf(plan) !== 'fused' && unfused[o] !== undefined) return unfused[o];
  return fused[o] ?? 32;
}

/**
 * Parameter tensors per layer group the optimizer walks (weights and biases of a layer, ~12; PyTorch multi-tensor
 * apply launches one kernel per chunk of them, so the step costs ⌈layers·12/chunk⌉ launches per fused op).
 */
const TENSORS_PER_LAYER = 12;
const TENSORS_PER_LAUNCH = 64;
const KERNELS_PER_CHUNK = 4;

/**
 * Optimizer step seconds: Ψ_shard · bytes_touched / (HBM · memoryFraction) plus ⌈tensors/64⌉·4 launch gaps
 * (multi-tensor Adam), or Ψ_shard · bytes_touched / CPU optimizer throughput when offloaded (Ren et al. 2021).
 */
export function optimizerSeconds(plan: Plan, stage: number, ctx: TimeContext, sp?: StageParams, kernelGap = 0): number {
  const bytes = trainableShardParams(plan, stage, sp) * optimizerTrafficBytesPerParam(plan);
  if (plan.parallel.sharding.offloadOptimizer !== 'none') return bytes / timing.cpuOptimizerBytesPerSecond;
  const layers = Math.max(1, Math.ceil(posInt(plan.model.layers) / posInt(plan.parallel.pp)));
  return ctx.hbmSeconds(bytes) + Math.ceil((layers * TENSORS_PER_LAYER) / TENSORS_PER_LAUNCH) * KERNELS_PER_CHUNK * kernelGap;
}

/** optimizerSeconds, kept per layout, stage and 'optimizer' key: it reads nothing else that varies. */
export function cachedOptimizerSeconds(plan: Plan, stage: number, sp: StageParams, cache: TimeCache, ctx: TimeContext = timeContext(plan, cache), entry?: LayoutEntry): number {
  const e = entry ?? cache.entry(plan);
  if (!Number.isInteger(stage) || stage < 0 || stage > 4096) return optimizerSeconds(plan, stage, ctx, sp, cache.params.kernelGap);
  if (!e.optimizerFor || !sameKey('optimizer', e.optimizerFor, plan)) {
    e.optimizer.length = 0;
    e.optimizerFor = plan;
  }
  let t = e.optimizer[stage];
  if (t === undefined) {
    t = optimizerSeconds(plan, stage, ctx, sp, cache.params.kernelGap);
    e.optimizer[stage] = t;
  }
  return t;
}
