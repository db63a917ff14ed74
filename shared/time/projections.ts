/**
 * How the engine's model lays out the input projections of a layer: Q, K and V as one GEMM or three, and a gated MLP's
 * gate and up projections as one GEMM or two. Separate GEMMs each read the whole input activation and, at high TP, run
 * at narrow widths (Llama 3 8B at TP 8: K and V are 128 columns wide), so the split costs time the fused layout does not.
 *
 * - Megatron-LM / NeMo (`linear_qkv`, and `linear_fc1` of width 2·ffn for SwiGLU) and nanotron (`qkv_proj`,
 *   `gate_up_proj`) fuse both (megatron/core/transformer/attention.py SelfAttention, mlp.py MLP; nanotron models/llama.py).
 * - torchtitan's Llama (`wq`, `wk`, `wv`; `w1`, `w3`: torchtitan/models/llama3/model.py) and Hugging Face Llama-family
 *   models (`q_proj`, `k_proj`, `v_proj`; `gate_proj`, `up_proj`: transformers models/llama/modeling_llama.py) keep them
 *   separate; torch.compile does not merge separate matmuls (Inductor's batch/group linear fusions are off by default).
 * - Plain-MLP architectures in the GPT-2 line keep one QKV weight in every implementation (GPT-2 `c_attn`, MPT `Wqkv`,
 *   GPT-NeoX/BLOOM/Falcon `query_key_value`).
 * Details: docs/time-model.md § GEMMs.
 */
import type { Plan } from '../plan/types';
import { modelImplOf } from '../memory/engine';

/** N widths of the GEMMs that compute Q, K, V and the MLP input on this rank. */
export interface ProjectionWidths {
  readonly qkv: readonly number[];
  readonly mlpIn: readonly number[];
}

/** Whether the engine's model computes Q, K and V with one weight (see the module comment). */
export function fusedQkv(plan: Pick<Plan, 'engine' | 'training' | 'model'>): boolean {
  return modelImplOf(plan) === 'megatron' || !plan.model.gatedMlp;
}

/** Whether a gated MLP's gate and up projections are one weight: Megatron's `linear_fc1` and nanotron's `gate_up_proj`. */
export function fusedGateUp(plan: Pick<Plan, 'engine' | 'training'>): boolean {
  return modelImplOf(plan) === 'megatron';
}

/**
 * The projection GEMM widths for `qHeads` query and `kvHeads` key/value heads of `headDim` and an MLP of `ffn` columns
 * on this rank: [(q + 2kv)·d] or [q·d, kv·d, kv·d] (q doubled by an output gate); [2·ffn] or [ffn, ffn] for a gated
 * MLP, [ffn] for a plain one.
 */
export function projectionWidths(plan: Pick<Plan, 'engine' | 'training' | 'model'>, qHeads: number, kvHeads: number, headDim: number, ffn: number): ProjectionWidths {
  // An output gate doubles the query projection (Qwen3-Next, Qwen3.5: transformers q_proj of 2·a·d outputs).
  const q = (plan.model.attentionOutputGate ? 2 : 1) * qHeads;
  const qkv = fusedQkv(plan) ? [(q + 2 * kvHeads) * headDim] : [q * headDim, kvHeads * headDim, kvHeads * headDim];
  const mlpIn = !plan.model.gatedMlp ? [ffn] : fusedGateUp(plan) ? [2 * ffn] : [ffn, ffn];
  return { qkv, mlpIn };
}
