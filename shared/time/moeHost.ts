/**
 * Host work a MoE layer's forward costs per micro-batch when the host launches the layer kernel by kernel.
 *
 * Megatron's token dispatchers copy the tokens per expert to the host every MoE layer to size the all-to-all and the
 * grouped GEMMs (megatron/core/transformer/moe/token_dispatcher.py `_maybe_dtoh_and_synchronize`; Transformer
 * Engine's GroupedLinear takes its `m_splits` as a host list). The copy synchronises: the GPU's queue drains, and the
 * rest of the layer runs as fast as Python launches it. What that costs is host time, not a kernel's, so no datasheet
 * gives it: it is one constant per MoE layer forward and micro-batch, `moeHostSeconds`, fitted on the published
 * Megatron-Bridge rows that run this way (data/time/moeHost.json, bench/measured/moeHost.ts; each row predicted with the
 * constant fitted on the others, docs/time-model.md#7-calibration-in-the-open). Their gaps without it are 0.7 to 4.7 ms
 * per layer and micro-batch. They differ between container releases for one layout (Qwen3-30B-A3B on 8 GB200 at 4
 * sequences: 3.8 ms in 25.11, 2.5 ms in 26.04.01), and within one release they shrink with longer micro-batches (26.04.01,
 * Blackwell: 1.4–2.5 ms at 4 sequences, 0.7–1.0 ms at 8), as longer kernels let the host run ahead again. Neither
 * follows from anything a config states, so one constant is what the rows can fit out of sample; held out, it halves
 * their error (bench/measured/moeHost.ts).
 *
 * It is not charged where the host is out of the way:
 * - under a full-iteration CUDA graph (`--cuda-graph-impl full_iteration`), the host launches nothing per layer;
 * - with dropping and padding to capacity and a dispatcher that then copies nothing to the host (all-to-all and flex
 *   skip the copy when `drop_and_pad`, the same function);
 * - with the EP overlap (`--overlap-moe-expert-parallel-comm`), whose merged forward-backward keeps another
 *   micro-batch's backward queued while the host waits (megatron/core/pipeline_parallel/combined_1f1b.py);
 *   Megatron-Bridge's Qwen3-235B-A22B row on 256 H100 runs so without graphs and is within 12 % without the term.
 * - in transformers' models (`training.modelImpl` 'hf'), whose default experts in transformers 5 are grouped GEMMs
 *   sized from the tokens per expert on the GPU (integrations/moe.py `grouped_mm_experts_forward`: histc and cumsum
 *   for the offsets, no copy to the host); transformers 4's loop over the experts, and `experts_implementation`
 *   "eager", sync once per expert and are told so (shared/time/problems.ts); a file that sets `eager` or
 *   `batched_mm` gets a warning that its experts are timed as grouped GEMMs ('hf-loop').
 * - in torchtitan without EP, whose LocalTokenDispatcher sorts the routed tokens on the GPU ('local-dispatch').
 * Other engines sync too (torchtitan's all-to-all split sizes under EP), but no published run measures them, and
 * Megatron-DeepSpeed runs DeepSpeed's own MoE layer (deepspeed/moe/sharded_moe.py, gating to a capacity): they keep a
 * warning instead (shared/time/problems.ts).
 */
import type { Plan } from '../plan/types';
import { modelImplOf, precisionRegimeOf } from '../memory/engine';
import type { TimeParams } from './params';

/** How a MoE plan's host meets its layers: charged ('eager'), or why not. */
export type MoeHostRegime = 'eager' | 'graphed' | 'no-sync' | 'overlapped' | 'sync-free' | 'hf-loop' | 'local-dispatch' | 'unmeasured-engine';

/** The plan's regime (meaningful for MoE plans only). */
export function moeHostRegime(plan: Plan): MoeHostRegime {
  if (plan.training.cudaGraph === 'full_iteration') return 'graphed';
  if (plan.model.moe?.capacityFactor !== undefined && plan.parallel.epDispatcher !== 'allgather') return 'no-sync';
  if (plan.parallel.epCommOverlap) return 'overlapped';
  if (plan.engine !== 'megatron' && plan.training.modelImpl === 'hf') {
    const impl = plan.training.expertsImpl;
    return impl === 'eager' || impl === 'batched_mm' ? 'hf-loop' : 'sync-free';
  }
  // torchtitan without EP sorts the routed tokens on the GPU (LocalTokenDispatcher: argsort, grouped_mm offsets from a
  // cumsum); with EP its dispatchers copy the all-to-all split sizes to the host (token_dispatcher.py, "this would
  // incur a device-to-host sync"; DeepEP's default compact path is host-synced too).
  if (plan.engine === 'fsdp2' && modelImplOf(plan) === 'torchtitan' && !(plan.parallel.ep > 1)) return 'local-dispatch';
  // Megatron-DeepSpeed runs DeepSpeed's MoE layer (capacity-padded gating and all-to-all), not Megatron's dispatchers.
  if (plan.engine !== 'megatron' || plan.training.regime === 'deepspeed') return 'unmeasured-engine';
  return 'eager';
}

/** Host seconds one MoE layer's forward adds per micro-batch: moeHostSeconds where charged, else 0. */
export function moeHostSeconds(plan: Plan, params: TimeParams): number {
  const s = params.moeHostSeconds;
  return moeHostRegime(plan) === 'eager' && s !== undefined && Number.isFinite(s) && s > 0 ? s : 0;
}

/**
 * transformers 5's grouped-GEMM experts get fp32 inputs: `_grouped_mm` is not autocast-enabled and casts its input to
 * the weight's dtype (transformers integrations/moe.py, pytorch/pytorch#174763), so fp32 weights under autocast
 * (transformers' models in the 'amp' regime, without LoRA) hand torch's grouped GEMM fp32 operands, which its CUDA
 * kernel does not take (torch.nn.functional.grouped_mm: bf16 inputs on CUDA; torch/_meta_registrations.py mirrors the
 * check: "Expected inputs of BF16 type"; test/probe/groupedMmDtypes.test.ts asks the pinned torch and transformers).
 */
export function expertsGetFp32Inputs(plan: Pick<Plan, 'engine' | 'training' | 'lora'>): boolean {
  return !plan.lora && plan.training.modelImpl === 'hf' && plan.engine !== 'megatron' && precisionRegimeOf(plan) === 'amp';
}
