/**
 * What the attention of a multi-head latent attention layer (MLA, shared/model/mla.ts) saves for its backward, per
 * model implementation, for ONE micro-batch on one rank (bytes), in place of the q/k/v/output counts of standard
 * attention (docs/engine-memory.md#multi-head-latent-attention). T = b·s/cp tokens on the rank, a heads, t the TP
 * degree, r_q / r_kv the latent widths, d_n / d_r / d_v the no-position, rotary and value head widths, qk = d_n + d_r.
 * The up projections split by heads under TP (÷t); the latents are computed whole by every rank (Megatron-LM runs the
 * duplicated down projections on the sequence-parallel shard: ÷t with SP). The block's own norms, the hidden-width
 * linear inputs, the attention statistics and the MLP stay in blocks.ts / activations.ts.
 */
import type { MlaSpec } from '../plan/types';
import type { ActivationShape } from './activations';

/** The latent widths a layer normalises: r_q when queries are compressed (q_lora_rank > 0), and r_kv. */
function latentWidths(m: MlaSpec): number[] {
  return m.qLoraRank > 0 ? [m.qLoraRank, m.kvLoraRank] : [m.kvLoraRank];
}

/** Per-rank widths of the attention's head tensors: q and k (a·qk), the kv up projection's output (a·(d_n + d_v)), v and the output (a·d_v). */
function headWidths(x: ActivationShape, m: MlaSpec): { qk: number; kvUp: number; v: number } {
  return {
    qk: (x.heads * (m.qkNopeHeadDim + m.qkRopeHeadDim)) / x.tp,
    kvUp: (x.heads * (m.qkNopeHeadDim + m.vHeadDim)) / x.tp,
    v: (x.heads * m.vHeadDim) / x.tp,
  };
}

/**
 * transformers' DeepseekV3Attention / DeepseekV2Attention (modeling_deepseek_v3.py, 5.x), B = compute bytes:
 * - each latent RMSNorm (q_a_layernorm, kv_a_layernorm) saves its fp32 copy of the down projection's output, the
 *   normalised tensor in that output's dtype and the rsqrt: (4 + B)·T·r + 4T; in fp32 the `.to(float32)` is a no-op and
 *   kv_a_layernorm's input is a slice of kv_a_proj_with_mqa's output, whose whole storage (r_kv + d_r) stays: + 4·T·d_r;
 * - q_b_proj and kv_b_proj save their inputs (the norm outputs, or their 16-bit casts under autocast): B·T·(r_q + r_kv);
 * - attention (SDPA or eager) saves q and k (`torch.cat` of the no-position and rotary parts, a·qk each), v — a slice of
 *   kv_b_proj's output, which keeps that whole output (a·(d_n + d_v)) — and the output o_proj takes (a·d_v);
 * - the rotary products save only the cos/sin (or complex) tables (activations.ts embeddingActivationBytes).
 * Without queries' compression q_proj takes the attention norm's output like kv_a_proj (blocks.ts hfBlockBytes).
 */
export function hfMlaAttentionBytes(x: ActivationShape, m: MlaSpec): number {
  const B = x.actBytes, T = x.sLocal * x.b, w = headWidths(x, m);
  const latents = latentWidths(m);
  const norms = latents.reduce((sum, r) => sum + (4 + B) * T * r + 4 * T, 0) + (B === 4 ? 4 * T * m.qkRopeHeadDim : 0);
  const upInputs = latents.reduce((sum, r) => sum + B * T * r, 0);
  return norms + upInputs + B * T * (2 * w.qk + w.kvUp + w.v);
}

/**
 * torchtitan's DeepSeek-V3 Attention (torchtitan/models/deepseek_v3/model/model.py): the fused RMSNorms q_norm and
 * kv_norm save their input and an fp32 rstd per token (aten::_fused_rms_norm), kv_norm's input being a slice of wkv_a's
 * output (r_kv + d_r kept); wq_b and wkv_b save the norm outputs; SDPA saves q and k (`torch.cat`, a·qk each), v (a slice
 * of wkv_b's output: a·(d_n + d_v) kept) and its output (wo's input, a·d_v). The complex rotary product saves only the
 * frequency table. B·T·[Σ 2r + d_r] + 4T per latent + B·T·(2·a·qk + a·(d_n + d_v) + a·d_v)/t.
 */
