/**
 * config.json of the model types read since Gemma, Qwen (1) and gpt-oss presets came in: each a trimmed copy of the
 * Hub's file, read by both readers (shared/model/hfConfig.ts for a referenced model, formats/hf-config/reader.ts for
 * an opened file). Expected widths: the transformers configuration classes and modelling code named at each case.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { modelFromHfConfig } from '../../../shared/model/hfConfig';
import { countParams } from '../../../shared/model/params';
import type { ModelSpec } from '../../../shared/plan/types';
import { memoryHost } from './helpers';

const SLIDING = 'hf-config-sliding-window';

/** The model and problems of each reader, and the diagnostics of the opened file. */
function readBoth(cfg: object) {
  const ref = modelFromHfConfig(cfg);
  const g = loadConfigGraph('/ws/config.json', memoryHost({ '/ws/config.json': JSON.stringify(cfg, null, 2) }), { settings: {} });
  return { ref, opened: g.resolved.plan?.model, diagnostics: g.primary.diagnostics };
}

/** Widths both readers must agree on. */
function widths(m: ModelSpec | undefined) {
  return m && { layers: m.layers, hidden: m.hiddenSize, heads: m.heads, kv: m.kvHeads, headDim: m.headDim, ffn: m.ffnSize, vocab: m.vocabSize, tied: m.tiedEmbeddings, qkNorm: m.qkNorm };
}

// huggingface.co/google/gemma-7b config.json: no tie_word_embeddings key (GemmaConfig's default ties the head).
const GEMMA_7B = {
  architectures: ['GemmaForCausalLM'], attention_bias: false, head_dim: 256, hidden_act: 'gelu', hidden_size: 3072, intermediate_size: 24576,
  max_position_embeddings: 8192, model_type: 'gemma', num_attention_heads: 16, num_hidden_layers: 28, num_key_value_heads: 16, rms_norm_eps: 1e-6, vocab_size: 256000,
};
// huggingface.co/google/gemma-2-9b config.json.
const GEMMA2_9B = {
  architectures: ['Gemma2ForCausalLM'], attn_logit_softcapping: 50.0, final_logit_softcapping: 30.0, head_dim: 256, hidden_activation: 'gelu_pytorch_tanh',
  hidden_size: 3584, intermediate_size: 14336, max_position_embeddings: 8192, model_type: 'gemma2', num_attention_heads: 16, num_hidden_layers: 42,
  num_key_value_heads: 8, query_pre_attn_scalar: 256, sliding_window: 4096, vocab_size: 256000,
};
// huggingface.co/google/gemma-3-4b-it config.json: the text_config names neither heads, KV heads, head_dim nor vocabulary.
const GEMMA3_4B = {
  architectures: ['Gemma3ForConditionalGeneration'], image_token_index: 262144, mm_tokens_per_image: 256, model_type: 'gemma3',
  text_config: { hidden_size: 2560, intermediate_size: 10240, model_type: 'gemma3_text', num_hidden_layers: 34, rope_scaling: { factor: 8.0, rope_type: 'linear' }, sliding_window: 1024 },
  vision_config: { hidden_size: 1152, image_size: 896, intermediate_size: 4304, model_type: 'siglip_vision_model', num_attention_heads: 16, num_hidden_layers: 27, patch_size: 14 },
};
// huggingface.co/openai/gpt-oss-20b config.json (quantization_config and rope_scaling left out).
const GPT_OSS_20B = {
  architectures: ['GptOssForCausalLM'], attention_bias: true, experts_per_token: 4, head_dim: 64, hidden_size: 2880, intermediate_size: 2880,
  layer_types: Array.from({ length: 24 }, (_, i) => (i % 2 ? 'full_attention' : 'sliding_attention')), max_position_embeddings: 131072, model_type: 'gpt_oss',
  num_attention_heads: 64, num_experts_per_tok: 4, num_hidden_layers: 24, num_key_value_heads: 8, num_local_experts: 32, sliding_window: 128, swiglu_limit: 7.0,
  tie_word_embeddings: false, vocab_size: 201088,
};
// huggingface.co/Qwen/Qwen-7B config.json (remote code).
const QWEN_7B = {
  architectures: ['QWenLMHeadModel'], hidden_size: 4096, intermediate_size: 22016, kv_channels: 128, max_position_embeddings: 32768, model_type: 'qwen',
  no_bias: true, num_attention_heads: 32, num_hidden_layers: 32, seq_length: 8192, tie_word_embeddings: false, vocab_size: 151936,
};
// huggingface.co/mosaicml/mpt-7b config.json: learned_pos_emb and attn_config.alibi both true.
const MPT_7B = {
  architectures: ['MPTForCausalLM'], attn_config: { alibi: true, alibi_bias_max: 8, attn_impl: 'torch', attn_type: 'multihead_attention' }, d_model: 4096,
  expansion_ratio: 4, learned_pos_emb: true, max_seq_len: 2048, model_type: 'mpt', n_heads: 32, n_layers: 32, no_bias: true, norm_type: 'low_precision_layernorm', vocab_size: 50432,
};

