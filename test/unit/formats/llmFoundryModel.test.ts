/**
 * The model block of llm-foundry (MPT) and OLMo trainer YAMLs, and the training settings their trainers derive from
 * it. Expected parameter counts are published (llm-foundry's benchmarking README lists NumParams for every row of its
 * MPT tables) or counted from the architecture by hand (OLMo, olmo/config.py and olmo/model.py); the dtypes and
 * implementations come from the trainers' source (Composer get_mixed_precision, MPTConfig defaults, flash-attn's
 * cross-entropy). A row that ran on its GPUs must be estimated to fit them.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { initFormats, parseConfig } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { countParams } from '../../../shared/model/params';
import { estimateMemory } from '../../../shared/memory/estimate';
import { foundryRows, foundryYaml } from '../../../bench/measured/checks';
import { memoryHost, rangeOf } from './helpers';

const DIALECTS = resolve(__dirname, '../../fixtures/dialects');
const GPU: Record<string, string> = { H100: 'h100-sxm', 'A100-80GB': 'a100-80gb', 'A100-40GB': 'a100-40gb' };

/** The resolved plan of a YAML text on `gpus` GPUs of one kind (8 per node). */
function planOf(text: string, gpu: string, gpus: number, path = '/w/yamls/run.yaml') {
  const nodes = Math.max(1, Math.ceil(gpus / 8));
  const g = loadConfigGraph(path, memoryHost({ [path]: text }, '/w'), { settings: { gpu, worldSize: gpus, gpusPerNode: Math.min(8, gpus), nodes } });
  assert.ok(g.resolved.plan, `no plan: ${g.resolved.problems.map((p) => p.message).join('; ')}`);
  return g.resolved.plan;
}

