/**
 * What one multi-head latent attention layer saves (shared/memory/mlaSaves.ts with blocks.ts and activations.ts),
 * counted tensor by tensor from each implementation's code: transformers' DeepseekV3Attention / DeepseekV2Attention
 * (modeling_deepseek_v3.py, modeling_deepseek_v2.py, 5.x), torchtitan's DeepSeek-V3 Attention
 * (torchtitan/models/deepseek_v3/model/model.py) and Megatron-core's MLASelfAttention
 * (megatron/core/transformer/multi_latent_attention.py). Widths: DeepSeek-V3 (huggingface.co/deepseek-ai/DeepSeek-V3
 * config.json: h = 7168, a = 128, r_q = 1536, r_kv = 512, d_n = 128, d_r = 64, d_v = 128, dense f = 18,432) and
 * DeepSeek-V2-Lite (h = 2048, a = 16, no query compression, f = 10,944). Bytes per token of one sequence (b = 1).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { embeddingActivationBytes, layerActivationBytes, type ActivationShape } from '../../../shared/memory/activations';
import type { MlaSpec, ModelImpl } from '../../../shared/plan/types';

const V3: MlaSpec = { qLoraRank: 1536, kvLoraRank: 512, qkNopeHeadDim: 128, qkRopeHeadDim: 64, vHeadDim: 128 };
const V2_LITE: MlaSpec = { ...V3, qLoraRank: 0 };
const v3 = (impl: ModelImpl | undefined, s: number, x: Partial<ActivationShape> = {}): ActivationShape => ({
  sLocal: s, b: 1, h: 7168, heads: 128, kvHeadsEff: 128, headDim: 192, ffn: 18_432, gated: true, tp: 1, sp: false, flash: true,
  actBytes: 2, sKeys: s, dropout: false, mla: V3, ...(impl ? { impl } : {}), ...x,
});
const v2Lite = (impl: ModelImpl, s: number, x: Partial<ActivationShape> = {}): ActivationShape =>
  v3(impl, s, { h: 2048, heads: 16, kvHeadsEff: 16, ffn: 10_944, mla: V2_LITE, ...x });

/** One layer without recomputation, bytes per token: each row lists the saved tensors of its implementation. */
const CASES: { name: string; x: ActivationShape; recompute?: 'none' | 'selective'; perToken: number }[] = [
  {
    // transformers, autocast over fp32 weights (B = 2, stream S = 4): input/post-attention RMSNorms 2·((4 + 4)·h + 4);
    // bf16 casts of the norm outputs by q_a_proj, kv_a_proj_with_mqa, gate_proj, up_proj 4·2h; q_a_layernorm and
    // kv_a_layernorm (fp32 copy, bf16 normalised, rsqrt) (4 + 2)·r + 4 each; q_b_proj/kv_b_proj inputs 2·(r_q + r_kv);
    // SDPA's q and k 2·a·192 each, v (kv_b_proj's whole output) 2·a·256, output 2·a·128, log-sum-exp 4a; MLP 4·2f.
    // = 114,696 + 57,344 + 9,220 + 3,076 + 4,096 + 197,120 + 147,456 (the oracle's per-layer growth less the weights).
    name: 'transformers, autocast, sdpa', x: v3('hf', 2048, { streamBytes: 4, autocastWeightBytes: 0 }), perToken: 533_008,
  },
  {
    // The same without the log-sum-exp, with the fp32 softmax output and its bf16 cast (4 + 2)·a·s at s = 1024.
    name: 'transformers, autocast, eager attention', x: v3('hf', 1024, { streamBytes: 4, autocastWeightBytes: 0, flash: false }),
    perToken: 533_008 - 4 * 128 + 6 * 128 * 1024,
  },
  {
    // bf16 weights: norms 2·((4 + 2)·h + 4); the two norm outputs 2·2h; latents and attention as above; MLP 4·2f.
    name: 'transformers, bf16', x: v3('hf', 2048), perToken: 86_024 + 28_672 + 9_220 + 3_076 + 4_096 + 197_120 + 147_456,
  },
  {
    // fp32, V2-Lite: norms 2·(8h + 4); norm outputs 2·4h; kv_a_layernorm keeps kv_a_proj_with_mqa's whole output as
    // its input 4·(512 + 64), the normalised 4·512 and rsqrt 4; kv_b_proj input 4·512; memory-efficient attention's
    // q, k 4·16·192 each, v 4·16·256, output 4·16·128, log-sum-exp 4·16; MLP 4·4f.
    name: 'transformers, fp32, direct queries', x: v2Lite('hf', 512, { actBytes: 4, streamBytes: 4 }),
    perToken: 32_776 + 16_384 + 2_304 + 2_048 + 4 + 2_048 + 12_288 * 2 + 16_384 + 8_192 + 64 + 175_104,
  },
  {
    // torchtitan (bf16): fused RMSNorms' inputs and rstd 2·(2h + 4); wq_a/wkv_a and w1/w3 inputs 2·2h; q_norm input
    // and rstd 2·1536 + 4, wq_b input 2·1536; kv_norm input (wkv_a's whole output) 2·576 + 4, wkv_b input 2·512;
    // SDPA q, k, v (wkv_b's whole output), output 2·(2·24,576 + 32,768 + 16,384), lse 4a; SwiGLU 4·2f.
    name: 'torchtitan', x: v3('torchtitan', 2048), perToken: 28_680 + 28_672 + 6_148 + 2_180 + 196_608 + 512 + 147_456,
  },
  {
    // TP 2 with SP: block norms on half the sequence, the linears' inputs all-gathered whole, latents whole on every
    // rank (wq_a, wkv_a unsharded), head tensors and the MLP halved.
    name: 'torchtitan, TP 2 with SP', x: v3('torchtitan', 2048, { tp: 2, sp: true }),
    perToken: 14_340 + 28_672 + 6_148 + 2_180 + 98_304 + 256 + 73_728,
  },
  {
    // Per-op SAC: the block input 2h; every second matmul output from the first of wq_a (1536), wq_b, wkv_a (576),
    // wkv_b, wo (h), w1, w3 (f), w2: 2·(1536 + 576 + 7168 + 18,432); SDPA's output 2·a·128 and lse 4a.
    name: 'torchtitan, per-op selective', x: v3('torchtitan', 2048, { acPolicy: 'torchtitan-op' }), recompute: 'selective',
    perToken: 14_336 + 55_424 + 32_768 + 512,
  },
  {
    // Without query compression the order is wq (16·192), wkv_a (576), wkv_b (16·256), wo (h), w1, w3, w2 (h):
    // 2·(3072 + 4096 + 10,944 + 2048) + 2h + SDPA output 2·16·128 + lse 4·16.
    name: 'torchtitan, per-op selective, direct queries', x: v2Lite('torchtitan', 2048, { acPolicy: 'torchtitan-op' }), recompute: 'selective',
    perToken: 4_096 + 40_320 + 4_096 + 64,
  },
  {
    // Megatron-core with TE, TP 8 with SP, flash: Korthikanti's 4·2h/8 (norm inputs, the down projections' and the
    // MLP's input); the latents' fused-norm inputs, outputs and rsigma (2·2·r + 4)/8 each; query, key, value
    // (contiguous, a·d_v) and output 2·(2·24,576 + 2·16,384)/8; SwiGLU 3·2f/8; flash statistics 4a/8.
    name: 'Megatron, TP 8 with SP', x: v3(undefined, 2048, { tp: 8, sp: true }), perToken: 7_168 + 1_025 + 20_480 + 13_824 + 64,
  },
];

