/**
 * What a Gated DeltaNet layer's token mixer (Qwen3-Next, Qwen3.5) keeps for its backward in transformers and in
 * Megatron-LM, per token on a rank (docs/engine-memory.md#gated-deltanet-layers). transformers 5.24 (models/qwen3_next/modeling_qwen3_next.py
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

/**
 * Bytes one Megatron-LM Gated DeltaNet mixer saves per token on a rank (megatron/core/ssm/gated_delta_net/gdn.py and
 * common.py at d98e8a64, with flash-linear-attention 0.5.1, the release its pyproject pins), with k = Hk·dk and
 * v = Hv·dv over TP t, r = Hv/Hk, B = activation bytes, and in_proj's input (the fused input norm's) left to the block:
 * - the whole fused in_proj output (q, k, v, z, β, α), B·(2k + 2v + 2Hv): FLA's causal_conv1d saves its input as
 *   passed (`no_guard_contiguous=["x"]`), a view of it, and the compiled `_compute_gates` saves α, another view;
 * - β = sigmoid, B·Hv (the rule keeps the same tensor); the fp32 decay is recomputed from α (the compiled gates save
 *   only α and the two parameters);
 * - FLA's `l2norm` on q and k at Hk heads: its output, 2B·k, and an fp32 reciprocal norm per row, 8·Hk;
 * - `chunk_gated_delta_rule` without in-kernel normalisation: q and k repeated to the value heads
 *   (`repeat_interleave`, then `contiguous`), 2B·k·r; v's contiguous copy, B·v; the chunk-local cumulative decay in
 *   fp32, 4·Hv; A, B·64·Hv;
 * - Transformer Engine's RMSNorm on the rule's output: its input, B·v, and an fp32 reciprocal root per row, 4·Hv; the
 *   compiled gate multiply keeps the norm's output and the gate's contiguous copy, 2B·v;
 * - out_proj's input, B·v (its 1-byte cast under Transformer Engine FP8).
 * With B = 2: (8 + 4r)·k + 14v + 142·Hv + 8·Hk; Qwen3-Next-80B-A3B (k = 2,048, v = 4,096, Hk = 16, Hv = 32): 94,784.
 * Measured with torch's saved-tensor hooks on the same forward with the kernels stood in by what their sources save
 * (probe/oracle/megatron_gdn_saves.py: the compiled regions through AOTAutograd's min-cut partitioner).
 */
export function megatronGatedDeltaNetSavedBytesPerToken(la: LinearAttentionSpec, B: number, tp = 1, fp8OutProj = false): number {
  const { hk, hv, k, v } = linearAttentionRankWidths(la, tp);
  const r = hk > 0 ? hv / hk : 1;
  const inProj = B * (2 * k + 2 * v + 2 * hv);
  const gates = B * hv;
  const l2norm = 2 * B * k + 8 * hk;
  const rule = 2 * B * k * r + B * v + 4 * hv + B * GDN_CHUNK * hv;
  const norm = B * v + 4 * hv + 2 * B * v;
  const outProj = (fp8OutProj ? 1 : B) * v;
  return inProj + gates + l2norm + rule + norm + outProj;
}