describe('llm-foundry MPT model block', () => {
  before(async () => { await initFormats(); });

  test('every row of the published MPT tables reads to its published parameter count', () => {
    // llm-foundry scripts/train/benchmarking/README.md, column NumParams (learned positions make it grow with max_seq_len).
    const rows = foundryRows();
    assert.equal(rows.length, 216);
    const seen = new Set<string>();
    for (const r of rows) {
      const key = `${r.model}/${r.seqLen}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const plan = planOf(foundryYaml(r), GPU[r.gpu]!, r.gpus);
      assert.equal(countParams(plan.model).parameters, r.numParams, `MPT-${r.model} at seq ${r.seqLen}`);
    }
    assert.ok(seen.size >= 40);
  });

  test('the pretrain yaml of MPT-30B: 29,975,214,080 parameters at 2048 tokens, as the tables list', () => {
    const path = resolve(DIALECTS, 'llm-foundry/scripts/train/yamls/pretrain/mpt-30b.yaml');
    const plan = planOf(readFileSync(path, 'utf8'), 'h100-sxm', 8, path);
    assert.equal(countParams(plan.model).parameters, 29975214080);
    assert.equal(plan.model.gatedMlp, false);
    assert.equal(plan.model.ffnSize, 4 * 7168);
    assert.equal(plan.model.positions, 'learned');
    assert.equal(plan.model.tiedEmbeddings, true);
  });

  test('a benchmark row\'s settings: Triton attention (with its warning), DecoupledAdamW\'s loop, PURE and DEFAULT reduce dtypes, the fused loss, LPLayerNorm', () => {
    const row = foundryRows().find((r) => r.gpu === 'A100-40GB' && r.mpMode === 'PURE')!;
    const text = foundryYaml(row);
    const parsed = parseConfig('/w/yamls/run.yaml', text, 'llm-foundry');
    const f = parsed.facts;
    assert.equal(f['training.flashAttention']?.value, true);
    const warn = parsed.diagnostics.find((d) => d.code === 'attention-kernel-timing');
    assert.ok(warn, 'triton attention is flagged');
    assert.deepEqual(warn.range, rangeOf(text, 'triton'));
    assert.equal(f['training.optimizer']?.value, 'adamw');
    assert.equal(f['training.optimizerImpl']?.value, 'for-loop');
    // Composer get_mixed_precision: PURE reduces in the autocast dtype, DEFAULT in fp32.
    assert.equal(f['training.gradDtype']?.value, 'bf16');
    const def = parseConfig('/w/yamls/run.yaml', text.replace('mixed_precision: PURE', 'mixed_precision: DEFAULT'), 'llm-foundry').facts;
    assert.equal(def['training.gradDtype']?.value, 'fp32');
    const none = parseConfig('/w/yamls/run.yaml', text.replace(/ {2}mixed_precision: PURE\n/, ''), 'llm-foundry').facts;
    assert.equal(none['training.gradDtype']?.value, 'fp32');
    assert.equal(none['training.gradDtype']?.source.kind, 'default');
    assert.equal(f['training.lossFusion']?.value, 'native');
    assert.equal(f['model.lowPrecisionNorm']?.value, true);
    assert.equal(f['model.norm']?.value, 'layernorm');
    const torch = parseConfig('/w/yamls/run.yaml', text.replace('attn_impl: triton', 'attn_impl: torch').replace('  norm_type: low_precision_layernorm\n', '  norm_type: layernorm\n  loss_fn: torch_crossentropy\n'), 'llm-foundry');
    assert.equal(torch.facts['training.flashAttention']?.value, false);
    assert.equal(torch.diagnostics.some((d) => d.code === 'attention-kernel-timing'), false);
    assert.equal(torch.facts['training.lossFusion']?.value, 'none');
    assert.equal(torch.facts['model.lowPrecisionNorm']?.value, false);
  });

  test('grouped K/V heads, the gated mptglu MLP and MegaBlocks experts', () => {
    const text = 'global_train_batch_size: 64\ndevice_train_microbatch_size: 2\nmax_seq_len: 4096\nmodel:\n  name: mpt_causal_lm\n'
      + '  d_model: 4096\n  n_heads: 32\n  n_layers: 32\n  expansion_ratio: 3.5\n  vocab_size: 100352\n'
      + '  attn_config:\n    attn_type: grouped_query_attention\n    kv_n_heads: 8\n  ffn_config:\n    ffn_type: mptglu\n';
    const f = parseConfig('/w/yamls/glu.yaml', text, 'llm-foundry').facts;
    assert.equal(f['model.kvHeads']?.value, 8);
    assert.equal(f['model.gatedMlp']?.value, true);
    assert.equal(f['model.ffnSize']?.value, 14336);
    const moe = text.replace('    ffn_type: mptglu\n', '    ffn_type: mb_dmoe\n    moe_num_experts: 16\n    moe_top_k: 4\n');
    const m = parseConfig('/w/yamls/moe.yaml', moe, 'llm-foundry').facts;
    assert.equal(m['model.moe.experts']?.value, 16);
    assert.equal(m['model.moe.topK']?.value, 4);
    assert.equal(m['model.moe.expertFfnSize']?.value, 14336);
  });

  test('bad values get a warning at the value and fall back to the trainer\'s default', () => {
    const text = 'global_train_batch_size: 64\ndevice_train_microbatch_size: 2\nmax_seq_len: 2048\nprecision: amp_bf16\nmodel:\n  name: mpt_causal_lm\n'
      + '  d_model: 2048\n  n_heads: 16\n  n_layers: 24\n  norm_type: groupnorm\n  loss_fn: focal\n  attn_config:\n    attn_impl: cuda\n    attn_type: grouped_query_attention\n    kv_n_heads: many\n'
      + 'fsdp_config:\n  mixed_precision: HALF\n';
    const parsed = parseConfig('/w/yamls/bad.yaml', text, 'llm-foundry');
    const at = (needle: string) => parsed.diagnostics.find((d) => d.code === 'invalid-value' && JSON.stringify(d.range) === JSON.stringify(rangeOf(text, needle)));
    for (const needle of ['groupnorm', 'focal', 'cuda', 'many', 'HALF']) assert.ok(at(needle), `a warning at ${needle}`);
    assert.equal(parsed.facts['training.gradDtype']?.value, 'fp32');
    assert.equal(parsed.facts['model.kvHeads']?.value, 16);
    // Absurd sizes are refused at the value, not estimated: a 64× MLP bound, at most 4,096 experts, top-k within them.
    const absurd = 'global_train_batch_size: 64\ndevice_train_microbatch_size: 2\nmax_seq_len: 2048\nmodel:\n  name: mpt_causal_lm\n'
      + '  d_model: 2048\n  n_heads: 16\n  n_layers: 24\n  expansion_ratio: 1.0e+30\n  ffn_config:\n    ffn_type: mb_moe\n    moe_num_experts: 8\n    moe_top_k: -2\n'
      + 'fsdp_config:\n  mixed_precision:\n    buffer_dtype: float32\n';
    const a = parseConfig('/w/yamls/absurd.yaml', absurd, 'llm-foundry');
    const warned = (needle: string) => a.diagnostics.some((d) => d.code === 'invalid-value' && d.range !== undefined && d.range.start.line === rangeOf(absurd, needle).start.line);
    for (const needle of ['1.0e+30', '-2', 'mixed_precision']) assert.ok(warned(needle), `a warning at ${needle}`);
    assert.equal(a.facts['model.ffnSize'], undefined);
    assert.equal(a.facts['model.moe.topK']?.value, 1);
    assert.equal(a.facts['model.moe.topK']?.source.kind, 'default');
  });
});

describe('OLMo model block', () => {
  before(async () => { await initFormats(); });
  const olmo = (rel: string) => {
    const path = resolve(DIALECTS, 'OLMo/configs', rel);
    return planOf(readFileSync(path, 'utf8'), 'h100-sxm', 64, path);
  };

  test('OLMo-1B: SwiGLU of mlp_ratio 8 (two 8192-wide branches), RoPE, tied, no biases: 1,176,764,416 weights', () => {
    // 16 layers × (4·2048² attention + 2048·16384 ff_proj + 8192·2048 ff_out) + 50304·2048 tied embedding = 1,176,764,416
    // (olmo/model.py: ff_proj to hidden_size, ff_out from 0.5·hidden_size under SwiGLU). Its LayerNorms have no affine
    // parameters (layer_norm_with_affine false), which the count includes as 33 × 2 × 2048.
    const plan = olmo('official-0724/OLMo-1B.yaml');
    assert.equal(plan.model.ffnSize, 8192);
    assert.equal(plan.model.gatedMlp, true);
    assert.equal(plan.model.positions, 'rotary');
    assert.equal(plan.model.tiedEmbeddings, true);
    assert.equal(plan.model.attnBias, 'none');
    assert.equal(countParams(plan.model).parameters - 1176764416, 33 * 2 * 2048);
    assert.equal(plan.training.flashAttention, false);
  });

  test('OLMo 2 1B: untied, RMSNorm with QK-norm, fused loss: 1,484,916,736 parameters within the QK-norm width', () => {
    // 16 × (4·2048² + 3·2048·8192 + 4·2048 norms) + 2·100352·2048 + 2048 = 1,484,916,736; OLMo 2 normalises the whole
    // q and k projections (2·2048 per layer) where the count takes per-head norms (2·128): 16 · 2 · (2048 − 128) fewer.
    const plan = olmo('official-0425/OLMo2-1B-stage1.yaml');
    assert.equal(plan.model.norm, 'rmsnorm');
    assert.equal(plan.model.qkNorm, true);
    assert.equal(plan.model.tiedEmbeddings, false);
    assert.equal(1484916736 - countParams(plan.model).parameters, 16 * 2 * (2048 - 128));
    assert.equal(plan.training.lossFusion, 'native');
  });
});

describe('published llm-foundry rows fit where they ran', () => {
  before(async () => { await initFormats(); });

  test('the largest micro-batches of the tables (no recomputation, 40 and 80 GB GPUs) are estimated to fit', () => {
    // MosaicML picked each row's micro-batch for throughput on that GPU; every row ran, so each must fit.
    const rows = foundryRows().filter((r) => !r.activationCheckpointing && r.seqLen === 2048);
    assert.ok(rows.length >= 20);
    for (const r of rows) {
      const m = estimateMemory(planOf(foundryYaml(r), GPU[r.gpu]!, r.gpus));
      assert.ok(m.fits, `MPT-${r.model} micro-batch ${r.microBatch} on ${r.gpus} × ${r.gpu}`);
    }
  });
});