export function titanMlaAttentionBytes(x: ActivationShape, m: MlaSpec): number {
  const B = x.actBytes, T = x.sLocal * x.b, w = headWidths(x, m);
  const latents = latentWidths(m);
  const norms = latents.reduce((sum, r) => sum + 2 * B * T * r + 4 * T, 0) + B * T * m.qkRopeHeadDim;
  return norms + B * T * (2 * w.qk + w.kvUp + w.v);
}

/**
 * The matmul outputs of one torchtitan block in call order, per rank (elements per token): wq_a, wq_b (or wq), wkv_a,
 * wkv_b, wo, then the MLP's w1, w3, w2 (w1, w2 ungated). Per-op selective checkpointing saves every second one from the
 * first (torchtitan/distributed/activation_checkpoint.py `_custom_policy`).
 */
export function titanMlaMatmulWidths(x: ActivationShape, m: MlaSpec, ffn: number): number[] {
  const w = headWidths(x, m);
  const q = m.qLoraRank > 0 ? [m.qLoraRank, w.qk] : [w.qk];
  const mlp = x.gated ? [ffn / x.tp, ffn / x.tp, x.h] : [ffn / x.tp, x.h];
  return [...q, m.kvLoraRank + m.qkRopeHeadDim, w.kvUp, x.h, ...mlp];
}

/** SDPA's output under MLA, per rank: a·d_v/t elements per token (what op-level selective checkpointing keeps of it). */
export function mlaAttentionOutputWidth(x: ActivationShape, m: MlaSpec): number {
  return headWidths(x, m).v;
}

/**
 * Megatron-core's MLASelfAttention with Transformer Engine (megatron/core/transformer/multi_latent_attention.py,
 * `qkv_up_proj_and_rope_apply`; the TE layer spec fuses the latent norms into the up projections,
 * TELayerNormColumnParallelLinear): each latent's norm input, its output (the GEMM input) and an fp32 rsigma,
 * (2B·r + 4)·sb, ÷t with sequence parallelism; TEDotProductAttention saves query, key and value — made contiguous
 * before attention, so v is a·d_v — and its output (linear_proj's input): B·sb·(2·a·qk + 2·a·d_v)/t, in place of
 * Korthikanti's B·sb·(2·a·d + 2·KV·d)/t.
 */
export function megatronMlaLatentBytes(x: ActivationShape, m: MlaSpec): number {
  const sb = x.sLocal * x.b;
  return latentWidths(m).reduce((sum, r) => sum + (2 * x.actBytes * r + 4) * sb, 0) / (x.sp ? x.tp : 1);
}

/** Megatron's per-rank attention tensors under MLA (see megatronMlaLatentBytes): B·sb·(2·a·qk + 2·a·d_v)/t. */
export function megatronMlaAttentionBytes(x: ActivationShape, m: MlaSpec): number {
  const w = headWidths(x, m);
  return x.actBytes * x.sLocal * x.b * (2 * w.qk + 2 * w.v);
}

/**
 * What Megatron's `mla_up_proj` recomputation does not keep (multi_latent_attention.py: `qkv_up_proj_and_rope_apply`
 * under CheckpointWithoutOutput, run without grad and saving only its inputs, the latents): each latent norm's output
 * and fp32 rsigma, (B·r + 4)·sb ÷t with sequence parallelism, and the query, key and value it made, B·sb·(2·a·qk + a·d_v)/t,
 * which are rebuilt before attention's backward (the attention output stays: linear_proj keeps it).
 */
export function megatronMlaUpProjBytes(x: ActivationShape, m: MlaSpec): number {
  const sb = x.sLocal * x.b, w = headWidths(x, m);
  const latents = latentWidths(m).reduce((sum, r) => sum + (x.actBytes * r + 4) * sb, 0) / (x.sp ? x.tp : 1);
  return latents + x.actBytes * sb * (2 * w.qk + w.v);
}
