/**
 * A training YAML that names a framework's own DeepSpeed file by its fixed path, when the workspace does not hold it
 * (server/formats/bundledDeepSpeed.ts, data/deepspeed-bundled.json): the values that decide memory come from the
 * framework's copy, each an assumption that names it, and the verdict rests on them. Expected values: the files
 * themselves (axolotl-ai-cloud/axolotl deepspeed_configs/ at 067b021c8, hiyouga/LLaMA-Factory examples/deepspeed/ at
 * ff6d4d12e), read by hand.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { bundledDeepSpeedFile } from '../../../server/formats/bundledDeepSpeed';
import { memoryHost } from './helpers';

const axolotl = (ds: string) => `base_model: meta-llama/Meta-Llama-3-8B\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\nsequence_len: 2048\nbf16: auto\ndeepspeed: ${ds}\n`;

describe('bundled DeepSpeed files of axolotl and LLaMA-Factory', () => {
  before(async () => { await initFormats(); });

  // [reference as a YAML writes it, ZeRO stage, optimizer offload, parameter offload]
  const ROWS: [string, number, string, string][] = [
    ['deepspeed_configs/zero1.json', 1, 'none', 'none'],
    // axolotl's zero2.json offloads the optimizer to the CPU, whatever its name says.
    ['deepspeed_configs/zero2.json', 2, 'cpu', 'none'],
    ['deepspeed_configs/zero3_bf16.json', 3, 'none', 'none'],
    ['./deepspeed_configs/zero3_bf16_cpuoffload_params.json', 3, 'none', 'cpu'],
    ['deepspeed_configs/zero3_bf16_cpuoffload_all.json', 3, 'cpu', 'cpu'],
    ['examples/deepspeed/ds_z3_config.json', 3, 'none', 'none'],
    ['../LLaMA-Factory/examples/deepspeed/ds_z3_offload_config.json', 3, 'cpu', 'cpu'],
    ['examples/deepspeed/ds_z2_offload_config.json', 2, 'cpu', 'none'],
  ];
  for (const [ref, stage, opt, params] of ROWS) {
    test(`${ref}: ZeRO-${stage}, optimizer offload ${opt}, parameter offload ${params}, assumed and said`, () => {
      const g = loadConfigGraph('/ws/train.yaml', memoryHost({ '/ws/train.yaml': axolotl(ref) }), { settings: { worldSize: 8 } });
      const p = g.resolved.plan!;
      assert.equal(p.parallel.sharding.stage, stage);
      assert.equal(p.parallel.sharding.offloadOptimizer, opt);
      assert.equal(p.parallel.sharding.offloadParams, params);
      assert.equal(p.sources['parallel.sharding.stage']?.kind, 'assumed');
      const a = g.resolved.assumptions.find((x) => x.path === 'parallel.sharding.stage');
      assert.equal(a?.value, String(stage), JSON.stringify(g.resolved.assumptions));
      // It names the key, the framework's file and the commit it was read at, and how to replace it.
      assert.match(a?.detail ?? '', new RegExp(`^zero_optimization\\.stage = ${stage} from (axolotl|LLaMA-Factory)'s [\\w/.]+\\.json \\(ZeRO-${stage}.*at [0-9a-f]{9}\\).*add the file to use its own values$`));
      assert.ok(g.resolved.problems.some((x) => x.code === 'reference-bundled'));
      assert.ok(!g.resolved.problems.some((x) => x.code === 'reference-missing'));
    });
  }

  test('LLaMA-Factory\'s AutoTP example sets TP 2', () => {
    const g = loadConfigGraph('/ws/train.yaml', memoryHost({ '/ws/train.yaml': axolotl('examples/deepspeed/ds_z2_autotp_config.json') }), { settings: { worldSize: 8 } });
    assert.equal(g.resolved.plan!.parallel.tp, 2);
  });

  test('the file in the workspace wins over the bundled values', () => {
    const g = loadConfigGraph('/ws/train.yaml', memoryHost({
      '/ws/train.yaml': axolotl('deepspeed_configs/zero3_bf16.json'),
      '/ws/deepspeed_configs/zero3_bf16.json': '{"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": "auto"}',
    }), { settings: { worldSize: 8 } });
    assert.equal(g.resolved.plan!.parallel.sharding.stage, 2);
    assert.notEqual(g.resolved.plan!.sources['parallel.sharding.stage']?.kind, 'assumed');
    assert.ok(!g.resolved.problems.some((x) => x.code === 'reference-bundled'));
  });

  test('a name that is no framework\'s file, or a bare file name, stays missing (no ZeRO assumed)', () => {
    for (const ref of ['my_ds_zero3.json', 'zero3_bf16.json', 'configs/zero3_bf16.json']) {
      assert.equal(bundledDeepSpeedFile(ref), undefined, ref);
      const g = loadConfigGraph('/ws/train.yaml', memoryHost({ '/ws/train.yaml': axolotl(ref) }), { settings: { worldSize: 8 } });
      assert.ok(g.resolved.problems.some((x) => x.code === 'reference-missing'), ref);
      assert.ok(!g.resolved.assumptions.some((a) => a.path === 'parallel.sharding.stage'), ref);
    }
  });
});
