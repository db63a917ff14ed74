/**
 * What the probe should measure for a mode, from first principles and the core's communication volumes, for the
 * engine that actually runs (PyTorch's ZeroRedundancyOptimizer keeps DDP's all-reduce and adds broadcasts; DeepSpeed
 * ZeRO-1/2 would reduce-scatter and all-gather instead).
 */
import { dpGradAllReduceBytes, zero3AllGathersPerMicrobatch, zeroGradReduceScatterBytes, zeroParamAllGatherBytes } from '../../shared/comm/volumes';
import type { OptimizerKind, Precision } from '../../shared/plan/types';
import type { ProbeMode } from './types';

/** Bytes per element of parameters and gradients as the probe holds them: fp32 except pure bf16 (torch autocast keeps fp32 weights). */
export function probeElementBytes(precision: Precision): number {
  return precision === 'bf16' ? 2 : 4;
}

/** Optimizer state elements per parameter: Adam/AdamW m and v (2), SGD with momentum (1), plain SGD (0) (torch.optim). */
export function optimizerStatesPerParam(opt: OptimizerKind): number {
  return opt === 'adam' || opt === 'adamw' ? 2 : opt === 'sgd-momentum' ? 1 : 0;
}

export interface ExpectedModelStates {
  readonly parametersBytes: number;
  readonly gradientsBytes: number;
  readonly optimizerStatesBytes: number;
}

/**
 * Per-rank model states with an ideal 1/N split (Rajbhandari et al. 2020 §5): parameters b·Ψ (÷N at stage 3),
 * gradients b·Ψ (÷N from stage 2), optimizer k·b·Ψ (÷N from stage 1), with b the element bytes and k the states per parameter.
 */
export function expectedModelStates(psi: number, stage: 0 | 1 | 2 | 3, n: number, precision: Precision, opt: OptimizerKind): ExpectedModelStates {
  const b = probeElementBytes(precision);
  return {
    parametersBytes: (b * psi) / (stage >= 3 ? n : 1),
    gradientsBytes: (b * psi) / (stage >= 2 ? n : 1),
    optimizerStatesBytes: (optimizerStatesPerParam(opt) * b * psi) / (stage >= 1 ? n : 1),
  };
}

/**
 * Optimizer-state share of every rank under ZeroRedundancyOptimizer's partition: tensors sorted by size (largest
 * first), each given to the rank with the fewest elements so far (torch/distributed/optim/zero_redundancy_optimizer.py,
 * `_partition_parameters`). Returns elements per rank.
 */
export function zeroRedundancyPartition(tensorNumels: readonly number[], n: number): number[] {
  const sizes = new Array<number>(Math.max(1, n)).fill(0);
  // A stable sort keeps equal sizes in module order, as Python's sorted() does.
  for (const numel of [...tensorNumels].sort((a, b) => b - a)) {
    let min = 0;
    for (let r = 1; r < sizes.length; r++) if (sizes[r] < sizes[min]) min = r;
    sizes[min] += numel;
  }
  return sizes;
}

/**
 * Collective payloads per step that torch issues for a mode (keys as the probe names them). FSDP wraps each decoder
 * block as a unit; the root unit (embeddings, final norm, head: `rootParams`) is not resharded after forward, so
 * FULL_SHARD gathers Ψ in forward and Ψ − Ψ_root again in backward (torch/distributed/fsdp, root reshard rule).
 */
export function expectedCollectives(mode: ProbeMode, psi: number, precision: Precision, rootParams = 0): Readonly<Record<string, number>> {
  const b = probeElementBytes(precision);
  switch (mode) {
    case 'ddp':
      // DDP all-reduces every gradient bucket once per step (torch/nn/parallel/distributed.py Reducer).
      return { ddp_bucket_allreduce: dpGradAllReduceBytes(psi, b) };
    case 'zero1':
      // DDP's all-reduce, then every rank's updated parameters are broadcast (ZeroRedundancyOptimizer._sync_params).
      return { ddp_bucket_allreduce: dpGradAllReduceBytes(psi, b), broadcast: zeroParamAllGatherBytes(psi, b) };
    case 'fsdp-no-shard':
      return { all_reduce: dpGradAllReduceBytes(psi, b) };
    case 'fsdp-shard-grad-op':
      return { all_gather: zero3AllGathersPerMicrobatch(false) * zeroParamAllGatherBytes(psi, b), reduce_scatter: zeroGradReduceScatterBytes(psi, b) };
    case 'fsdp-full-shard':
    case 'fsdp-hybrid-shard': {
      const blocks = Math.max(0, psi - rootParams);
      const gathered = zeroParamAllGatherBytes(rootParams, b) + zero3AllGathersPerMicrobatch(true) * zeroParamAllGatherBytes(blocks, b);
      return { all_gather: gathered, reduce_scatter: zeroGradReduceScatterBytes(psi, b) };
    }
    default:
      return {};
  }
}