describe('config.json of Gemma, gpt-oss, Qwen (1) and MPT, read by both readers', () => {
  before(async () => { await initFormats(); });

  test('Gemma (1): head_dim read, the head tied by GemmaConfig default, no sliding window: 8,537,680,896 (KerasHub gemma_7b_en)', () => {
    const { ref, opened, diagnostics } = readBoth(GEMMA_7B);
    assert.deepEqual(widths(ref.model), { layers: 28, hidden: 3072, heads: 16, kv: 16, headDim: 256, ffn: 24576, vocab: 256000, tied: true, qkNorm: false });
    assert.deepEqual(widths(opened), widths(ref.model));
    assert.equal(ref.model?.gatedMlp, true); // GemmaMLP: gate_proj, up_proj, down_proj.
    assert.equal(ref.sources['model.tiedEmbeddings']?.kind, 'default');
    assert.equal(countParams(ref.model!).parameters, 8_537_680_896);
    assert.ok(!ref.problems.some((p) => p.code === SLIDING) && !diagnostics.some((d) => d.code === SLIDING));
  });

  test('Gemma 2: tied head, and an info at sliding_window that every other layer is costed as full attention', () => {
    const { ref, opened, diagnostics } = readBoth(GEMMA2_9B);
    assert.deepEqual(widths(opened), { layers: 42, hidden: 3584, heads: 16, kv: 8, headDim: 256, ffn: 14336, vocab: 256000, tied: true, qkNorm: false });
    assert.deepEqual(widths(ref.model), widths(opened));
    const p = ref.problems.find((x) => x.code === SLIDING);
    assert.equal(p?.severity, 'info');
    assert.match(p?.message ?? '', /^config\.json sliding_window: .*4096 tokens in every other layer.*full causal attention/);
    const d = diagnostics.find((x) => x.code === SLIDING);
    assert.equal(d?.severity, 'info');
    assert.equal(d?.range.start.line, JSON.stringify(GEMMA2_9B, null, 2).split('\n').findIndex((l) => l.includes('"sliding_window"')));
  });

  test('Gemma 3: the language model from text_config with Gemma3TextConfig defaults (8 heads, 4 KV heads, head_dim 256, 262,208 words), q/k norms, one info', () => {
    const { ref, opened, diagnostics } = readBoth(GEMMA3_4B);
    assert.deepEqual(widths(ref.model), { layers: 34, hidden: 2560, heads: 8, kv: 4, headDim: 256, ffn: 10240, vocab: 262208, tied: true, qkNorm: true });
    assert.deepEqual(widths(opened), widths(ref.model));
    // Gemma 3 report Table 1, 4B: 675M embedding + 3,209M non-embedding; the 417M vision encoder is not counted.
    assert.ok(Math.abs(countParams(ref.model!).parameters / 3.884e9 - 1) <= 0.005);
    assert.equal(ref.problems.filter((x) => x.code === SLIDING).length, 1);
    assert.match(ref.problems.find((x) => x.code === SLIDING)!.message, /text_config\.sliding_window: .*1024 tokens in 5 of every 6 layers/);
    assert.equal(diagnostics.filter((x) => x.code === SLIDING).length, 1, JSON.stringify(diagnostics));
  });

  test('gpt-oss: 32 experts, top 4, each 2,880 wide with biases, biased attention, no shared expert, untied; layer_types gives the info', () => {
    const { ref, opened, diagnostics } = readBoth(GPT_OSS_20B);
    for (const m of [ref.model, opened]) {
      assert.deepEqual([m?.moe?.experts, m?.moe?.topK, m?.moe?.expertFfnSize, m?.moe?.sharedExperts, m?.moe?.layerFrequency], [32, 4, 2880, 0, 1]);
      assert.deepEqual([m?.attnBias, m?.mlpBias, m?.tiedEmbeddings, m?.headDim, m?.kvHeads], ['all', true, false, 64, 8]);
    }
    // openai/gpt-oss README.md: 21B parameters.
    assert.ok(Math.abs(countParams(opened!).parameters / 21e9 - 1) <= 0.02);
    assert.match(ref.problems.find((x) => x.code === SLIDING)?.message ?? '', /layer_types: .*128 tokens in 12 of 24 layers/);
    assert.equal(diagnostics.filter((x) => x.code === SLIDING).length, 1);
  });

  test('gpt-oss written with experts_per_token alone (the vendor checkpoint\'s key) routes to 4 experts', () => {
    const { num_experts_per_tok: _, ...vendor } = GPT_OSS_20B;
    const { ref, opened } = readBoth(vendor);
    assert.equal(ref.model?.moe?.topK, 4);
    assert.equal(opened?.moe?.topK, 4);
  });

  test('Qwen (1): intermediate_size 22,016 is an MLP of 11,008; q/k/v biases from c_attn, none on c_proj (no_bias)', () => {
    const { ref, opened } = readBoth(QWEN_7B);
    for (const m of [ref.model, opened]) assert.deepEqual([m?.ffnSize, m?.attnBias, m?.mlpBias, m?.kvHeads, m?.headDim, m?.tiedEmbeddings], [11008, 'qkv', false, 32, 128, false]);
    assert.equal(ref.sources['model.ffnSize']?.kind, 'derived');
    // modeling_qwen.py shapes (test/unit/core/params.test.ts): 7,721,324,544.
    assert.equal(countParams(opened!).parameters, 7_721_324_544);
    const biased = readBoth({ ...QWEN_7B, no_bias: false });
    for (const m of [biased.ref.model, biased.opened]) assert.deepEqual([m?.attnBias, m?.mlpBias], ['all', true]);
  });

  test('MPT with ALiBi: no learned position table although learned_pos_emb says true (MPTConfig turns it off)', () => {
    const { ref, opened } = readBoth(MPT_7B);
    for (const m of [ref.model, opened]) assert.equal(m?.positions, 'alibi');
    assert.equal(countParams(ref.model!).positions, 0);
    // mosaicml/mpt-7b model card: 6.7B parameters.
    assert.ok(Math.abs(countParams(ref.model!).parameters / 6.7e9 - 1) <= 0.02);
  });

  test('MPT with no_bias: the LayerNorms have no bias either (6,649,286,656 parameters, as transformers builds mpt-7b)', () => {
    // transformers 5.24 modeling_mpt.py MptBlock: norm_1.bias = norm_2.bias = None, MptModel norm_f.bias = None;
    // llm-foundry's MPTModel removes every module's bias under no_bias. The count is AutoModelForCausalLM.from_config
    // of the same config.json on the meta device (probe/oracle/preset_params.py).
    const { ref, opened } = readBoth(MPT_7B);
    for (const m of [ref.model, opened]) assert.equal(m?.normBias, false);
    assert.equal(countParams(ref.model!).parameters, 6_649_286_656);
    assert.equal(countParams(opened!).parameters, 6_649_286_656);
  });

  test('sliding_window is an info only where attention slides: Mistral v0.1 yes; Qwen2.5 (use_sliding_window false), a null window, Llama no', () => {
    // huggingface.co/mistralai/Mistral-7B-v0.1 config.json.
    const mistral = { model_type: 'mistral', hidden_size: 4096, intermediate_size: 14336, max_position_embeddings: 32768, num_attention_heads: 32, num_hidden_layers: 32, num_key_value_heads: 8, sliding_window: 4096, vocab_size: 32000 };
    assert.match(readBoth(mistral).ref.problems.find((x) => x.code === SLIDING)?.message ?? '', /4096 tokens in every layer/);
    // huggingface.co/Qwen/Qwen2.5-1.5B config.json: a window written, switched off.
    const qwen = { model_type: 'qwen2', hidden_size: 1536, intermediate_size: 8960, max_position_embeddings: 131072, num_attention_heads: 12, num_hidden_layers: 28, num_key_value_heads: 2, sliding_window: 131072, use_sliding_window: false, tie_word_embeddings: true, vocab_size: 151936 };
    for (const cfg of [qwen, { ...mistral, sliding_window: null }, { ...GEMMA2_9B, sliding_window: null }, { ...mistral, model_type: 'llama', sliding_window: undefined }]) {
      const { ref, diagnostics } = readBoth(cfg);
      assert.ok(!ref.problems.some((x) => x.code === SLIDING) && !diagnostics.some((x) => x.code === SLIDING), JSON.stringify(cfg));
    }
  });
});
