/**
 * Qwen3-Next and Qwen3.5: Gated DeltaNet linear-attention layers beside gated softmax attention, read by both readers
 * (shared/model/hfConfig.ts for presets and referenced models, formats/hf-config/reader.ts for an opened config.json).
 * Expected counts:
 * - whole models: transformers 5.24 built on the meta device, Σ numel over `parameters()` (Qwen3NextForCausalLM from
 *   Qwen/Qwen3-Next-80B-A3B-Instruct's config.json: 79,674,391,296; Qwen3_5MoeForCausalLM from Qwen3_5MoeTextConfig's
 *   defaults, checkpoint Qwen/Qwen3.5-35B-A3B: 34,660,610,688);
 * - one layer's token mixer from its shapes in transformers' modeling_qwen3_next.py: Qwen3NextGatedDeltaNet holds
 *   in_proj_qkvz (h × (2·16·128 + 2·32·128)), in_proj_ba (h × 2·32), conv1d ((2·16·128 + 32·128) channels × 4 taps),
 *   out_proj (32·128 × h), A_log and dt_bias (32 each) and a 128-wide RMSNorm; Qwen3NextAttention holds q_proj
 *   (h × 2·16·256, queries and the output gate), k_proj and v_proj (h × 2·256 each), o_proj (16·256 × h) and q/k norms
 *   (256 each); h = 2048.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { initFormats, parseConfig } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { modelFromHfConfig } from '../../../shared/model/hfConfig';
import { countParams, layerParams } from '../../../shared/model/params';
import { gatedDeltaNetOther, gatedDeltaNetWeights } from '../../../shared/model/linearAttention';
import { findPreset } from '../../../shared/model/presets';
import { projectionWidths } from '../../../shared/time/projections';
import { tpCandidates } from '../../../shared/planner/space';
import { memoryHost } from './helpers';

const QWEN3_NEXT = JSON.parse(readFileSync('data/models/qwen3-next-80b-a3b.json', 'utf8')) as Record<string, unknown>;

describe('Gated DeltaNet layers (Qwen3-Next, Qwen3.5)', () => {
  before(async () => { await initFormats(); });

  test('one Gated DeltaNet token mixer and one gated attention block, from their shapes', () => {
    const m = modelFromHfConfig(QWEN3_NEXT).model!;
    const la = m.linearAttention!;
    assert.deepEqual(la, { layers: 36, keyHeads: 16, valueHeads: 32, keyHeadDim: 128, valueHeadDim: 128, convKernel: 4 });
    const h = 2048;
    assert.equal(gatedDeltaNetWeights(la, h) + gatedDeltaNetOther(la), 2048 * 12288 + 2048 * 64 + 8192 * 4 + 4096 * 2048 + 32 + 32 + 128);
    // The mean over 48 layers: 12 gated attention blocks and 36 token mixers (the layer norms are the same in both).
    const per = layerParams(m);
    const attention = 2048 * 8192 + 2 * 2048 * 512 + 4096 * 2048 + 2 * 256;
    assert.ok(Math.abs(48 * (per.attnWeights + per.attnOther) - (12 * attention + 36 * 33_718_464)) < 1e-3);
  });

  test('Qwen3-Next-80B-A3B: the whole model as transformers builds it, from a referenced config and an opened one', () => {
    assert.equal(countParams(modelFromHfConfig(QWEN3_NEXT).model!).parameters, 79_674_391_296);
    const text = JSON.stringify(QWEN3_NEXT, null, 2);
    const g = loadConfigGraph('/ws/config.json', memoryHost({ '/ws/config.json': text }), { settings: {} });
    const opened = g.resolved.plan!.model;
    assert.equal(countParams(opened).parameters, 79_674_391_296);
    assert.equal(opened.attentionOutputGate, true);
    assert.equal(opened.moe?.sharedExpertGate, true);
    // The warning says what is still approximate, at the key that makes the layers linear.
    const w = g.primary.diagnostics.find((d) => d.code === 'hf-config-unmodelled-layers');
    assert.match(w?.message ?? '', /Gated DeltaNet linear-attention layers \(36 of 48\) have their own parameter count and their own saved activations and step time under transformers \(with flash-linear-attention and causal-conv1d\) and Megatron-LM .*; the chunked kernel's time is FLA's published GB200 time/);
    assert.equal(w?.range.start.line, text.split('\n').findIndex((l) => l.includes('"full_attention_interval"')));
  });

  test('Qwen3.5-35B-A3B: the bundled preset and a multimodal config.json with layer_types in text_config', () => {
    const preset = findPreset('Qwen/Qwen3.5-35B-A3B');
    assert.equal(preset?.id, 'qwen3.5-35b-a3b');
    assert.equal(countParams(preset!.model).parameters, 34_660_610_688);
    assert.ok(preset!.notes.some((n) => /^Qwen3.5-35B-A3B's config.json full_attention_interval: .*\(30 of 40\)/.test(n.message)), JSON.stringify(preset!.notes));
    const text = { ...preset!.model };
    const types = Array.from({ length: 40 }, (_, i) => ((i + 1) % 4 === 0 ? 'full_attention' : 'linear_attention'));
    const cfg = {
      architectures: ['Qwen3_5MoeForConditionalGeneration'], model_type: 'qwen3_5_moe',
      text_config: {
        model_type: 'qwen3_5_moe_text', vocab_size: 248320, hidden_size: 2048, num_hidden_layers: 40, num_attention_heads: 16, num_key_value_heads: 2,
        head_dim: 256, moe_intermediate_size: 512, shared_expert_intermediate_size: 512, num_experts_per_tok: 8, num_experts: 256,
        tie_word_embeddings: false, layer_types: types,
      },
    };
    const g = loadConfigGraph('/ws/config.json', memoryHost({ '/ws/config.json': JSON.stringify(cfg, null, 2) }), { settings: {} });
    assert.equal(countParams(g.resolved.plan!.model).parameters, countParams(text).parameters);
  });

  test('the gated query projection is timed at its width: 2·16·256 query and gate columns beside K and V', () => {
    const m = modelFromHfConfig(QWEN3_NEXT).model!;
    const w = projectionWidths({ model: m, engine: 'fsdp2', training: { modelImpl: 'hf' } as never }, 16, 2, 256, 512);
    assert.deepEqual(w.qkv, [8192, 512, 512]);
  });
});

describe('Gated DeltaNet keys that are not positive whole numbers', () => {
  before(async () => { await initFormats(); });
  const bad = { ...QWEN3_NEXT, linear_num_value_heads: 'thirty-two', full_attention_interval: 0 };

  test('an opened config.json: a warning at each value, read as transformers\' default', () => {
    const text = JSON.stringify(bad, null, 2);
    const g = loadConfigGraph('/ws/config.json', memoryHost({ '/ws/config.json': text }), { settings: {} });
    const lines = text.split('\n');
    for (const [key, fallback] of [['linear_num_value_heads', 32], ['full_attention_interval', 4]] as const) {
      const d = g.primary.diagnostics.find((x) => x.code === 'invalid-value' && x.message.startsWith(key));
      assert.equal(d?.severity, 'warning', key);
      assert.match(d!.message, new RegExp(`read as transformers' default ${fallback}\\.$`));
      assert.equal(d!.range.start.line, lines.findIndex((l) => l.includes(`"${key}"`)));
    }
    // With the defaults the model is the published one.
    assert.equal(countParams(g.resolved.plan!.model).parameters, 79_674_391_296);
  });

  test('a referenced config.json: an error naming each key, and no model', () => {
    const r = modelFromHfConfig(bad);
    const errors = r.problems.filter((p) => p.code === 'hf-config-bad-value').map((p) => p.message);
    assert.equal(errors.length, 2);
    assert.match(errors.join('\n'), /full_attention_interval must be a positive integer \(transformers' default is 4\), got 0/);
    assert.match(errors.join('\n'), /linear_num_value_heads must be a positive integer \(transformers' default is 32\), got "thirty-two"/);
    assert.equal(r.model, undefined);
  });
});

describe('the planner keeps TP within the Gated DeltaNet heads', () => {
  test('TP candidates divide the linear key and value heads as well as the attention heads', () => {
    const m = modelFromHfConfig({ ...QWEN3_NEXT, num_key_value_heads: 16, linear_num_key_heads: 2, linear_num_value_heads: 4 }).model!;
    const pruned: string[] = [];
    const tps = tpCandidates(m, 8, 64, {}, (r) => { pruned.push(r); });
    // 16 attention heads and 16 KV heads allow 1, 2, 4, 8; the 2 key heads of the linear layers allow 1 and 2.
    assert.deepEqual(tps, [1, 2]);
    assert.ok(pruned.includes('tp-heads'));
  });
});

describe('LoRA targets of a Qwen3.5 fine-tune', () => {
  before(async () => { await initFormats(); });

  test('in_proj_qkv and out_proj count as q, k, v and o; in_proj_z is said at the value, not dropped in silence', () => {
    const text = 'model_name_or_path: Qwen/Qwen3.5-35B-A3B\nstage: sft\nfinetuning_type: lora\nlora_rank: 8\nlora_target: in_proj_qkv,in_proj_z,out_proj\ncutoff_len: 2048\n';
    const g = parseConfig('/ws/qwen35_lora.yaml', text);
    assert.equal(g.format, 'llamafactory');
    assert.equal(g.facts['lora.targets']?.value, 'q,k,v,o');
    const d = g.diagnostics.find((x) => x.code === 'lora-target-unsized');
    assert.equal(d?.severity, 'info');
    assert.match(d!.message, /^`in_proj_z`: LoRA target ShardLens does not size/);
    assert.equal(d!.range.start.line, 4);
  });
});
