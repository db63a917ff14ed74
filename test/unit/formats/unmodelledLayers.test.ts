/**
 * Layers ShardLens has no full term for are said, never read silently as attention: Qwen3-Next's Gated DeltaNet layers
 * (transformers configuration_qwen3_next.py: every layer but each full_attention_interval-th, default 4; the corpus's
 * Qwen3-Next-80B-A3B config.json, 48 layers → 36 linear), `layer_types` other than full and sliding attention, and the
 * Mamba layers of hybrids (Nemotron-H `hybrid_override_pattern`), and nanotron's Mamba model (examples/mamba/config_mamba.yaml:
 * `is_mamba_config: true`, 48 blocks of width 1536), which ShardLens does not estimate at all.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { modelFromHfConfig, UNMODELLED_LAYERS_CODE } from '../../../shared/model/hfConfig';
import { listPresets } from '../../../shared/model/presets';

const QWEN3_NEXT = { model_type: 'qwen3_next', hidden_size: 2048, num_hidden_layers: 48, num_attention_heads: 16, num_key_value_heads: 2, head_dim: 256, full_attention_interval: 4, num_experts: 512, num_experts_per_tok: 10, moe_intermediate_size: 512, shared_expert_intermediate_size: 512, vocab_size: 151936 };

describe('layers read as attention are said', () => {
  before(async () => { await initFormats(); });

  test('Qwen3-Next: 36 of 48 Gated DeltaNet layers, a warning at full_attention_interval', () => {
    const r = modelFromHfConfig(QWEN3_NEXT);
    const p = r.problems.find((x) => x.code === UNMODELLED_LAYERS_CODE);
    assert.equal(p?.severity, 'warning');
    assert.match(p!.message, /full_attention_interval: the Gated DeltaNet linear-attention layers \(36 of 48\)/);
    const text = JSON.stringify(QWEN3_NEXT, null, 1);
    const d = parseConfig('/ws/config.json', text).diagnostics.find((x) => x.code === UNMODELLED_LAYERS_CODE);
    assert.ok(d);
    assert.equal(d.range.start.line, text.split('\n').findIndex((l) => l.includes('full_attention_interval')));
  });

  test('layer_types other than full and sliding attention are counted by type', () => {
    // Qwen3-Next's linear_attention layers are Gated DeltaNet (their parameters counted); LiquidAI LFM2's conv layers
    // (its config.json layer_types of "conv" and "full_attention") have no term at all.
    const r = modelFromHfConfig({ model_type: 'qwen3_next', hidden_size: 1024, num_hidden_layers: 4, num_attention_heads: 8, layer_types: ['linear_attention', 'linear_attention', 'linear_attention', 'full_attention'] });
    assert.match(r.problems.find((x) => x.code === UNMODELLED_LAYERS_CODE)!.message, /layer_types: the Gated DeltaNet linear-attention layers \(3 of 4\)/);
    const lfm = modelFromHfConfig({ model_type: 'lfm2', hidden_size: 1024, num_hidden_layers: 4, num_attention_heads: 8, layer_types: ['conv', 'conv', 'full_attention', 'conv'] });
    assert.match(lfm.problems.find((x) => x.code === UNMODELLED_LAYERS_CODE)!.message, /3 conv layers of 4 are read as standard attention layers/);
  });

  test('a Mamba hybrid says so; a plain Llama, Gemma 2 or gpt-oss config does not, nor does any bundled preset but the Gated DeltaNet ones', () => {
    const h = modelFromHfConfig({ model_type: 'nemotron_h', hidden_size: 1024, num_hidden_layers: 4, num_attention_heads: 8, hybrid_override_pattern: 'M-M*' });
    assert.ok(h.problems.some((x) => x.code === UNMODELLED_LAYERS_CODE));
    for (const cfg of [{ model_type: 'llama' }, { model_type: 'gemma2', sliding_window: 4096 }, { model_type: 'gpt_oss', layer_types: ['sliding_attention', 'full_attention'] }]) {
      assert.ok(!modelFromHfConfig({ hidden_size: 1024, num_hidden_layers: 2, num_attention_heads: 8, ...cfg }).problems.some((x) => x.code === UNMODELLED_LAYERS_CODE), JSON.stringify(cfg));
    }
    assert.deepEqual(listPresets().filter((p) => p.notes.some((n) => n.code === UNMODELLED_LAYERS_CODE)).map((p) => p.id).sort(), ['qwen3-next-80b-a3b', 'qwen3.5-27b', 'qwen3.5-35b-a3b', 'qwen3.5-397b-a17b']);
  });
  test('nanotron\'s Mamba model: a warning at is_mamba_config that the figures are not this model\'s', () => {
    const text = 'general:\n  project: mamba\nmodel:\n  model_config:\n    d_model: 1536\n    is_mamba_config: true\n    num_hidden_layers: 48\n    ssm_cfg:\n      d_state: 16\n      expand: 2\n    vocab_size: 50277\nparallelism:\n  dp: 2\n  pp: 2\n  tp: 2\ntokens:\n  micro_batch_size: 2\n  sequence_length: 2048\n';
    const d = parseConfig('/ws/config_mamba.yaml', text).diagnostics.find((x) => x.code === 'nanotron-mamba-unmodelled');
    assert.equal(d?.severity, 'warning');
    assert.equal(d!.range.start.line, 5);
    assert.match(d!.message, /48 Mamba blocks of width 1536/);
    const llama = text.replace('    is_mamba_config: true\n', '').replace(/    ssm_cfg:\n      d_state: 16\n      expand: 2\n/, '');
    assert.equal(parseConfig('/ws/config_llama.yaml', llama).diagnostics.find((x) => x.code === 'nanotron-mamba-unmodelled'), undefined);
  });
});
