/**
 * Where a quantized LoRA base's bytes live under FSDP or ZeRO-3: what the engine shards and gathers, and what every
 * rank keeps whole. Memory (shared/memory/stage.ts) and traffic (shared/comm/stageTraffic.ts) read the same split.
 */
import type { Plan } from '../plan/types';
import { dtypeBytes, NF4_CONSTANT_BYTES, NF4_DATA_BYTES } from './dtypes';
import { modelImplOf } from './engine';

/** Bytes per frozen base weight: the part sharding divides and gathers, and the part each rank holds in full. */
export interface BaseBytes {
  readonly sharded: number;
  readonly replicated: number;
}

/**
 * bitsandbytes' 4-bit weights (transformers, PEFT, Accelerate, Axolotl, LLaMA-Factory): with `bnb_4bit_quant_storage`
 * the packed codes are the parameter's data, which FSDP flattens, shards and gathers (0.5 bytes a weight); the
 * absmax and double-quantization constants live in a QuantState kept on the module (bitsandbytes nn/modules.py
 * Params4bit `_quantize` sets `module.quant_state`; `fix_4bit_weight_quant_state_from_module` re-attaches it after
 * FSDP replaces the parameter), not a parameter or buffer the engine shards, so every rank holds all of them on its
 * GPU. torchao's NF4Tensor (torchtune) shards and gathers its scalers with its codes (torchao 0.18
 * quantization/quantize_/workflows/nf4/nf4_tensor.py: `fsdp_pre_all_gather` returns quantized_scalers,
 * quantization_factor and quantized_data): nothing stays whole there.
 */
export function frozenBaseBytes(plan: Pick<Plan, 'lora' | 'engine' | 'training'>): BaseBytes {
  const base = plan.lora?.baseDtype ?? 'bf16';
  if (base === 'nf4' && modelImplOf(plan) !== 'torchtitan') return { sharded: NF4_DATA_BYTES, replicated: NF4_CONSTANT_BYTES };
  return { sharded: dtypeBytes(base), replicated: 0 };
}
