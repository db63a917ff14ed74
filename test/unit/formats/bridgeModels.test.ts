/**
 * Models that Megatron-Bridge recipes build and ShardLens now bundles or reads exactly. Expected parameter counts are
 * transformers 5.24's, the model built from the same config.json on the meta device (AutoModelForCausalLM.from_config,
 * probe/oracle/preset_params.py, which test/probe/presetParams.test.ts reruns): GLM-4.5 352,797,814,784 and
 * GLM-4.5-Air 106,852,245,504 (the model cards' 355B and 106B include the multi-token-prediction layer transformers does
 * not build), OLMoE-1B-7B 6,919,161,856 (Muennighoff et al. 2024: "6.9B total"), Qwen3.5-27B 26,895,998,464 and
 * Qwen3.5-397B-A17B 398,611,274,496 (language models); OLMo 2 and GLM (dense) at their config classes' defaults,
 * 6,888,624,128 and 9,399,951,360. What the modelling code builds (transformers 5.24): Glm4MoeAttention q/k/v with
 * bias=attention_bias and o_proj bias=False, q_norm/k_norm of head_dim when use_qk_norm; OlmoeAttention and
 * Olmo2Attention q_norm over heads·head_dim and k_norm over kv-heads·head_dim. Recipes: Megatron-Bridge 067f987df
 * recipes/glm/h100/glm45.py line 27 (`from_hf_pretrained("zai-org/GLM-4.5")`, line 66 `mtp_num_layers = 1`),
 * recipes/moonlight/h100/moonlight_16b.py (`_moonlight_16b_model_provider`, `_MOONLIGHT_16B_MODEL_ID`),
 * recipes/qwen/gb200/qwen35.py (`AutoConfig.from_pretrained(_QWEN35_35B_A3B_BASE)`).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { initFormats, parseConfig } from '../../../formats/index';
import { findBridgeRecipe } from '../../../formats/megatron/bridgeRecipes';
import { modelFromHfConfig } from '../../../shared/model/hfConfig';
import { countParams } from '../../../shared/model/params';
import { findPreset } from '../../../shared/model/presets';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { memoryHost } from './helpers';

const params = (id: string) => countParams(findPreset(id)!.model).parameters;
/** A config.json opened in the editor (the facts reader, not the preset reader). */
const opened = (cfg: unknown) => loadConfigGraph('/ws/config.json', memoryHost({ '/ws/config.json': JSON.stringify(cfg, null, 2) }), { settings: {} });
const launch = (recipe: string, extra = '') => `#!/bin/bash\ntorchrun --nproc_per_node 8 scripts/training/run_recipe.py --recipe ${recipe} ${extra}\n`;

