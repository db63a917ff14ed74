/**
 * A Gated DeltaNet layer's token mixer in time (Qwen3-Next, Qwen3.5; docs/time-model.md "Gated DeltaNet layers"): the
 * chunked gated delta rule of flash-linear-attention as its published kernel time, and the memory-bound code around it
 * in transformers as torch dispatches it and in Megatron-LM as its fused kernels move it.
 */
import type { LinearAttentionSpec } from '../../plan/types';
import { linearAttentionRankWidths } from '../../model/linearAttention';

/**
 * fla-core 0.6.0's README benchmark (`python -m benchmarks.ops.run`, one NVIDIA GB200, CUDA 12.9, PyTorch 2.9):
 * `chunk_gdn` (chunk_gated_delta_rule with use_qk_l2norm_in_kernel) forward and forward+backward in ms at
 * B·T·H = 131,072 (4 × 2,048 × 16), 524,288 (2 × 16,384 × 16), 786,432 (1 × 8,192 × 96) and 1,048,576 (4 × 4,096 × 64)
 * token-heads, D = 128: forward 0.753, 1.029, 1.265, 1.581; forward+backward 2.085, 3.616, 4.738, 5.964. Over the range
 * the time is a floor plus a rate: forward 0.90 ns and backward 3.33 ns per token and head (the slopes from the smallest
 * to the largest shape, within 8 % of the two between). FlashAttention-2 causal ran the 1,048,576 shape in 2.560 ms
 * forward and 10.815 ms forward+backward there: 4·B·T²·H·D/2 = 1.0995e12 FLOPs forward, 429 TFLOP/s, and 2.5× that
 * backward, 333 TFLOP/s. The rule is timed as the FlashAttention-2 FLOPs that take its time on that GPU, on each GPU's
 * own attention curve: the ratio of the two kernels carries to the GPUs the benchmark did not run.
 */
export const GDN_KERNEL = {
  fwdNsPerTokenHead: 0.9, bwdNsPerTokenHead: 3.33,
  fa2FwdFlopsPerSecond: 1.0995e12 / 2.56e-3, fa2BwdFlopsPerSecond: (2.5 * 1.0995e12) / (10.815e-3 - 2.56e-3),
  headDim: 128, referenceSeq: 4096,
} as const;

/**
 * FlashAttention-2-equivalent FLOPs of the chunked rule over T tokens on a rank (value heads ÷ t), forward and backward:
 * ns per token·head × the FlashAttention-2 rate of the same GPU, scaled by the state d_k·d_v against the benchmark's
 * 128 × 128 (the chunked algorithm's work per token and head grows with the state: Yang et al. 2025, §3).
 */
export function gatedDeltaNetKernelFlops(la: LinearAttentionSpec, tokens: number, tp = 1): { fwd: number; bwd: number } {
  const tokenHeads = tokens * linearAttentionRankWidths(la, tp).hv;
  const state = (la.keyHeadDim * la.valueHeadDim) / (GDN_KERNEL.headDim * GDN_KERNEL.headDim);
  return {
    fwd: tokenHeads * state * GDN_KERNEL.fwdNsPerTokenHead * 1e-9 * GDN_KERNEL.fa2FwdFlopsPerSecond,
    bwd: tokenHeads * state * GDN_KERNEL.bwdNsPerTokenHead * 1e-9 * GDN_KERNEL.fa2BwdFlopsPerSecond,
  };
}

/**
 * HBM bytes per token of the code around the kernels in transformers 5.24, in bf16, counted op by op with torch's
 * dispatcher on transformers' own mixers (probe/oracle/gdn_traffic.py; k = H_k·d_k, v = H_v·d_v, H_v per rank):
 * - Qwen3-Next (Qwen3NextGatedDeltaNet: one interleaved in_proj_qkvz and in_proj_ba): forward 32k + 86v + 66·H_v — the
 *   reshape copies of q, k, v, z, b and a (8k + 8v + 8·H_v), the q/k/v concatenation (8k + 4v), the convolution's read
 *   and write (8k + 4v), FLA's input_guard copies of q, k and v (8k + 4v), the gates in fp32 (34·H_v) and the gated
 *   RMSNorm (66v + 24·H_v: its fp32 copies, pow, mean, rsqrt, the weight, the SiLU gate and the casts back); backward
 *   28k + 162v + 100·H_v + 6h — the norm's backward (144v + 40·H_v), the gates' (52·H_v), the q/k/v gradient's
 *   concatenation (8k + 4v), the convolution's (12k + 6v), the projection gradients' concatenation (8k + 8v + 8·H_v)
 *   and the sum of the two projections' input gradients (6h);
 * - Qwen3.5 (Qwen3_5GatedDeltaNet: in_proj_qkv, in_proj_z, in_proj_b, in_proj_a, no reshape copies or concatenation
 *   forward): forward 16k + 74v + 58·H_v; backward 20k + 154v + 92·H_v + 18h (three sums of four input gradients).
 * The convolution (causal-conv1d, memory-bound) is counted here; the chunked rule's own traffic is in its kernel time.
 */
