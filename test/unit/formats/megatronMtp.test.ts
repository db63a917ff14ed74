/**
 * Megatron multi-token prediction (`--mtp-num-layers D`, megatron/core/transformer/transformer_config.py; DeepSeek-V3
 * §2.2: D sequential modules, each a projection, a transformer layer and a pass through the shared output head) is not
 * modelled, so the flag is warned at its place rather than read silently; D = 0 or absent says nothing.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';

const script = (extra: string) => `#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --num-layers 8 --hidden-size 2048 --num-attention-heads 16 --seq-length 4096 \\
    --micro-batch-size 1 --global-batch-size 64 --bf16 ${extra}
`;

describe('Megatron multi-token prediction (--mtp-num-layers)', () => {
  before(async () => { await initFormats(); });

  test('warned at the flag: memory and step time likely too low', () => {
    const text = script('--mtp-num-layers 1 --mtp-loss-scaling-factor 0.1');
    const r = parseConfig('/ws/train.sh', text);
    const d = r.diagnostics.find((x) => x.code === 'megatron-mtp-unmodelled');
    assert.ok(d && d.severity === 'warning', JSON.stringify(r.diagnostics));
    assert.match(d.message, /too low/);
    const line = text.split('\n').findIndex((l) => l.includes('--mtp-num-layers'));
    assert.equal(d.range.start.line, line);
    assert.equal(d.range.start.character, text.split('\n')[line].indexOf('--mtp-num-layers'));
  });

  test('two modules are named as such', () => {
    const r = parseConfig('/ws/train.sh', script('--mtp-num-layers 2'));
    assert.match(r.diagnostics.find((x) => x.code === 'megatron-mtp-unmodelled')?.message ?? '', /2 modules/);
  });

  test('a count that is not a whole number is a warning at its value', () => {
    for (const v of ['1.5', '-1', 'one']) {
      const r = parseConfig('/ws/train.sh', script(`--mtp-num-layers ${v}`));
      assert.ok(r.diagnostics.some((d) => d.code === 'invalid-value' && d.message.includes('--mtp-num-layers')), `${v}: ${JSON.stringify(r.diagnostics)}`);
      assert.equal(r.diagnostics.some((d) => d.code === 'megatron-mtp-unmodelled'), false, v);
    }
  });

  test('none, zero or a variable: no warning', () => {
    for (const extra of ['', '--mtp-num-layers 0', '--mtp-num-layers $MTP']) {
      const r = parseConfig('/ws/train.sh', script(extra));
      assert.equal(r.diagnostics.some((x) => x.code === 'megatron-mtp-unmodelled'), false, extra);
    }
  });

  test("a Megatron test YAML's MODEL_ARGS say the same", () => {
    const yaml = 'MODEL_ARGS:\n  --num-layers: 8\n  --hidden-size: 2048\n  --num-attention-heads: 16\n  --seq-length: 4096\n  --micro-batch-size: 1\n  --global-batch-size: 64\n  --mtp-num-layers: 1\n';
    const r = parseConfig('/ws/model_config.yaml', yaml);
    const d = r.diagnostics.find((x) => x.code === 'megatron-mtp-unmodelled');
    assert.ok(d, `${r.format}: ${JSON.stringify(r.diagnostics)}`);
    assert.equal(d.range.start.line, 7);
  });
});