describe('models of Megatron-Bridge recipes', () => {
  before(async () => { await initFormats(); });

  const cases: [string, number][] = [
    ['glm-4.5', 352_797_814_784], ['glm-4.5-air', 106_852_245_504], ['olmoe-1b-7b', 6_919_161_856],
    ['qwen3.5-27b', 26_895_998_464], ['qwen3.5-397b-a17b', 398_611_274_496],
  ];
  for (const [id, want] of cases) {
    test(`${id}: the preset and the same config.json opened count what transformers builds`, () => {
      assert.equal(params(id), want);
      const { _shardlens: _s, ...cfg } = JSON.parse(readFileSync(`data/models/${id}.json`, 'utf8')) as Record<string, unknown>;
      assert.equal(countParams(opened(cfg).resolved.plan!.model).parameters, want);
    });
  }

  test('GLM-4.5: q/k/v biases without an output bias, per-head q/k norms only where use_qk_norm says', () => {
    const big = findPreset('zai-org/GLM-4.5')!.model, air = findPreset('zai-org/GLM-4.5-Air')!.model;
    assert.deepEqual([big.attnBias, big.qkNorm, big.qkNormWidth], ['qkv', true, undefined]);
    assert.deepEqual([air.attnBias, air.qkNorm], ['qkv', false]);
    assert.deepEqual([big.moe?.experts, big.moe?.denseFirstLayers, big.moe?.sharedExperts, air.moe?.experts, air.moe?.denseFirstLayers], [160, 3, 1, 128, 1]);
  });

  test('OLMo 2 and OLMoE normalise the whole q and k projections; GLM (dense) keeps o_proj without a bias', () => {
    const olmo2 = { model_type: 'olmo2', vocab_size: 50304, hidden_size: 4096, intermediate_size: 11008, num_hidden_layers: 32, num_attention_heads: 32, max_position_embeddings: 2048 };
    const m = modelFromHfConfig(olmo2).model!;
    assert.deepEqual([m.qkNorm, m.qkNormWidth], [true, 'projection']);
    assert.equal(countParams(m).parameters, 6_888_624_128);
    assert.equal(countParams(opened(olmo2).resolved.plan!.model).parameters, 6_888_624_128);
    const glm = { model_type: 'glm', vocab_size: 151552, hidden_size: 4096, intermediate_size: 13696, num_hidden_layers: 40, num_attention_heads: 32, num_key_value_heads: 2, head_dim: 128, attention_bias: true, max_position_embeddings: 131072 };
    assert.equal(modelFromHfConfig(glm).model!.attnBias, 'qkv');
    assert.equal(countParams(modelFromHfConfig(glm).model!).parameters, 9_399_951_360);
  });

  test('recipes name their model through a helper, AutoConfig or hf_model_id, and the launch resolves it', () => {
    assert.equal(findBridgeRecipe('moonlight_16b_pretrain_8gpu_h100_bf16_config')!.hf, 'moonshotai/Moonlight-16B-A3B');
    assert.equal(findBridgeRecipe('moonlight_16b_sft_8gpu_h100_bf16_config')!.hf, 'moonshotai/Moonlight-16B-A3B');
    assert.equal(findBridgeRecipe('qwen35_text_35b_a3b_pretrain_8gpu_gb200_bf16_config')!.hf, 'Qwen/Qwen3.5-35B-A3B-Base');
    assert.equal(findBridgeRecipe('nemotron_3_5_lightning_sft_config')!.hf, 'nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16');
    for (const [recipe, id] of [['glm45_355b_pretrain_config', 'glm-4.5'], ['glm45_air_106b_sft_config', 'glm-4.5-air'],
      ['moonlight_16b_pretrain_8gpu_h100_bf16_config', 'moonlight-16b-a3b'], ['qwen35_text_35b_a3b_pretrain_8gpu_gb200_bf16_config', 'qwen3.5-35b-a3b']]) {
      const f = parseConfig('/ws/run.sh', launch(recipe)).facts;
      assert.equal(findPreset(String(f['model.preset']?.value))?.id, id, recipe);
    }
  });

  test('a recipe that builds multi-token prediction sets model.mtpLayers, with an info at the recipe, unless the launch turns it off', () => {
    const text = launch('glm45_355b_pretrain_config');
    const r = parseConfig('/ws/run.sh', text);
    assert.equal(r.facts['model.mtpLayers']?.value, 1);
    assert.match(r.facts['model.mtpLayers']?.source.detail ?? '', /glm45\.py:27/);
    const d = r.diagnostics.find((x) => x.code === 'megatron-mtp');
    assert.equal(d?.severity, 'info');
    assert.match(d?.message ?? '', /^The recipe glm45_355b_pretrain_128gpu_h100_bf16_config sets mtp_num_layers 1 \(megatron\/bridge\/recipes\/glm\/h100\/glm45\.py:27, .*\): multi-token prediction: its module sits on the last pipeline stage/);
    assert.equal(text.split('\n')[d!.range!.start.line].slice(d!.range!.start.character).startsWith('glm45_355b_pretrain_config'), true);
    const off = parseConfig('/ws/run.sh', launch('glm45_355b_pretrain_config', 'model.mtp_num_layers=0'));
    assert.equal(off.diagnostics.filter((x) => x.code === 'megatron-mtp').length, 0);
    assert.equal(off.facts['model.mtpLayers']?.value, 0);
    assert.equal(findBridgeRecipe('llama31_8b_pretrain_config')!.values['model.mtp_num_layers'], undefined);
  });

  test("a recipe that leaves mtp_num_layers gets AutoBridge's from the model's config.json (GLM-4.5's SFT recipe: one layer)", () => {
    // Megatron-Bridge 067f987df: glm45_355b_sft_config builds its provider with AutoBridge.from_hf_pretrained("zai-org/GLM-4.5")
    // and sets no mtp_num_layers; glm45_bridge.py maps num_nextn_predict_layers (1 in GLM-4.5's config.json) to it.
    const text = launch('glm45_355b_sft_config');
    const r = parseConfig('/ws/run.sh', text);
    assert.equal(findBridgeRecipe('glm45_355b_sft_config')!.values['model.mtp_num_layers'], undefined);
    assert.equal(r.facts['model.mtpLayers']?.value, 1);
    assert.equal(r.facts['model.mtpLayers']?.source.kind, 'derived');
    assert.match(r.facts['model.mtpLayers']?.source.detail ?? '', /AutoBridge builds zai-org\/GLM-4\.5 with its config\.json's 1 multi-token-prediction layer/);
    assert.equal(r.diagnostics.find((x) => x.code === 'megatron-mtp')?.severity, 'info');
    // Turned off on the launch line, or a model without MTP in its config (Llama 3.1 8B): none.
    assert.equal(parseConfig('/ws/run.sh', launch('glm45_355b_sft_config', 'model.mtp_num_layers=0')).facts['model.mtpLayers']?.value, 0);
    assert.equal(parseConfig('/ws/run.sh', launch('llama31_8b_pretrain_config')).facts['model.mtpLayers'], undefined);
  });
});
