/**
 * What a Gemma 2 or Gemma 3 block saves under transformers (5.24: modeling_gemma3.py Gemma3DecoderLayer and
 * Gemma3RMSNorm, modeling_gemma2.py Gemma2DecoderLayer, eager_attention_forward and Gemma2ForCausalLM.forward), counted
 * tensor by tensor from the code, for one sequence of T tokens in bf16 (B = 2) or under autocast (S = 4):
 * - Gemma's RMSNorm computes `x.float()`, its rsqrt, the fp32 normalised tensor and its product with the fp32
 *   (1 + weight), then casts: it keeps the fp32 input (x itself when x is fp32), the fp32 normalised tensor and the fp32
 *   rsqrt per row, 8·T·h + 4T, against Llama's (4 + S)·T·h + 4T, which casts before the scale;
 * - the block norms four times: input_layernorm, post_attention_layernorm (on o_proj's output, before the residual
 *   add), pre_feedforward_layernorm, post_feedforward_layernorm (on down_proj's output);
 * - Gemma 3's q_norm and k_norm are the same norm per head: 8·T·(a + g)·d;
 * - Gemma 2 caps the eager attention scores (scores / 50, tanh, × 50: tanh keeps its output, B·a·T·T) and the logits
 *   (logits / 30, tanh, × 30: one more logits-sized tensor, B·T·V).
 * The oracle grid measures the same (test/probe/oracleGrid.test.ts, "Gemma 2 and 3").
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ActivationShape } from '../../../shared/memory/activations';
import { hfBlockBytes } from '../../../shared/memory/blocks';
import { peakMemoryFast } from '../../../shared/memory/fast';
import { countParams, layerParams } from '../../../shared/model/params';
import { findPreset } from '../../../shared/model/presets';
import { modelFromHfConfig } from '../../../shared/model/hfConfig';
import { initFormats } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { memoryHost } from '../formats/helpers';

/** Gemma 3 1B: h 1152, 4 query heads and 1 KV head of d = 256, f = 6,912 (its config.json, data/models/gemma-3-1b.json). */
const T = 1024, h = 1152, a = 4, g = 1, d = 256, f = 6912;
const base: ActivationShape = {
  sLocal: T, b: 1, h, heads: a, kvHeadsEff: g, headDim: d, ffn: f, gated: true, tp: 1, sp: false, flash: true,
  actBytes: 2, sKeys: T, dropout: false, impl: 'hf', qkNorm: true,
};
const lse = 4 * a * T;

