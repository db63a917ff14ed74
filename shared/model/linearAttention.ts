/**
 * Gated DeltaNet layers (Qwen3-Next, Qwen3.5): their weights, and the share of a model's layers they are. Shapes as
 * transformers 5.24 builds them (models/qwen3_next/modeling_qwen3_next.py Qwen3NextGatedDeltaNet; Qwen3.5 splits
 * the same projections into in_proj_qkv, in_proj_z, in_proj_b and in_proj_a of the same sizes).
 */
import type { LinearAttentionSpec, ModelSpec } from '../plan/types';

/**
 * Weights of one Gated DeltaNet layer's token mixer, with k = Hk·dk and v = Hv·dv:
 * - the input projections h·(2k + 2v) (q, k, v and the output gate z) and h·2Hv (β and the decay's a);
 * - the depthwise causal convolution over q, k and v, (2k + v)·K taps, no bias;
 * - the output projection v·h.
 * Split over TP by heads (Megatron-core's GatedDeltaNet divides q/k and v widths by the TP size).
 */
export function gatedDeltaNetWeights(la: LinearAttentionSpec, h: number): number {
  const k = la.keyHeads * la.keyHeadDim;
  const v = la.valueHeads * la.valueHeadDim;
  return h * (2 * k + 2 * v) + h * 2 * la.valueHeads + (2 * k + v) * la.convKernel + v * h;
}

/** The small per-layer parameters beside the weights: A_log and dt_bias (one per value head) and the gated RMSNorm's dv weights. */
export function gatedDeltaNetOther(la: LinearAttentionSpec): number {
  return 2 * la.valueHeads + la.valueHeadDim;
}

/** A Gated DeltaNet mixer's widths on a rank over TP t (heads split): key and value heads, k = H_k·d_k and v = H_v·d_v. */
export function linearAttentionRankWidths(la: LinearAttentionSpec, tp = 1): { hk: number; hv: number; k: number; v: number } {
  const t = tp > 0 ? tp : 1;
  const hk = la.keyHeads / t, hv = la.valueHeads / t;
  return { hk, hv, k: hk * la.keyHeadDim, v: hv * la.valueHeadDim };
}

/** Share of the model's layers that are linear attention (0 without any). */
export function linearAttentionFraction(model: Pick<ModelSpec, 'layers' | 'linearAttention'>): number {
  const la = model.linearAttention;
  return la && model.layers > 0 ? Math.min(1, Math.max(0, la.layers / model.layers)) : 0;
}
