/**
 * Falcon's config.json read by both readers (shared/model/hfConfig.ts for a referenced model or a preset,
 * formats/hf-config/reader.ts for an opened file). Expected widths from transformers models/falcon:
 * configuration_falcon.py FalconConfig (defaults: vocab 65,024, hidden 4,544, 32 layers, 71 heads, multi_query true,
 * parallel_attn true, bias false, alibi false, num_kv_heads None → num_attention_heads, ffn_hidden_size None → 4·hidden)
 * and modeling_falcon.py (FalconAttention: num_kv_heads if new_decoder_architecture or not multi_query, else 1;
 * query_key_value hidden × (heads + 2·kv)·head_dim; dense hidden²; FalconMLP dense_h_to_4h and dense_4h_to_h with GELU;
 * LayerNorms input_layernorm (parallel_attn) or ln_attn + ln_mlp (new decoder architecture); a tied lm_head).
 * Parameter counts below are those module shapes summed by hand.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { modelFromHfConfig } from '../../../shared/model/hfConfig';
import { findPreset } from '../../../shared/model/presets';
import { countParams } from '../../../shared/model/params';
import type { ModelSpec } from '../../../shared/plan/types';
import { memoryHost } from './helpers';

const PARALLEL = 'hf-config-parallel-block';

function readBoth(cfg: object) {
  const text = JSON.stringify(cfg, null, 2);
  const ref = modelFromHfConfig(cfg);
  const g = loadConfigGraph('/ws/config.json', memoryHost({ '/ws/config.json': text }), { settings: {} });
  return { ref, opened: g.resolved.plan?.model, diagnostics: g.primary.diagnostics, lines: text.split('\n') };
}

function shape(m: ModelSpec | undefined) {
  return m && {
    layers: m.layers, hidden: m.hiddenSize, heads: m.heads, kv: m.kvHeads, headDim: m.headDim, ffn: m.ffnSize, vocab: m.vocabSize,
    tied: m.tiedEmbeddings, gated: m.gatedMlp, norm: m.norm, positions: m.positions, attnBias: m.attnBias, mlpBias: m.mlpBias,
  };
}

// huggingface.co/tiiuae/falcon-7b config.json (transformers' FalconConfig spelling).
const FALCON_7B = {
  alibi: false, apply_residual_connection_post_layernorm: false, architectures: ['FalconForCausalLM'], attention_dropout: 0.0, bias: false,
  bos_token_id: 11, eos_token_id: 11, hidden_dropout: 0.0, hidden_size: 4544, initializer_range: 0.02, layer_norm_epsilon: 1e-5,
  model_type: 'falcon', multi_query: true, new_decoder_architecture: false, num_attention_heads: 71, num_hidden_layers: 32,
  parallel_attn: true, torch_dtype: 'bfloat16', vocab_size: 65024,
};
// The first tiiuae/falcon-40b config.json, written for the remote-code RWConfig (configuration_RW.py): no
// new_decoder_architecture key; model_type "RefinedWeb" is the 40B's architecture (modelling_RW.py: n_head_kv groups,
// ln_attn and ln_mlp).
const FALCON_40B_RW = {
  alibi: false, architectures: ['RWForCausalLM'], bias: false, hidden_dropout: 0.0, attention_dropout: 0.0, model_type: 'RefinedWeb',
  n_embed: 8192, n_head: 128, n_head_kv: 8, n_layer: 60, parallel_attn: true, vocab_size: 65024,
};

const h7 = 4544, h40 = 8192, V = 65024;
// Falcon-7B: query_key_value 4544 × (71 + 2)·64, dense 4544², MLP 2 × 4544 × 18176, one LayerNorm (weight and bias) per
// layer; the tied embedding and ln_f: 6,921,720,704.
const FALCON_7B_PARAMS = 32 * (h7 * 73 * 64 + h7 * h7 + 2 * h7 * 4 * h7 + 2 * h7) + V * h7 + 2 * h7;
// Falcon-40B: query_key_value 8192 × (128 + 2·8)·64, dense 8192², MLP 2 × 8192 × 32768, ln_attn and ln_mlp per layer.
const FALCON_40B_PARAMS = 60 * (h40 * 144 * 64 + h40 * h40 + 2 * h40 * 4 * h40 + 4 * h40) + V * h40 + 2 * h40;

describe('Falcon config.json', () => {
  before(async () => { await initFormats(); });

  test('Falcon-7B: one key/value head (multi_query), a 4·hidden GELU MLP, LayerNorm, no biases, a tied head; the parallel block said', () => {
    const { ref, opened, diagnostics, lines } = readBoth(FALCON_7B);
    const expected = { layers: 32, hidden: 4544, heads: 71, kv: 1, headDim: 64, ffn: 18176, vocab: 65024, tied: true, gated: false, norm: 'layernorm', positions: 'rotary', attnBias: 'none', mlpBias: false };
    assert.deepEqual(shape(ref.model), expected);
    assert.deepEqual(shape(opened), expected);
    assert.equal(ref.problems.some((p) => p.code === 'hf-config-unknown-type'), false, 'falcon is a known model type');
    assert.equal(ref.problems.find((p) => p.code === PARALLEL)?.severity, 'info');
    const d = diagnostics.find((x) => x.code === PARALLEL);
    assert.equal(d?.severity, 'info');
    assert.equal(d?.range.start.line, lines.findIndex((l) => l.includes('"parallel_attn"')));
    assert.equal(FALCON_7B_PARAMS, 6_921_720_704);
    // ShardLens counts two LayerNorms per layer where Falcon-7B has one: 2·4544 parameters a layer, under 0.005 %.
    const n = countParams(ref.model!).parameters;
    assert.equal(n - FALCON_7B_PARAMS, 32 * 2 * h7);
  });

  test('Falcon-40B in the RWConfig spelling (n_embed, n_layer, n_head, n_head_kv, model_type RefinedWeb): 8 key/value groups', () => {
    const { ref, opened } = readBoth(FALCON_40B_RW);
    const expected = { layers: 60, hidden: 8192, heads: 128, kv: 8, headDim: 64, ffn: 32768, vocab: 65024, tied: true, gated: false, norm: 'layernorm', positions: 'rotary', attnBias: 'none', mlpBias: false };
    assert.deepEqual(shape(ref.model), expected);
    assert.deepEqual(shape(opened), expected);
    assert.equal(countParams(ref.model!).parameters, FALCON_40B_PARAMS);
    assert.equal(FALCON_40B_PARAMS, 41_303_293_952);
  });

  test('without multi_query the heads keep their own keys and values; bias and alibi as written; ffn_hidden_size read', () => {
    const cfg = { model_type: 'falcon', hidden_size: 1024, num_hidden_layers: 4, num_attention_heads: 16, multi_query: false, parallel_attn: false, bias: true, alibi: true, ffn_hidden_size: 3000 };
    const { ref, opened } = readBoth(cfg);
    const expected = { layers: 4, hidden: 1024, heads: 16, kv: 16, headDim: 64, ffn: 3000, vocab: 65024, tied: true, gated: false, norm: 'layernorm', positions: 'alibi', attnBias: 'all', mlpBias: true };
    assert.deepEqual(shape(ref.model), expected);
    assert.deepEqual(shape(opened), expected);
    // parallel_attn false: attention and the MLP one after the other, as ShardLens counts them (no info).
    assert.equal(ref.problems.some((p) => p.code === PARALLEL), false);
  });

  test('new_decoder_architecture ignores multi_query; num_kv_heads unset is the query heads', () => {
    const m = modelFromHfConfig({ model_type: 'falcon', hidden_size: 1024, num_hidden_layers: 2, num_attention_heads: 16, new_decoder_architecture: true, multi_query: true }).model;
    assert.equal(m?.kvHeads, 16);
  });

  test('the remote-code 7B type (RefinedWebModel) keeps multi-query attention: one key/value head', () => {
    const { ref, opened } = readBoth({ model_type: 'RefinedWebModel', n_embed: 4544, n_head: 71, n_layer: 32, multi_query: true, parallel_attn: true, vocab_size: 65024 });
    assert.equal(ref.model?.kvHeads, 1);
    assert.equal(opened?.kvHeads, 1);
    assert.equal(countParams(ref.model!).parameters - FALCON_7B_PARAMS, 32 * 2 * h7);
  });

  test('an empty Falcon config takes FalconConfig\'s defaults (the falcon-7b architecture)', () => {
    const m = modelFromHfConfig({ model_type: 'falcon' }).model;
    assert.deepEqual(shape(m), { layers: 32, hidden: 4544, heads: 71, kv: 1, headDim: 64, ffn: 18176, vocab: 65024, tied: true, gated: false, norm: 'layernorm', positions: 'rotary', attnBias: 'none', mlpBias: false });
  });

  test('malformed widths are errors at the key, not a model', () => {
    const r = modelFromHfConfig({ model_type: 'falcon', hidden_size: 4544, num_attention_heads: 71, num_hidden_layers: 32, new_decoder_architecture: true, num_kv_heads: 'eight' });
    assert.equal(r.model, undefined);
    assert.ok(r.problems.some((p) => p.code === 'hf-config-bad-value' && p.paths?.includes('model.kvHeads')), JSON.stringify(r.problems));
  });

  test('presets: Falcon-7B, 40B and 180B with the info carried to every plan that uses them', () => {
    const p7 = findPreset('tiiuae/falcon-7b'), p40 = findPreset('falcon-40b'), p180 = findPreset('tiiuae/falcon-180B');
    assert.ok(p7 && p40 && p180);
    assert.equal(countParams(p7.model).parameters - FALCON_7B_PARAMS, 32 * 2 * h7);
    assert.equal(countParams(p40.model).parameters, FALCON_40B_PARAMS);
    // Falcon-180B: 80 layers of query_key_value 14848 × (232 + 16)·64, dense 14848², MLP 2 × 14848 × 59392 and two
    // LayerNorms; the tied embedding and ln_f: 178,557,088,768 (the "180B" of Almazrouei et al. 2023).
    const h = 14848;
    assert.equal(countParams(p180.model).parameters, 80 * (h * 248 * 64 + h * h + 8 * h * h + 4 * h) + V * h + 2 * h);
    assert.equal(p180.model.kvHeads, 8);
    for (const p of [p7, p40, p180]) assert.ok(p.notes?.some((n) => n.code === PARALLEL), p.model.name);
  });
});