describe('Gemma blocks (transformers)', () => {
  before(async () => { await initFormats(); });

  test('Gemma 3 in bf16: four fp32-keeping norms, fp32-keeping q/k norms, the rest as a Llama block', () => {
    const norms = 4 * (8 * T * h + 4 * T);
    const linearInputs = 2 * 2 * T * h; // q/k/v_proj share input_layernorm's output, gate/up pre_feedforward's.
    const qk = 8 * T * (a + g) * d;
    const sdpa = 2 * T * (2 * a * d + 2 * g * d) + lse; // q, k, v, the output; native grouped K/V under FlashAttention.
    const mlp = 4 * 2 * T * f; // gate out, gelu out, up out, their product.
    const x = { ...base, sandwichNorms: true, normFp32: true };
    assert.equal(hfBlockBytes(x), norms + linearInputs + qk + sdpa + mlp);
    // Against the Llama-style count ShardLens made before: 25,600 bytes a token more (25 MiB a layer of 1,024 tokens;
    // the oracle grid measured 25.1 MiB a layer).
    assert.equal(hfBlockBytes(x) - hfBlockBytes(base), T * (2 * 8 * h + 2 * (8 - 6) * h + 2 * 4 + (8 - 6) * (a + g) * d));
  });

  test('under autocast the fp32 stream already is the norm\'s fp32 input: only the two extra norms differ', () => {
    const S = 4;
    const amp = { ...base, streamBytes: S };
    assert.equal(hfBlockBytes({ ...amp, sandwichNorms: true, normFp32: true }) - hfBlockBytes(amp), 2 * (8 * T * h + 4 * T));
  });

  test('Gemma 2 in eager attention keeps tanh\'s output of the capped scores, none under FlashAttention-2', () => {
    const eager = { ...base, flash: false, sandwichNorms: true, normFp32: true, qkNorm: false };
    assert.equal(hfBlockBytes({ ...eager, attnSoftcap: true }) - hfBlockBytes(eager), 2 * a * T * T);
    assert.equal(hfBlockBytes({ ...eager, flash: true, attnSoftcap: true }), hfBlockBytes({ ...eager, flash: true }));
  });

  test('the presets: Gemma 2 and 3 norm four times; Gemma 2 caps scores and logits, Gemma 3 neither', () => {
    const g2 = findPreset('gemma-2-2b')!.model, g3 = findPreset('gemma-3-1b')!.model, g1 = findPreset('gemma-2b')!.model;
    assert.deepEqual([g2.sandwichNorms, g2.normFp32, g2.attnLogitSoftcap, g2.finalLogitSoftcap], [true, true, true, true]);
    assert.deepEqual([g3.sandwichNorms, g3.normFp32, g3.attnLogitSoftcap, g3.finalLogitSoftcap], [true, true, undefined, undefined]);
    assert.deepEqual([g1.sandwichNorms, g1.normFp32], [undefined, true]);
    // Four RMSNorms of h a layer: transformers' Gemma-3-1B has 999,885,952 parameters (meta-device build, transformers 5.24).
    assert.equal(layerParams(g3).norms, 4 * h);
    assert.equal(countParams(g3).parameters, 999_885_952);
  });

  test('a config.json: softcapping null turns a cap off, a number on; the opened file reads the same', () => {
    const cfg = { model_type: 'gemma2', vocab_size: 256000, hidden_size: 2304, num_hidden_layers: 26, num_attention_heads: 8, num_key_value_heads: 4, intermediate_size: 9216, head_dim: 256, attn_logit_softcapping: null, final_logit_softcapping: 30 };
    const m = modelFromHfConfig(cfg).model!;
    assert.deepEqual([m.attnLogitSoftcap, m.finalLogitSoftcap, m.sandwichNorms], [undefined, true, true]);
    const text = JSON.stringify(cfg, null, 2);
    const opened = loadConfigGraph('/ws/config.json', memoryHost({ '/ws/config.json': text }), { settings: {} });
    const o = opened.resolved.plan!.model;
    assert.deepEqual([o.attnLogitSoftcap, o.finalLogitSoftcap, o.sandwichNorms, o.normFp32], [undefined, true, true, true]);
    assert.equal(countParams(o).parameters, countParams(m).parameters);
    const gemma3 = modelFromHfConfig({ ...cfg, model_type: 'gemma3_text', attn_logit_softcapping: undefined, final_logit_softcapping: undefined }).model!;
    assert.deepEqual([gemma3.attnLogitSoftcap, gemma3.finalLogitSoftcap], [undefined, undefined]);
  });
});

describe('Gemma 2 attention under transformers', () => {
  before(async () => { await initFormats(); });
  const axolotl = (extra = '') => `base_model: google/gemma-2-2b\nsequence_len: 4096\nmicro_batch_size: 1\ngradient_accumulation_steps: 4\nbf16: true\n${extra}`;
  const plan = (text: string) => loadConfigGraph('/ws/gemma.yaml', memoryHost({ '/ws/gemma.yaml': text }), { settings: {} }).resolved;

  test('no SDPA path in transformers 5.24: eager attention unless the file names FlashAttention-2, and the source says why', () => {
    const r = plan(axolotl());
    assert.equal(r.plan!.training.flashAttention, false);
    assert.match(r.plan!.sources['training.flashAttention']?.detail ?? '', /no SDPA attention for .*eager unless attn_implementation names flash_attention_2/);
    assert.equal(plan(axolotl('flash_attention: true\n')).plan!.training.flashAttention, true);
    // Gemma 3 has SDPA: the default stays.
    assert.equal(plan(axolotl().replace('gemma-2-2b', 'gemma-3-1b-it')).plan!.training.flashAttention, true);
  });

  test('eager Gemma 2 keeps the fp32 softmax, its cast and the capped scores: 26 GiB more than FlashAttention-2 at 4k', () => {
    const eager = plan(axolotl()).plan!, fa2 = plan(axolotl('flash_attention: true\n')).plan!;
    assert.deepEqual([eager.model.noSdpa, fa2.model.attnLogitSoftcap, eager.training.precision], [true, true, 'bf16-mixed']);
    // Every one of the 26 layers keeps, per head and query-key pair, the fp32 probabilities (4), their bf16 cast (2) and
    // tanh's bf16 output of the capped scores (2): 26·8·8·T² bytes (the boolean causal mask is shared by the layers).
    const T = 4096;
    const extra = peakMemoryFast(eager) - peakMemoryFast(fa2);
    assert.ok(extra >= 26 * 8 * 8 * T * T && extra <= 1.02 * 26 * 8 * 8 * T * T, `${extra / 2 ** 30} GiB`);
  });
});
