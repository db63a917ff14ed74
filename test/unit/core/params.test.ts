/** Exact parameter counts (docs/formulas.md#reference-values) and config.json reading. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countParams, layerParams, loraLayerParams, paddedVocabSize } from '../../../shared/model/params';
import { loraTargetsOf } from '../../../formats/common/maps';
import { rankParts } from '../../../shared/model/rankParams';
import { modelFromHfConfig } from '../../../shared/model/hfConfig';
import { preset } from './helpers';

// Published counts, each equal to an independent source (docs/formulas.md#reference-values: the counts the Hugging Face Hub reports).
const EXACT: [string, number, number?][] = [
  ['llama-2-7b', 6_738_415_616],
  ['llama-3-8b', 8_030_261_248],
  ['llama-3.1-8b', 8_030_261_248],
  ['llama-3.1-70b', 70_553_706_496],
  ['mistral-7b', 7_241_732_096],
  ['mixtral-8x7b', 46_702_792_704, 12_879_925_248],
  ['qwen2.5-0.5b', 494_032_768],
  ['qwen3-0.6b', 596_049_920],
  ['gpt2', 124_439_808],
  // KerasHub's Gemma presets (keras_hub/src/models/gemma/gemma_presets.py "params"): gemma_2b_en, gemma_7b_en. A tied head.
  ['gemma-2b', 2_506_172_416],
  ['gemma-7b', 8_537_680_896],
  // The safetensors totals the Hub reports for deepseek-ai/DeepSeek-R1-Distill-Qwen-32B and -Llama-8B, and the
  // tensor count llama.cpp reads from Mistral-Nemo-Instruct-2407 (n_params; Mistral's card says "12B").
  ['deepseek-r1-distill-qwen-32b', 32_763_876_352],
  ['deepseek-r1-distill-llama-8b', 8_030_261_248],
  ['mistral-nemo-12b', 12_247_782_400],
  // Its base, Llama-3.3-70B-Instruct, has Llama-3.1-70B's widths and count.
  ['deepseek-r1-distill-llama-70b', 70_553_706_496],
];

describe('parameter counts (docs/formulas.md#reference-values)', () => {
  for (const [name, total, active] of EXACT) {
    test(`${name} has exactly ${total.toLocaleString('en')} parameters`, () => {
      const c = countParams(preset(name));
      assert.equal(c.parameters, total);
      assert.equal(c.trainableParameters, total);
      assert.equal(c.activeParameters, active ?? total);
    });
  }
});

// Narayanan et al. 2021, Table 1 "Number of parameters (billion)", printed to 0.1 B.
const NARAYANAN: [string, number][] = [
  ['megatron-1.7b', 1.7], ['megatron-3.6b', 3.6], ['megatron-7.5b', 7.5], ['megatron-18.4b', 18.4], ['megatron-39.1b', 39.1],
  ['megatron-76.1b', 76.1], ['megatron-145.6b', 145.6], ['megatron-310.1b', 310.1], ['megatron-529.6b', 529.6], ['megatron-1008b', 1008.0],
];
describe('Narayanan et al. 2021 Table 1 parameter column', () => {
  for (const [name, billions] of NARAYANAN) {
    test(`${name} ≈ ${billions}B at the printed precision`, () => {
      const b = countParams(preset(name)).parameters / 1e9;
      assert.ok(Math.abs(b - billions) <= 0.05, `${b}`);
    });
  }
});

describe('vocabulary padding and LoRA', () => {
  test('Megatron pads Llama-3 128,256 to 129,024 rows at TP 8 (docs/formulas.md#parameters, vocabulary padding)', () => {
    assert.equal(paddedVocabSize(128_256, 128, 8), 129_024);
    const m = { ...preset('llama-3-8b'), vocabPadMultiple: 128 };
    // Two matrices (untied) grow by (129,024 − 128,256)·4096 each.
    assert.equal(countParams(m, undefined, 8).parameters, 8_030_261_248 + 2 * 768 * 4096);
  });
  test('LoRA r=8 on q,v of Llama-2-7B trains 4,194,304 parameters (PEFT docs: 0.062%)', () => {
    // 32 layers × 2 projections × r·(4096 + 4096).
    const c = countParams(preset('llama-2-7b'), { rank: 8, targets: ['q', 'v'], baseDtype: 'bf16' });
    assert.equal(c.trainableParameters, 4_194_304);
    assert.equal(c.parameters, 6_738_415_616 + 4_194_304);
  });
});

describe('modelFromHfConfig', () => {
  test('nested text_config is read', () => {
    const r = modelFromHfConfig({ model_type: 'llava', text_config: { model_type: 'llama', hidden_size: 4096, num_hidden_layers: 32, num_attention_heads: 32, num_key_value_heads: 8, intermediate_size: 14336, vocab_size: 128256 } });
    assert.equal(countParams(r.model!).parameters, 8_030_261_248);
  });
  test('Qwen2 gets q/k/v biases although the config says nothing', () => {
    const r = modelFromHfConfig({ model_type: 'qwen2', hidden_size: 896, num_hidden_layers: 24, num_attention_heads: 14, num_key_value_heads: 2, intermediate_size: 4864, vocab_size: 151936, tie_word_embeddings: true });
    assert.equal(r.model?.attnBias, 'qkv');
    assert.equal(r.sources['model.attnBias']?.kind, 'derived');
    assert.equal(countParams(r.model!).parameters, 494_032_768);
  });
  test('missing keys fall back to LlamaConfig defaults with default sources', () => {
    const r = modelFromHfConfig({ model_type: 'llama' });
    assert.equal(r.model?.hiddenSize, 4096);
    assert.equal(r.model?.ffnSize, 11008);
    assert.equal(r.sources['model.hiddenSize']?.kind, 'default');
  });
  test('DeepSeek multi-head latent attention is read by its widths (class defaults for the missing ones); MoE keys are read', () => {
    const r = modelFromHfConfig({ model_type: 'deepseek_v3', hidden_size: 7168, num_hidden_layers: 61, num_attention_heads: 128, intermediate_size: 18432, vocab_size: 129280, n_routed_experts: 256, n_shared_experts: 1, num_experts_per_tok: 8, moe_intermediate_size: 2048, first_k_dense_replace: 3, kv_lora_rank: 512 });
    // DeepseekV3Config defaults (transformers configuration_deepseek_v3.py): q_lora_rank 1536, qk_nope 128, qk_rope 64, v 128.
    assert.deepEqual(r.model?.mla, { qLoraRank: 1536, kvLoraRank: 512, qkNopeHeadDim: 128, qkRopeHeadDim: 64, vHeadDim: 128 });
    assert.equal(r.sources['model.mla.kvLoraRank']?.kind, 'explicit');
    assert.equal(r.sources['model.mla.qLoraRank']?.kind, 'default');
    // Queries and keys are 128 + 64 wide per head, and every query head has its own key and value.
    assert.equal(r.model?.headDim, 192);
    assert.equal(r.model?.kvHeads, 128);
    assert.ok(!r.problems.some((p) => p.severity !== 'info'), JSON.stringify(r.problems));
    assert.equal(r.model?.moe?.experts, 256);
    assert.equal(r.model?.moe?.denseFirstLayers, 3);
    // 58 MoE layers (61 − 3 dense).
    assert.equal(countParams(r.model!).moeLayers, 58);
    assert.equal(r.model?.moe?.routerGroups, undefined, 'no n_group: unlimited routing');
  });
  test('MLA parameters per layer, counted by hand from DeepSeek-V3\'s config.json, and their TP split', () => {
    // transformers DeepseekV3Attention: q_a_proj 7168→1536, q_a_layernorm 1536, q_b_proj 1536→128·192,
    // kv_a_proj_with_mqa 7168→512+64, kv_a_layernorm 512, kv_b_proj 512→128·(128+128), o_proj 128·128→7168; no biases.
    const qA = 7168 * 1536, qB = 1536 * 128 * 192, kvA = 7168 * 576, kvB = 512 * 128 * 256, o = 128 * 128 * 7168;
    const m = preset('deepseek-v3');
    const per = countParams(m).perLayer;
    assert.equal(per.attnWeights + per.attnOther, qA + qB + kvA + kvB + o + 1536 + 512);
    // Megatron builds the down projections duplicated (multi_latent_attention.py parallel_mode 'duplicated'): at TP 8 a
    // rank holds them and the latent norms whole, an eighth of q_b, kv_b and o, and the layer's two RMSNorms.
    assert.equal(rankParts(m, 8, 1, 1, 1).attn, (qB + kvB + o) / 8 + qA + kvA + 1536 + 512 + 2 * 7168);
  });
  test('DeepSeek-V2-Lite: q_lora_rank null projects queries from the hidden state (2048 → 16·192)', () => {
    const r = modelFromHfConfig({ model_type: 'deepseek_v2', hidden_size: 2048, num_hidden_layers: 27, num_attention_heads: 16, num_key_value_heads: 16, intermediate_size: 10944, vocab_size: 102400, q_lora_rank: null, kv_lora_rank: 512, qk_nope_head_dim: 128, qk_rope_head_dim: 64, v_head_dim: 128 });
    assert.equal(r.model?.mla?.qLoraRank, 0);
    const per = countParams(r.model!).perLayer;
    assert.equal(per.attnWeights + per.attnOther, 2048 * 16 * 192 + 2048 * 576 + 512 + 512 * 16 * 256 + 16 * 128 * 2048);
  });
  test('LoRA on MLA adapts its own projections: q_proj, kv_a_proj_with_mqa, kv_b_proj and o_proj of DeepSeek-V2-Lite', () => {
    // PEFT on transformers DeepseekV2Attention with q_lora_rank null, rank 8: r·(in + out) per module — q_proj
    // 2048 → 16·192, kv_a_proj_with_mqa 2048 → 512 + 64, kv_b_proj 512 → 16·256, o_proj 16·128 → 2048.
    const m = preset('deepseek-v2-lite');
    const r = 8;
    assert.equal(loraLayerParams(m, { rank: r, targets: ['q', 'k', 'v', 'o'], baseDtype: 'bf16' }), r * ((2048 + 3072) + (2048 + 576) + (512 + 4096) + (2048 + 2048)));
    // The module names a LLaMA-Factory or PEFT config lists map to those targets.
    assert.equal(loraTargetsOf(['q_proj', 'kv_a_proj_with_mqa', 'kv_b_proj', 'o_proj']), 'q,k,v,o');
    assert.equal(loraTargetsOf(['q_a_proj', 'q_b_proj']), 'q');
    // Qwen3.5's LoRA targets (transformers Qwen3_5GatedDeltaNet in_proj_qkv, out_proj; Qwen3-Next's in_proj_qkvz) and
    // MPT's out_proj are not dropped: they count as the attention projections of the same role.
    assert.equal(loraTargetsOf(['in_proj_qkv', 'out_proj']), 'q,k,v,o');
    assert.equal(loraTargetsOf(['in_proj_qkvz']), 'q,k,v');
  });
  test('Kimi K2 (model_type kimi_k2, DeepSeek-V3\'s architecture) is read as MLA with its MoE, not as a Llama-style decoder', () => {
    // moonshotai/Kimi-K2-Instruct config.json widths: 61 layers of 7168, 64 heads, 384 routed experts of 2048 (top 8) and
    // one shared, the first layer dense. Its model card: 1T total, 32B activated — the activated count leaves the input
    // embedding (163,840 × 7,168) out, as DeepSeek-V3's 37B does.
    const r = modelFromHfConfig({ model_type: 'kimi_k2', vocab_size: 163840, hidden_size: 7168, intermediate_size: 18432, moe_intermediate_size: 2048, num_hidden_layers: 61, num_attention_heads: 64, num_key_value_heads: 64, n_routed_experts: 384, n_shared_experts: 1, num_experts_per_tok: 8, first_k_dense_replace: 1, kv_lora_rank: 512, q_lora_rank: 1536, qk_nope_head_dim: 128, qk_rope_head_dim: 64, v_head_dim: 128, tie_word_embeddings: false });
    assert.ok(!r.problems.some((p) => p.code === 'hf-config-unknown-type'));
    assert.equal(r.model?.mla?.kvLoraRank, 512);
    const c = countParams(r.model!);
    assert.ok(Math.abs(c.parameters / 1e12 - 1) < 0.05, `${c.parameters}`);
    assert.ok(Math.abs((c.activeParameters - 163840 * 7168) / 32e9 - 1) < 0.02, `${c.activeParameters}`);
  });
  test('bad MLA widths are an error at their key, never a model', () => {
    const r = modelFromHfConfig({ model_type: 'deepseek_v3', hidden_size: 7168, num_hidden_layers: 61, num_attention_heads: 128, kv_lora_rank: -3 });
    assert.equal(r.model, undefined);
    assert.ok(r.problems.some((p) => p.code === 'hf-config-bad-value' && p.paths.includes('model.mla.kvLoraRank')));
    // kv_lora_rank null: no latent attention (standard attention of head_dim).
    const plain = modelFromHfConfig({ model_type: 'deepseek_v3', hidden_size: 7168, num_hidden_layers: 61, num_attention_heads: 128, kv_lora_rank: null });
    assert.equal(plain.model?.mla, undefined);
  });
  test('DeepSeek-V3 node-limited routing: n_group 8 and topk_group 4 (its config.json) are the routing groups', () => {
    const r = modelFromHfConfig({ model_type: 'deepseek_v3', hidden_size: 7168, num_hidden_layers: 61, num_attention_heads: 128, intermediate_size: 18432, vocab_size: 129280, n_routed_experts: 256, num_experts_per_tok: 8, moe_intermediate_size: 2048, n_group: 8, topk_group: 4 });
    assert.equal(r.model?.moe?.routerGroups, 8);
    assert.equal(r.model?.moe?.routerGroupTopK, 4);
    // DeepSeek-V2-Lite's n_group 1, topk_group 1 limits nothing.
    const lite = modelFromHfConfig({ model_type: 'deepseek_v2', hidden_size: 2048, num_hidden_layers: 27, num_attention_heads: 16, n_routed_experts: 64, num_experts_per_tok: 6, n_group: 1, topk_group: 1 });
    assert.equal(lite.model?.moe?.routerGroups, undefined);
  });
  test('GPT-NeoX (Pythia-160M) reads LayerNorm, biases and a plain MLP: 162,322,944 parameters (Biderman et al. 2023, Pythia Table 1: 85,056,000 non-embedding)', () => {
    // Per layer: qkv 3h² + 3h, dense h² + h, MLP 8h² + 5h, two LayerNorms 4h; + embed and untied head V·h + final LN 2h.
    const h = 768, V = 50304, L = 12;
    const expected = L * (12 * h * h + 13 * h) + 2 * V * h + 2 * h;
    const r = modelFromHfConfig({ model_type: 'gpt_neox', hidden_size: h, num_hidden_layers: L, num_attention_heads: 12, intermediate_size: 3072, vocab_size: V, tie_word_embeddings: false, max_position_embeddings: 2048 });
    assert.equal(countParams(r.model!).parameters, expected);
    assert.equal(expected, 162_322_944);
  });
  test('unknown model types are read Llama-style with an info problem', () => {
    const r = modelFromHfConfig({ model_type: 'brandnew', hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, intermediate_size: 128, vocab_size: 100 });
    assert.ok(r.model);
    assert.equal(r.problems[0]?.code, 'hf-config-unknown-type');
  });
  test('garbage never throws and gives typed problems', () => {
    for (const g of [null, 3, 'x', [], { hidden_size: -1 }, { num_hidden_layers: 1.5 }, { vocab_size: 'big' }, { text_config: 7 }]) {
      const r = modelFromHfConfig(g);
      assert.ok(Array.isArray(r.problems));
      if (r.model) for (const v of [r.model.hiddenSize, r.model.layers, r.model.vocabSize]) assert.ok(Number.isFinite(v) && v > 0);
    }
    assert.equal(modelFromHfConfig({ hidden_size: -1 }).model, undefined);
  });
});

// Totals the model cards publish, rounded to their digits: Qwen3 (huggingface.co/Qwen/Qwen3-*: "Number of Parameters"),
// DeepSeek-V2-Lite 15.7B, DeepSeek-V2 236B and DeepSeek-V3 671B (their model cards and technical reports), Llama 4
// Scout 109B and Maverick 400B total with 17B active (Meta's model card; Scout's total counts its vision encoder, which
// the text model leaves out).
const PUBLISHED: [string, number, number?][] = [
  ['qwen3-1.7b', 1.7e9], ['qwen3-4b', 4.0e9], ['qwen3-14b', 14.8e9], ['qwen3-32b', 32.8e9], ['qwen3-235b-a22b', 235e9, 22e9],
  ['deepseek-v2-lite', 15.7e9], ['deepseek-v2', 236e9], ['deepseek-v3', 671e9],
  ['llama-4-scout', 109e9, 17e9], ['llama-4-maverick', 400e9, 17e9],
  // TinyLlama 1.1B (its model card), Qwen1.5-MoE-A2.7B 14.3B total and 2.7B activated (its model card).
  ['tinyllama-1.1b', 1.1e9], ['qwen1.5-moe-a2.7b', 14.3e9, 2.7e9],
  // SmolLM 135M, 360M and 1.7B (HuggingFaceTB model cards).
  ['smollm-135m', 135e6], ['smollm-360m', 360e6], ['smollm-1.7b', 1.7e9],
  // Qwen2.5 technical report Table 1 and the model cards: 1.54B, 3.09B, 14.7B, 32.5B; Phi-3-mini 3.8B, 4k and 128k (their model cards).
  ['qwen2.5-1.5b', 1.54e9], ['qwen2.5-3b', 3.09e9], ['qwen2.5-14b', 14.7e9], ['qwen2.5-32b', 32.5e9], ['phi-3-mini', 3.8e9], ['phi-3-mini-128k', 3.8e9],
  // KerasHub gemma2 presets: 2,614,341,888, 9,241,705,984 and 27,227,128,320 (the Gemma 2 report's 2.6B, 9.2B, 27.2B);
  // ShardLens counts two of the four RMSNorms of each layer (2·h per layer short, under 0.01 %).
  ['gemma-2-2b', 2_614_341_888], ['gemma-2-9b', 9_241_705_984], ['gemma-2-27b', 27_227_128_320],
  // Gemma 3 report (arXiv 2503.19786) Table 1, embedding + non-embedding parameters of the language model (the 417M
  // vision encoder of 4B, 12B and 27B is not counted): 302M + 698M, 675M + 3,209M, 1,012M + 10,759M, 1,416M + 25,600M.
  ['gemma-3-1b', 1.0e9], ['gemma-3-4b', 3.884e9], ['gemma-3-12b', 11.771e9], ['gemma-3-27b', 27.016e9],
  // Qwen2 (qwenlm.github.io/blog/qwen2, model table): 0.49B, 1.54B and 72.71B. The table's 7.07B for Qwen2-7B does not
  // follow from its config.json; the module shapes transformers prints for Qwen2-7B-Instruct (embedding and untied head
  // 152,064 × 3,584, 28 layers of q/k/v/o 3584 → 3584/512/512/3584 with q/k/v biases and an MLP of 3 × 3,584 × 18,944)
  // sum to 7.62B, Qwen2.5-7B's count (its card: 7.61B) for the same widths.
  ['qwen2-0.5b', 0.49e9], ['qwen2-1.5b', 1.54e9], ['qwen2-7b', 7.62e9], ['qwen2-72b', 72.71e9],
  // DeepSeek-R1-Distill (deepseek-ai/DeepSeek-R1 README: their bases): Qwen-1.5B is Qwen2.5-Math-1.5B (Qwen2.5-1.5B's
  // 1.54B) with its output layer untied (config.json tie_word_embeddings false): + 151,936 × 1,536 = 1.777B; Qwen-7B
  // is Qwen2.5-Math-7B (Qwen2.5-7B's 7.61B), Qwen-14B is Qwen2.5-14B (14.7B).
  ['deepseek-r1-distill-qwen-1.5b', 1.777e9], ['deepseek-r1-distill-qwen-7b', 7.61e9], ['deepseek-r1-distill-qwen-14b', 14.7e9],
  // MPT-7B: 6.7B (mosaicml/mpt-7b model card, "n_parameters").
  ['mpt-7b', 6.7e9],
  // gpt-oss (openai/gpt-oss README.md): 117B and 21B parameters; active counts are checked below.
  ['gpt-oss-120b', 117e9], ['gpt-oss-20b', 21e9],
];

describe('parameter counts of the newer presets against their model cards (within 2 %)', () => {
  for (const [name, total, active] of PUBLISHED) {
    test(`${name}: ${total / 1e9}B${active ? `, ${active / 1e9}B active` : ''}`, () => {
      const c = countParams(preset(name));
      assert.ok(Math.abs(c.parameters / total - 1) <= 0.02, `${c.parameters} vs ${total}`);
      if (active) assert.ok(Math.abs(c.activeParameters / active - 1) <= 0.02, `active ${c.activeParameters} vs ${active}`);
    });
  }
  test('Qwen-7B (model_type "qwen"): the MLP is intermediate_size / 2 = 11,008 wide, c_attn has q/k/v biases: 7.72B', () => {
    // modeling_qwen.py: per layer c_attn 4096 × 12288 + 12288, c_proj 4096², w1, w2 4096 × 11008, MLP c_proj 11008 × 4096,
    // two RMSNorms; wte and an untied lm_head 151,936 × 4,096; ln_f. Read as 22,016 wide, it would be 12.05B.
    const h = 4096, f = 11008, V = 151936, L = 32;
    const expected = L * (3 * h * h + 3 * h + h * h + 3 * h * f + 2 * h) + 2 * V * h + h;
    assert.equal(expected, 7_721_324_544);
    const m = preset('qwen-7b');
    assert.equal(m.ffnSize, 11008);
    assert.equal(m.attnBias, 'qkv');
    assert.equal(countParams(m).parameters, expected);
  });
  test('gpt-oss: 3.6B and 5.1B active (openai/gpt-oss README.md), counting the unembedding but not the embedding table', () => {
    for (const [name, active] of [['gpt-oss-20b', 3.6e9], ['gpt-oss-120b', 5.1e9]] as const) {
      const c = countParams(preset(name));
      assert.ok(Math.abs((c.activeParameters - c.embedding) / active - 1) <= 0.02, `${name}: ${c.activeParameters - c.embedding}`);
    }
    const m = preset('gpt-oss-20b');
    assert.deepEqual([m.moe?.experts, m.moe?.topK, m.moe?.expertFfnSize, m.moe?.sharedExperts, m.mlpBias, m.attnBias], [32, 4, 2880, 0, true, 'all']);
  });
  test('gpt-oss: a learned sink logit per head and a bias per expert on the router, in every layer', () => {
    // transformers 5.24 modeling_gpt_oss.py: GptOssAttention `sinks` (num_attention_heads), GptOssTopKRouter `bias`
    // (num_local_experts); gpt-oss-20b has 64 heads, 32 experts, h = 2880, head_dim 64, 8 KV heads.
    const per = layerParams(preset('gpt-oss-20b'));
    assert.equal(per.router, 2880 * 32 + 32);
    assert.equal(per.attnOther, (64 * 64 + 2 * 8 * 64) + 2880 + 64);
  });
  test('Llama 4: dense layers use intermediate_size_mlp, experts and the shared expert intermediate_size, every 2nd layer MoE (Maverick)', () => {
    const m = preset('llama-4-maverick');
    assert.equal(m.ffnSize, 16384);
    assert.equal(m.moe?.expertFfnSize, 8192);
    assert.equal(m.moe?.sharedExperts, 1);
    assert.equal(m.moe?.sharedExpertFfnSize, 8192);
    assert.equal(m.moe?.layerFrequency, 2);
    assert.equal(m.moe?.experts, 128);
  });
});
