/**
 * A DeepSeek config.json opened on its own (the hf-config format) reads multi-head latent attention as the bundled
 * presets do. Expected values: DeepSeek-V3's config.json widths (q_lora_rank 1536, kv_lora_rank 512, qk_nope 128,
 * qk_rope 64, v 128) and its report's 671B total (arXiv 2412.19437); DeepSeek-V2-Lite's q_lora_rank null and 15.7B
 * (arXiv 2405.04434).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { initFormats, parseConfig } from '../../../formats/index';
import { countParams } from '../../../shared/model/params';
import { modelFromFacts } from '../../../shared/plan/resolveModel';

const read = (name: string) => readFileSync(resolve(__dirname, '../../../data/models', `${name}.json`), 'utf8');

describe('config.json with multi-head latent attention', () => {
  before(async () => { await initFormats(); });

  test('DeepSeek-V3: its widths, heads of 192, 671B', () => {
    const r = parseConfig('/ws/config.json', read('deepseek-v3'));
    const m = modelFromFacts(r.facts, {});
    assert.deepEqual(m?.mla, { qLoraRank: 1536, kvLoraRank: 512, qkNopeHeadDim: 128, qkRopeHeadDim: 64, vHeadDim: 128 });
    assert.equal(m?.headDim, 192);
    assert.ok(Math.abs(countParams(m!).parameters / 671e9 - 1) < 0.001, `${countParams(m!).parameters}`);
  });

  test('DeepSeek-V2-Lite: q_lora_rank null is direct queries, 15.7B', () => {
    const m = modelFromFacts(parseConfig('/ws/config.json', read('deepseek-v2-lite')).facts, {});
    assert.equal(m?.mla?.qLoraRank, 0);
    assert.ok(Math.abs(countParams(m!).parameters / 15.7e9 - 1) < 0.005, `${countParams(m!).parameters}`);
  });

  // Moonshot's DeepSeek-V3-style towers as torchtitan b5bcd76c6 builds them (torchtitan/models/kimi_k2_7/__init__.py).
  // Expected totals summed by hand from those widths (embedding and untied head V·h each; per layer the MLA projections,
  // two norms; the first layer a dense SwiGLU, the others routed and shared SwiGLU experts and a router of E·h; a final norm):
  // Moonlight-16B-A3B: 2·163840·2048 + 27·(2048·3072 + 2048·576 + 512 + 512·4096 + 2048·2048 + 2·2048) + 3·2048·11264
  //   + 26·(66·3·2048·1408 + 64·2048) + 2048 = 15,960,108,544 ("16B total", the model card);
  // Kimi K2 (K2.5's text tower): 2·163840·7168 + 61·(7168·1536 + 1536 + 1536·12288 + 7168·576 + 512 + 512·16384
  //   + 8192·7168 + 2·7168) + 3·7168·18432 + 60·(385·3·7168·2048 + 384·7168) + 7168 = 1,026,408,209,408 (the K2 report's
  //   "1.04 trillion" rounds its checkpoint's count).
  test('Moonlight-16B-A3B and Kimi K2 as torchtitan builds them: MLA widths and totals summed by hand', () => {
    const moon = modelFromFacts(parseConfig('/ws/config.json', read('moonlight-16b-a3b')).facts, {});
    assert.deepEqual(moon?.mla, { qLoraRank: 0, kvLoraRank: 512, qkNopeHeadDim: 128, qkRopeHeadDim: 64, vHeadDim: 128 });
    assert.equal(countParams(moon!).parameters, 15_960_108_544);
    const k2 = modelFromFacts(parseConfig('/ws/config.json', read('kimi-k2')).facts, {});
    assert.equal(k2?.moe?.experts, 384);
    assert.equal(countParams(k2!).parameters, 1_026_408_209_408);
  });

  test('a bad width is a warning at its value and no MLA; kv_lora_rank null is standard attention', () => {
    const bad = parseConfig('/ws/config.json', '{"model_type": "deepseek_v3", "hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "kv_lora_rank": "big"}');
    assert.ok(bad.diagnostics.some((d) => d.code === 'invalid-value' && d.paths.includes('model.mla.qLoraRank') === false && d.message.startsWith('kv_lora_rank')));
    assert.equal(modelFromFacts(bad.facts, {})?.mla, undefined);
    const none = parseConfig('/ws/config.json', '{"model_type": "deepseek_v3", "hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "kv_lora_rank": null}');
    assert.equal(modelFromFacts(none.facts, {})?.mla, undefined);
  });
});
