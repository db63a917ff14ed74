import { countParams } from '../model/params';
import type { ModelSpec, Plan } from '../plan/types';

/**
 * DeepSpeed's own model-state estimators, reproduced so ShardLens can show "DeepSpeed's estimator would say X"
 * (deepspeed/runtime/zero/stage_1_and_2.py `estimate_zero2_model_states_mem_needs`, stage3.py
 * `estimate_zero3_model_states_mem_needs`; docs/formulas.md#model-states). Model states only: no activations, buffers or context.
 */

export interface DsEstimate {
  /** Bytes per CPU (host) and per GPU as DeepSpeed computes them (DeepSpeed prints them divided by 2^30, labelled "GB"). */
  readonly cpuBytes: number;
  readonly gpuBytes: number;
}

export interface DsCluster {
  readonly gpusPerNode: number;
  readonly nodes: number;
  /** DeepSpeed's `additional_buffer_factor` (default 1.5). */
  readonly bufferFactor?: number;
}

/**
 * ZeRO-2. Offload: GPU 2Ψ, CPU Ψ·max(4·total_gpus, 16)·abf. No offload: GPU 2Ψ + int(18Ψ/total_gpus), CPU 4Ψ·gpus_per_node·abf.
 * `formula: 'pre-2024'` gives the formula before DeepSpeed PR #5099 (2024-06-04), GPU 4Ψ + int(16Ψ/total_gpus),
 * which produced the tables in DeepSpeed's memory.rst.
 */
export function dsZero2Estimate(
  totalParams: number, cluster: DsCluster, cpuOffload: boolean, formula: 'current' | 'pre-2024' = 'current',
): DsEstimate {
  const total = cluster.gpusPerNode * cluster.nodes;
  const abf = cluster.bufferFactor ?? 1.5;
  if (cpuOffload) {
    return { gpuBytes: 2 * totalParams, cpuBytes: Math.trunc(totalParams * Math.max(4 * total, 16) * abf) };
  }
  const gpu = formula === 'current' ? 2 * totalParams + Math.trunc((18 * totalParams) / total) : 4 * totalParams + Math.trunc((16 * totalParams) / total);
  return { gpuBytes: gpu, cpuBytes: Math.trunc(totalParams * 4 * cluster.gpusPerNode * abf) };
}

export interface DsZero3Options {
  readonly offloadOptimizer: boolean;
  readonly offloadParams: boolean;
  readonly zeroInit: boolean;
}

/**
 * ZeRO-3 with largest_layer_memory = 4·largest_layer_params (16-bit params + grads of the largest layer) and
 * gpus_factor = 1/nodes. Both offloaded: GPU llm; CPU Ψ·18·gf·abf (zero.Init) or Ψ·max(4·gpn, 18·gf)·abf.
 * Optimizer only: GPU llm + int(2Ψ/total); CPU 16 instead of 18. None: GPU llm + int(18Ψ/total);
 * CPU largest·4·gpn·abf (zero.Init) or Ψ·4·gpn·abf.
 */
export function dsZero3Estimate(totalParams: number, largestLayerParams: number, cluster: DsCluster, o: DsZero3Options): DsEstimate {
  const total = cluster.gpusPerNode * cluster.nodes;
  const abf = cluster.bufferFactor ?? 1.5;
  const gf = 1 / cluster.nodes;
  const llm = 4 * largestLayerParams;
  const gpn = cluster.gpusPerNode;
  let gpu: number;
  let cpu: number;
  if (o.offloadOptimizer) {
    const k = o.offloadParams ? 18 : 16;
    gpu = o.offloadParams ? llm : llm + Math.trunc((2 * totalParams) / total);
    cpu = o.zeroInit ? totalParams * k * gf * abf : totalParams * Math.max(4 * gpn, k * gf) * abf;
  } else {
    gpu = llm + Math.trunc((18 * totalParams) / total);
    cpu = o.zeroInit ? largestLayerParams * 4 * gpn * abf : totalParams * 4 * gpn * abf;
  }
  return { gpuBytes: gpu, cpuBytes: Math.trunc(cpu) };
}

/** DeepSpeed's printout unit: bytes / 2^30, labelled "GB". */
export function dsGiB(bytes: number): number {
  return bytes / 2 ** 30;
}

/**
 * DeepSpeed's `largest_layer_params`: the most parameters one module owns directly (recurse=False), i.e. the largest of
 * the embedding/LM head (V·h), one MLP matrix (h·f), one q/o projection (h·a·d) and one routed expert matrix.
 */
export function largestLayerParams(model: ModelSpec): number {
  const h = model.hiddenSize;
  return Math.max(model.vocabSize * h, h * model.ffnSize, h * model.heads * model.headDim, model.moe ? h * model.moe.expertFfnSize : 0);
}

/** What DeepSpeed's estimator prints for this plan's ZeRO stage and offload options (undefined below ZeRO-2). */
export function deepspeedEstimateForPlan(plan: Plan): (DsEstimate & { readonly stage: 2 | 3; readonly totalParams: number; readonly largestLayerParams: number }) | undefined {
  const s = plan.parallel.sharding;
  if (s.stage < 2) return undefined;
  const totalParams = countParams(plan.model).parameters;
  const largest = largestLayerParams(plan.model);
  const cluster = { gpusPerNode: plan.cluster.gpusPerNode, nodes: plan.cluster.nodes };
  const e = s.stage === 2
    ? dsZero2Estimate(totalParams, cluster, s.offloadOptimizer !== 'none')
    : dsZero3Estimate(totalParams, largest, cluster, { offloadOptimizer: s.offloadOptimizer !== 'none', offloadParams: s.offloadParams !== 'none', zeroInit: true });
  return { ...e, stage: s.stage === 2 ? 2 : 3, totalParams, largestLayerParams: largest };
}