describe('multi-head latent attention: one layer\'s saved bytes per implementation', () => {
  for (const c of CASES) {
    test(c.name, () => {
      assert.equal(layerActivationBytes(c.x, c.recompute ?? 'none'), c.perToken * c.x.sLocal);
    });
  }
  test('transformers\' rotary tables are d_r = 64 wide under MLA (DeepseekV3Config head_dim = qk_rope_head_dim)', () => {
    // Token ids 8 B and cos, sin in the fp32 residual stream 2·4·64 per token.
    const x = v3('hf', 2048, { streamBytes: 4 });
    assert.equal(embeddingActivationBytes(x), (8 + 2 * 4 * 64) * 2048);
  });
});

test('Adafactor under MLA factors its five projections: Σ 4·(r + c) over q, kv_down, kv_up, o and the MLP (Shazeer & Stern 2018 §3)', async () => {
  const { adafactorBytesPerParam } = await import('../../../shared/memory/modelStates');
  // h 8, 2 heads, direct queries (r_q 0), r_kv 4, d_n 2, d_r 2, d_v 2, gated MLP of 16: q 8×8, kv_down 8×6, kv_up 4×8,
  // o 4×8, MLP 8×16 (twice) and 16×8; two norms of 8 at 4 bytes per element.
  const mats = [[8, 8], [8, 6], [4, 8], [4, 8], [8, 16], [16, 8], [8, 16]];
  const states = mats.reduce((a, [r, c]) => a + 4 * (r + c), 0) + 4 * 2 * 8;
  const params = mats.reduce((a, [r, c]) => a + r * c, 0) + 2 * 8;
  const m = { hiddenSize: 8, heads: 2, kvHeads: 2, headDim: 4, ffnSize: 16, gatedMlp: true, mla: { qLoraRank: 0, kvLoraRank: 4, qkNopeHeadDim: 2, qkRopeHeadDim: 2, vHeadDim: 2 } };
  assert.equal(adafactorBytesPerParam(m), states / params);
});
