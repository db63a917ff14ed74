/**
 * NVFP4 training in Megatron-LM (`--fp4-format e2m1`, megatron/training/arguments.py: choices ['e2m1'], dest 'fp4';
 * the Megatron-Bridge YAML field `fp4`): ShardLens has no FP4 GEMM term, so the flag is warned at its place and the
 * precision stays what the other flags give (FP8 with --fp8-format, else bf16), never read silently.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';

const script = (extra: string) => `#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 8192 \\
    --micro-batch-size 1 --global-batch-size 128 --bf16 ${extra}
`;

describe('Megatron NVFP4 (--fp4-format)', () => {
  before(async () => { await initFormats(); });

  test('warned at the flag; the linears are timed at 16-bit rates', () => {
    const text = script('--fp4-format e2m1 --fp4-recipe nvfp4');
    const r = parseConfig('/ws/train.sh', text);
    const d = r.diagnostics.find((x) => x.code === 'megatron-fp4-timing');
    assert.ok(d, JSON.stringify(r.diagnostics));
    assert.equal(d.severity, 'warning');
    assert.match(d.message, /16-bit rates/);
    const line = text.split('\n').findIndex((l) => l.includes('--fp4-format'));
    assert.equal(d.range.start.line, line);
    assert.equal(d.range.start.character, text.split('\n')[line].indexOf('--fp4-format'));
    assert.equal(r.facts['training.precision']?.value, 'bf16-mixed');
  });

  test('with --fp8-format the plan stays FP8 and the warning says so', () => {
    const r = parseConfig('/ws/train.sh', script('--fp8-format hybrid --fp4-format e2m1'));
    assert.equal(r.facts['training.precision']?.value, 'fp8-mixed');
    assert.match(r.diagnostics.find((x) => x.code === 'megatron-fp4-timing')?.message ?? '', /FP8 rates/);
  });

  test('no FP4 flag, no warning', () => {
    const r = parseConfig('/ws/train.sh', script('--fp8-format hybrid'));
    assert.equal(r.diagnostics.some((x) => x.code === 'megatron-fp4-timing'), false);
  });

  test('the Megatron-Bridge YAML field fp4 is the same flag', () => {
    const yaml = 'model:\n  tensor_model_parallel_size: 2\n  seq_length: 4096\n  fp4: e2m1\ntrain:\n  micro_batch_size: 1\n  global_batch_size: 64\n  train_iters: 10\nmixed_precision:\n  bf16: true\n';
    const r = parseConfig('/ws/run.yaml', yaml);
    assert.equal(r.format, 'megatron-yaml');
    const d = r.diagnostics.find((x) => x.code === 'megatron-fp4-timing');
    assert.ok(d, JSON.stringify(r.diagnostics));
    assert.equal(d.range.start.line, 3);
  });
});
