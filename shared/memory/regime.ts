/**
 * Bytes per parameter each precision regime keeps (shared/memory/engine.ts `precisionRegimeOf`; facts and sources in
 * docs/engine-memory.md#precision-regimes). The same `--bf16` costs different bytes per engine.
 */
import type { Precision, PrecisionRegime } from '../plan/types';
import { masterBytesOf, paramBytesOf } from './dtypes';

export interface RegimeBytes {
  /** Stored parameter bytes (before ZeRO/FSDP sharding). */
  readonly param: number;
  /** Gradient bytes as the optimizer sees them (undefined: the plan's gradient dtype). */
  readonly grad: number | undefined;
  /** fp32 master copy bytes. */
  readonly master: number;
  /** Bytes of one parameter gathered for compute (FSDP's param dtype). */
  readonly gathered: number;
}

/**
 * - amp (torch.autocast: HF Trainer / Accelerate DDP, Lightning `*-mixed`): fp32 weights and fp32 gradients, no master
 *   copy; autocast casts each weight to 16 bits inside the op (PyTorch AMP docs).
 * - fsdp2 (`fully_shard` with MixedPrecisionPolicy): fp32 sharded parameters and fp32 sharded gradients (the reduced
 *   gradient is cast to the sharded parameter's dtype), no master copy; parameters are gathered in `param_dtype`
 *   (torch/distributed/fsdp/_fully_shard/_fsdp_param.py).
 * - bf16-true (torchtune, LitGPT `bf16-true`): bf16 weights and gradients, no master copy.
 * - fp32: everything fp32.
 * - megatron, deepspeed: 16-bit weights, fp32 master weights; gradients in the plan's gradient dtype (Megatron's fp32
 *   main_grad unless `--grad-reduce-in-bf16`; DeepSpeed's 16-bit gradient partitions).
 */
export function regimeBytes(regime: PrecisionRegime, precision: Precision): RegimeBytes {
  const half = paramBytesOf(precision);
  switch (regime) {
    case 'amp': return { param: 4, grad: 4, master: 0, gathered: 4 };
    case 'fsdp2': return { param: 4, grad: 4, master: 0, gathered: half };
    case 'bf16-true': return { param: 2, grad: 2, master: 0, gathered: 2 };
    case 'fp32': return { param: 4, grad: 4, master: 0, gathered: 4 };
    default: return { param: half, grad: undefined, master: masterBytesOf(precision), gathered: half };
  }
}
