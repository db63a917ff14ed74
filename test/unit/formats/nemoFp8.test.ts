/**
 * NeMo 1 and NeMo-Framework-Launcher YAML: FP8 and the settings NVIDIA's H100 recipes pair with it.
 * - `model.fp8` with `fp8_e4m3` or `fp8_hybrid` is FP8 through Transformer Engine; with neither, NeMo stops
 *   (megatron_base_model.py build_transformer_config: "fp8 enabled but fp8_format (fp8_e4m3 | fp8_hybrid) is not set").
 * - `model.fp8_params` keeps FP8 weights, all-gathered in FP8 (counts only with FP8 on).
 * - `model.ub_tp_comm_overlap` is passed to Megatron-core as tp_comm_overlap (same file).
 * - `model.optim.grad_sync_dtype: bf16` reduces gradients in bf16 (NeMo-Framework-Launcher's H100 FP8 examples set it,
 *   e.g. examples/training/gpt/h100/20b_fp8_1node.sh).
 * - `activations_checkpoint_num_layers` counts recomputed layers only with `activations_checkpoint_method: block`
 *   (megatron_gpt_config.yaml's comments; Megatron-core transformer_block.py `_checkpointed_forward`).
 * Expected values: those definitions, and FP8 GEMMs running faster than 16-bit ones on an H100 (its datasheet FP8 peak
 * is twice the BF16 one), so the same run's step is shorter.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { estimateStepTime } from '../../../shared/time/estimate';

const yaml = (model: string) => `trainer:
  devices: 8
  num_nodes: 1
  precision: bf16-mixed
model:
  micro_batch_size: 1
  global_batch_size: 64
  encoder_seq_length: 4096
  num_layers: 8
  hidden_size: 4096
  ffn_hidden_size: 11008
  num_attention_heads: 32
  tensor_model_parallel_size: 2
  sequence_parallel: True
${model}`;
const parse = (model: string) => parseConfig('/ws/conf/training/llama/llama2_7b.yaml', yaml(model));
const planOf = (model: string) => resolvePlan(parse(model), []).plan!;

describe('NeMo YAML: FP8 and its companions', () => {
  before(async () => { await initFormats(); });

  test('model.fp8 with a format is FP8, placed at model.fp8, with the delayed recipe', () => {
    for (const fmt of ['  fp8_hybrid: True', '  fp8_e4m3: true\n  fp8_hybrid: false']) {
      const r = parse(`  fp8: True\n${fmt}\n`);
      assert.equal(r.format, 'nemo');
      const f = r.facts['training.precision'];
      assert.equal(f?.value, 'fp8-mixed', fmt);
      assert.equal(f?.key, 'model.fp8');
      assert.equal(f?.source.range?.start.line, 14);
      const p = planOf(`  fp8: True\n${fmt}\n`);
      assert.equal(p.training.precision, 'fp8-mixed');
      assert.equal(p.training.fp8?.recipe, 'delayed');
      assert.equal(p.training.fp8?.paramGather, false);
    }
  });

  test('fp8 off, or only the format keys (the default megatron_gpt_config.yaml writes fp8_hybrid: True): 16-bit', () => {
    for (const m of ['  fp8: False\n  fp8_hybrid: True\n  fp8_params: True\n', '  fp8_hybrid: True\n', '']) {
      const r = parse(m);
      assert.equal(r.facts['training.precision']?.value, 'bf16-mixed', m);
      assert.equal(r.facts['training.fp8.paramGather'], undefined, m);
      assert.equal(planOf(m).training.precision, 'bf16-mixed', m);
    }
  });

  test('fp8 without a format is a warning at model.fp8 (NeMo stops there) and the estimate stays 16-bit', () => {
    const r = parse('  fp8: true\n  fp8_e4m3: false\n  fp8_hybrid: false\n');
    const d = r.diagnostics.find((x) => x.code === 'invalid-value' && x.message.includes('model.fp8'));
    assert.ok(d && d.severity === 'warning', JSON.stringify(r.diagnostics));
    assert.equal(d.range.start.line, 14);
    assert.equal(r.facts['training.precision']?.value, 'bf16-mixed');
  });

  test('a switch that is not true or false is a warning at its value, and reads as off', () => {
    const r = parse('  fp8: maybe\n  fp8_hybrid: True\n');
    const d = r.diagnostics.find((x) => x.code === 'invalid-value' && x.message.startsWith('model.fp8 should'));
    assert.ok(d, JSON.stringify(r.diagnostics));
    assert.equal(d.range.start.line, 14);
    assert.equal(r.facts['training.precision']?.value, 'bf16-mixed');
  });

  test('fp8_params is the FP8 parameter all-gather', () => {
    assert.equal(planOf('  fp8: True\n  fp8_hybrid: True\n  fp8_params: True\n').training.fp8?.paramGather, true);
  });

  test('ub_tp_comm_overlap, grad_sync_dtype and overlap_grad_sync are read', () => {
    const on = planOf('  ub_tp_comm_overlap: True\n  optim:\n    name: distributed_fused_adam\n    grad_sync_dtype: bf16\n');
    assert.equal(on.parallel.tpCommOverlap, true);
    assert.equal(on.training.gradDtype, 'bf16');
    const off = planOf('  ub_tp_comm_overlap: False\n  optim:\n    name: distributed_fused_adam\n    grad_sync_dtype: fp32\n');
    assert.equal(off.parallel.tpCommOverlap, false);
    assert.equal(off.training.gradDtype, 'fp32');
    // optim.overlap_grad_sync is the distributed optimizer's bucketed reduce-scatter overlap.
    assert.equal(planOf('  optim:\n    name: mcore_distributed_optim\n    overlap_grad_sync: false\n').parallel.sharding.overlapComm, false);
    assert.equal(planOf('  optim:\n    name: mcore_distributed_optim\n    overlap_grad_sync: true\n').parallel.sharding.overlapComm, true);
  });

  test('activations_checkpoint_num_layers counts only with the block method', () => {
    const full = '  activations_checkpoint_granularity: full\n';
    assert.equal(planOf(`${full}  activations_checkpoint_method: block\n  activations_checkpoint_num_layers: 3\n`).training.recomputeLayers, 3);
    assert.equal(planOf(`${full}  activations_checkpoint_method: uniform\n  activations_checkpoint_num_layers: 1\n`).training.recomputeLayers, undefined);
    assert.equal(planOf('  activations_checkpoint_granularity: selective\n  activations_checkpoint_method: block\n  activations_checkpoint_num_layers: 3\n').training.recomputeLayers, undefined);
  });

  test('the same run is faster in FP8 than in bf16 (FP8 GEMMs), and not twice as fast (attention and the rest stay 16-bit)', () => {
    const bf16 = estimateStepTime(planOf('')).stepSeconds;
    const fp8 = estimateStepTime(planOf('  fp8: True\n  fp8_hybrid: True\n')).stepSeconds;
    assert.ok(fp8 < bf16 * 0.95, `${fp8} vs ${bf16}`);
    assert.ok(fp8 > bf16 / 2, `${fp8} vs ${bf16}`);
  });
});
