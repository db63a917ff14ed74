/**
 * What a Gated DeltaNet layer's token mixer (Qwen3-Next, Qwen3.5) keeps for its backward in transformers, per token on
 * a rank (docs/engine-memory.md#gated-deltanet-layers). transformers 5.24 (models/qwen3_next/modeling_qwen3_next.py
 * Qwen3NextGatedDeltaNet.forward) takes its convolution from causal-conv1d and its chunked delta rule from
 * flash-linear-attention when they are installed (`use_kernel_func_from_hub_with_fallback`), as training needs; the
 * torch fallbacks it otherwise runs keep far more and are not modelled.
 */
import type { LinearAttentionSpec } from '../plan/types';
import { linearAttentionRankWidths } from '../model/linearAttention';

/** FLA's chunk length (fla/ops/gated_delta_rule/chunk.py `chunk_size = 64`): the solved intra-chunk matrix is T × Hv × 64. */
export const GDN_CHUNK = 64;

/**
 * Bytes one Gated DeltaNet mixer saves per token on a rank, with k = Hk·dk and v = Hv·dv over TP t (heads split),
 * B = activation bytes, and the input norm's output (the projections' input) left to the block:
 * - causal_conv1d_fn (causal_conv1d_interface.py CausalConv1dFn.forward: `save_for_backward(x, weight, …)`): its input,
 *   the concatenated q, k and v projections, B·(2k + v);
 * - β = sigmoid(b) keeps its output, B·Hv; the decay g = −exp(A_log)·softplus(a + dt_bias) runs in fp32, softplus
 *   keeping its input and the product its output, 8·Hv;
 * - fla-core 0.6.0 ChunkGatedDeltaRuleFunction.forward `save_for_backward(q, q_rstd, k, k_rstd, v, g, beta, …, A, …)`
 *   with `use_qk_l2norm_in_kernel`: the normalised q and k, 2B·k (l2norm_fwd: y like x); v, B·v; their fp32
 *   reciprocal norms per head, 8·Hk; the chunk-local cumulative decay in fp32 (chunk_local_cumsum output_dtype float),
 *   4·Hv; the solved matrix A (chunk_fwd.py: `torch.zeros(B, T, HV, BT, dtype=k.dtype)`), B·64·Hv;
 * - the gated RMSNorm (Qwen3NextRMSNormGated.forward): the output's fp32 copy (pow and the multiply), 4v; its fp32
 *   reciprocal root per head, 4·Hv; the normalised output cast back, B·v (the weight's multiply); the weighted output,
 *   B·v, or 4v when the weight is fp32 under autocast (its multiply with the fp32 gate); z in fp32 (SiLU's input) and
 *   SiLU's output, 8v; and the cast result, out_proj's input, B·v, which a frozen out_proj (LoRA) does not keep.
 * With B = 2: 8k + 22v + 8Hk + 146Hv (Qwen3-Next-80B, k = 2,048, v = 4,096, Hk = 16, Hv = 32: 111,296 bytes).
 */
export function gatedDeltaNetSavedBytesPerToken(la: LinearAttentionSpec, B: number, tp = 1, fp32Weights = false, frozenOut = false): number {
  const { hk, hv, k, v } = linearAttentionRankWidths(la, tp);
  const conv = B * (2 * k + v);
  const gates = B * hv + 8 * hv;
  const rule = 2 * B * k + B * v + 8 * hk + 4 * hv + B * GDN_CHUNK * hv;
  const norm = 4 * v + 4 * hv + B * v + (fp32Weights ? 4 : B) * v + 8 * v + (frozenOut ? 0 : B * v);
  return conv + gates + rule + norm;
}
