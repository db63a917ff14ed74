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
import { deepspeedBf16Optimizer, optimizerImplOf, precisionRegimeOf } from '../memory/engine';
import { regimeBytes } from '../memory/regime';
import { dtypeBytes, optimizerBytesPerParam, optimizerStateElementBytes } from '../memory/dtypes';

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

/** Optimizer families whose fused step is one elementwise pass over the parameter, its gradient and its states. */
const ELEMENTWISE_STEP = new Set(['adam', 'adamw', 'sgd', 'sgd-momentum', 'lion']);

/**
 * HBM bytes one fused optimizer step touches per parameter, from the bytes the engine keeps per parameter (the memory
 * model's precision regime, shared/memory/regime.ts): read the gradient (g); read and write the weight it updates,
 * the fp32 master where there is one (2m) and then copy it to the 16-bit parameter in a second kernel (m + p: Megatron's
 * _copy_main_params_to_model_params, DeepSpeed's partition copy), else the parameter itself (2p); read and write the
 * states (2s, s the state bytes per parameter the memory model counts). Megatron bf16: 4 + 8 + 6 + 16 = 34; FSDP2 and
 * autocast with fp32 parameters: 4 + 8 + 16 = 28; pure bf16 (torchtune, LitGPT bf16-true): 2 + 4 + 8 = 14.
 */
export function fusedStepBytesPerParam(grad: number, param: number, master: number, states: number): number {
  return grad + (master > 0 ? 2 * master + master + param : 2 * param) + 2 * states;
}

/**
 * HBM bytes one optimizer step touches per parameter: one fused kernel (fusedStepBytesPerParam for Adam, AdamW, SGD and
 * Lion; data/timing.json for the families with other kernels: 8-bit Adam's blockwise quantization, Adafactor's factored
 * statistics, Muon), or for PyTorch's foreach and for-loop implementations one pass per op over fp32 elements
 * (optimizerBytesPerParamUnfused), half of it with 16-bit states (pure bf16).
 */
export function optimizerTrafficBytesPerParam(plan: Plan): number {
  const fused: Readonly<Record<string, number>> = timing.optimizerBytesPerParam;
  const unfused: Readonly<Record<string, number>> = timing.optimizerBytesPerParamUnfused;
  const t = plan.training;
  const o = t.optimizer;
  // State element bytes as the memory model keeps them: 16-bit under pure bf16.
  const stateElement = optimizerStateElementBytes(t.precision);
  if (optimizerImplOf(plan) !== 'fused' && unfused[o] !== undefined) return (unfused[o] * stateElement) / 4;
  if (!ELEMENTWISE_STEP.has(o)) return fused[o] ?? 32;
  const rb = regimeBytes(precisionRegimeOf(plan), t.precision);
  return fusedStepBytesPerParam(rb.grad ?? dtypeBytes(t.gradDtype), rb.param, rb.master, optimizerBytesPerParam(o, plan.model.hiddenSize, stateElement));
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