export function gatedDeltaNetEagerBytesPerToken(la: LinearAttentionSpec, hidden: number, pass: 'fwd' | 'bwd', tp = 1): number {
  const { k, v, hv } = linearAttentionRankWidths(la, tp);
  if (la.splitProjections) return pass === 'fwd' ? 16 * k + 74 * v + 58 * hv : 20 * k + 154 * v + 92 * hv + 18 * hidden;
  return pass === 'fwd' ? 32 * k + 86 * v + 66 * hv : 28 * k + 162 * v + 100 * hv + 6 * hidden;
}

/**
 * HBM bytes per token of the code Megatron-LM runs around the kernels (megatron/core/ssm/gated_delta_net/gdn.py and
 * common.py at d98e8a64, flash-linear-attention 0.5.1), in bf16, from first principles: each FLA, Transformer Engine and
 * compiled kernel reads its inputs and writes its outputs once (a region Megatron compiles with `jit_fuser`,
 * torch.compile, is one fused kernel), with k = H_k·d_k, v = H_v·d_v and r = H_v/H_k per rank:
 * - forward (28 + 4r)·k + 22v + 14·H_v + 8·H_k: FLA's convolution reads its q/k/v view and writes its output (8k + 4v);
 *   the compiled split copies q/k and v out of it (8k + 4v); FLA's l2norm reads q/k and writes it with an fp32 rstd
 *   per row (8k + 8·H_k); q and k repeated to the value heads (4k + 4rk); the compiled gates read β and α and write
 *   the fp32 decay and β's sigmoid (10·H_v); the gate's contiguous copy (4v); Transformer Engine's RMSNorm (4v + 4·H_v);
 *   the compiled gate multiply reads the norm's output and the gate and writes the product (6v);
 * - backward (44 + 4r)·k + 34v + 26·H_v + 8·H_k: the gate multiply's (10v), the norm's (6v + 4·H_v), the gates'
 *   (14·H_v), the repetition's sum (4rk + 4k), l2norm's (12k + 8·H_k), the split copies' (8k + 4v), the convolution's
 *   input gradient (12k + 6v) and the views' gradients gathered into in_proj's output gradient (8k + 8v + 8·H_v).
 * The transpose back to [s, b, ·] copies only when the micro batch is above 1, not counted.
 */
export function megatronGatedDeltaNetBytesPerToken(la: LinearAttentionSpec, pass: 'fwd' | 'bwd', tp = 1): number {
  const { hk, hv, k, v } = linearAttentionRankWidths(la, tp);
  const r = hk > 0 ? hv / hk : 1;
  return pass === 'fwd' ? (28 + 4 * r) * k + 22 * v + 14 * hv + 8 * hk : (44 + 4 * r) * k + 34 * v + 26 * hv + 8 * hk;
}

/**
 * Kernels Megatron-LM's mixer launches beyond an attention layer's, forward and backward: the eight and ten above
 * (the backward's norm and convolution each add a weight-gradient reduction) and the rule's own without its in-kernel
 * l2norms (fla 0.5.1 chunk.py: 5 and 8).
 */
export const MEGATRON_GDN_KERNELS = { fwd: 8 + 5, bwd: 10 + 8 } as const;

/**
 * Kernels a mixer launches beyond an attention layer's, forward and backward: the data-moving ops counted with the bytes
 * above (Qwen3-Next 34 and 44, Qwen3.5 29 and 48) and the chunked rule's own (fla-core 0.6.0 chunk.py: two l2norms,
 * the local cumulative sum, the fused KKᵀ solve, recompute_w_u, the state pass and the output forward; the recomputed
 * w, u and states, the local dv, the state gradients, dq/dk/dw/dg, the WY backward, the cumulative sum and two l2norm
 * backwards: 7 and 10).
 */
export function gatedDeltaNetKernels(la: LinearAttentionSpec): { fwd: number; bwd: number } {
  return la.splitProjections ? { fwd: 29 + 7, bwd: 48 + 10 } : { fwd: 34 + 7, bwd: 44 + 10 };
}

/**
 * N widths of a mixer's input projections on a rank (K = hidden), k = H_k·d_k and v = H_v·d_v ÷ t: Megatron-core's one
 * in_proj of 2k + 2v + 2·H_v (megatron/core/ssm/gated_delta_net.py), transformers' Qwen3-Next in_proj_qkvz (2k + 2v)
 * and in_proj_ba (2·H_v), Qwen3.5's in_proj_qkv (2k + v), in_proj_z (v), in_proj_b and in_proj_a (H_v each).
 */
export function gatedDeltaNetInWidths(la: LinearAttentionSpec, fused: boolean, tp = 1): number[] {
  const { k, v, hv } = linearAttentionRankWidths(la, tp);
  if (fused) return [2 * k + 2 * v + 2 * hv];
  return la.splitProjections ? [2 * k + v, v, hv, hv] : [2 * k + 2 * v, 2 * hv];
}
