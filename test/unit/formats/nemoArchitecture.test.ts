/**
 * The architecture of an inline NeMo model (NeMo 1 / NeMo-Framework-Launcher YAML). NeMo builds it in
 * megatron_base_model.py build_transformer_config: `gated_linear_unit = activation.endswith('glu')`,
 * `add_bias_linear = cfg.get('bias', True)`, `add_qkv_bias = cfg.get('qkv_bias', False)`, and the model classes take
 * `share_embeddings_and_output_weights` (default True), `position_embedding_type` (default learned_absolute) and
 * `normalization` (default layernorm). Unset keys are therefore GPT-3's layout, not Llama's.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { countParams } from '../../../shared/model/params';

const head = `trainer:\n  devices: 8\n  num_nodes: 1\nmodel:\n  micro_batch_size: 1\n  global_batch_size: 64\n  encoder_seq_length: 2048\n  max_position_embeddings: 2048\n  num_layers: 4\n  hidden_size: 1024\n  ffn_hidden_size: 4096\n  num_attention_heads: 16\n  tokenizer:\n    library: megatron\n    type: GPT2BPETokenizer\n`;
const modelOf = (extra: string) => resolvePlan(parseConfig('/ws/conf/training/gpt3/tiny.yaml', head + extra), []).plan!.model;

describe('NeMo YAML: the inline model\'s architecture', () => {
  before(async () => { await initFormats(); });

  test('unset keys are NeMo\'s defaults: gelu MLP, biases, LayerNorm, learned positions, tied output', () => {
    const m = modelOf('');
    assert.equal(m.gatedMlp, false);
    assert.equal(m.mlpBias, true);
    assert.equal(m.attnBias, 'all');
    assert.equal(m.norm, 'layernorm');
    assert.equal(m.positions, 'learned');
    assert.equal(m.tiedEmbeddings, true);
    assert.equal(m.vocabPadMultiple, 128);
  });

  test('mtp_num_layers builds multi-token prediction modules (Megatron-core mtp_num_layers); a negative count is said at its value', () => {
    assert.equal(modelOf('  mtp_num_layers: 1\n').mtpLayers, 1);
    assert.equal(modelOf('  mtp_num_layers: 0\n').mtpLayers, undefined);
    assert.equal(modelOf('').mtpLayers, undefined);
    const r = parseConfig('/ws/conf/training/gpt3/tiny.yaml', head + '  mtp_num_layers: -1\n');
    assert.ok(r.diagnostics.some((d) => d.code === 'invalid-value' && d.message.startsWith('model.mtp_num_layers')), JSON.stringify(r.diagnostics));
  });

  test('a Llama-style block: fast-swiglu is gated, bias False, rmsnorm, rope, untied', () => {
    const m = modelOf('  activation: fast-swiglu\n  bias: False\n  normalization: rmsnorm\n  position_embedding_type: rope\n  share_embeddings_and_output_weights: False\n');
    assert.equal(m.gatedMlp, true);
    assert.equal(m.mlpBias, false);
    assert.equal(m.attnBias, 'none');
    assert.equal(m.norm, 'rmsnorm');
    assert.equal(m.positions, 'rotary');
    assert.equal(m.tiedEmbeddings, false);
  });

  test('squared-relu and gelu are plain MLPs; geglu and reglu are gated', () => {
    for (const [act, gated] of [['squared-relu', false], ['gelu', false], ['geglu', true], ['reglu', true], ['swiglu', true]] as const) {
      assert.equal(modelOf(`  activation: ${act}\n`).gatedMlp, gated, act);
    }
  });

  test('qkv_bias with bias False is a QKV-only bias (Qwen2)', () => {
    const m = modelOf('  bias: False\n  qkv_bias: True\n');
    assert.equal(m.attnBias, 'qkv');
    assert.equal(m.mlpBias, false);
  });

  test("the launcher's GPT-3 5B config counts as GPT-3's layout", () => {
    // NeMo-Framework-Launcher conf/training/gpt3/5b_32k.yaml: 24 layers, h 4096, FFN 4h, 32 heads, gelu, biases,
    // learned positions of 32,768 rows, tied, GPT-2 BPE (50,257, padded to 128 × TP 8 = 1,024: 51,200).
    const file = join(__dirname, '../../fixtures/dialects/NeMo-Framework-Launcher/launcher_scripts/conf/training/gpt3/5b_32k.yaml');
    const plan = resolvePlan(parseConfig(file, readFileSync(file, 'utf8')), []).plan!;
    assert.equal(plan.model.gatedMlp, false);
    const h = 4096, f = 4 * h, L = 24, V = 51200, pos = 32768;
    // Per layer: QKV and output projections with biases, two MLP matrices with biases, two LayerNorms (weight + bias).
    const layer = 4 * h * h + 4 * h + 2 * h * f + f + h + 4 * h;
    const expected = L * layer + V * h + pos * h + 2 * h;
    const total = countParams(plan.model, undefined, 8).parameters;
    assert.ok(Math.abs(total / expected - 1) < 0.001, `${total} vs ${expected}`);
  });
});
