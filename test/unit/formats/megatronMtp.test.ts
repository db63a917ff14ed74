/**
 * Megatron multi-token prediction (`--mtp-num-layers D`, megatron/core/transformer/transformer_config.py; DeepSeek-V3
 * §2.2: D sequential modules, each a projection, a transformer layer and a pass through the shared output head) is read
 * as `model.mtpLayers` with an info at the flag saying how it is counted; bad counts and layouts that disagree with it
 * are warned at their place; D = 0 or absent says nothing.
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

  test('read as model.mtpLayers, with an info at the flag saying where the modules are counted', () => {
    const text = script('--mtp-num-layers 1 --mtp-loss-scaling-factor 0.1');
    const r = parseConfig('/ws/train.sh', text);
    assert.equal(r.facts['model.mtpLayers']?.value, 1);
    assert.equal(r.facts['model.mtpLayers']?.source.kind, 'explicit');
    const d = r.diagnostics.find((x) => x.code === 'megatron-mtp');
    assert.ok(d && d.severity === 'info', JSON.stringify(r.diagnostics));
    assert.match(d.message, /last pipeline stage/);
    assert.match(d.message, /copy of the embedding/);
    const line = text.split('\n').findIndex((l) => l.includes('--mtp-num-layers'));
    assert.equal(d.range.start.line, line);
    assert.equal(d.range.start.character, text.split('\n')[line].indexOf('--mtp-num-layers'));
  });

  test('two modules are named as such', () => {
    const r = parseConfig('/ws/train.sh', script('--mtp-num-layers 2'));
    assert.equal(r.facts['model.mtpLayers']?.value, 2);
    assert.match(r.diagnostics.find((x) => x.code === 'megatron-mtp')?.message ?? '', /its 2 modules/);
  });

  test('a count that is not a whole number, or more modules than any model has layers, is a warning at its value and read as none', () => {
    for (const v of ['1.5', '-1', 'one', '100000']) {
      const r = parseConfig('/ws/train.sh', script(`--mtp-num-layers ${v}`));
      assert.ok(r.diagnostics.some((d) => d.code === 'invalid-value' && d.message.includes('--mtp-num-layers')), `${v}: ${JSON.stringify(r.diagnostics)}`);
      assert.equal(r.facts['model.mtpLayers'], undefined, v);
      assert.equal(r.diagnostics.some((d) => d.code === 'megatron-mtp'), false, v);
    }
  });

  test('none or zero: no module, nothing said', () => {
    for (const extra of ['', '--mtp-num-layers 0']) {
      const r = parseConfig('/ws/train.sh', script(extra));
      assert.equal(r.facts['model.mtpLayers']?.value ?? 0, 0, extra);
      assert.equal(r.diagnostics.some((x) => x.code === 'megatron-mtp' || x.code === 'megatron-unresolved'), false, extra);
    }
  });

  test('a variable: no module counted, and the file is told the count could not be read', () => {
    const text = script('--mtp-num-layers $MTP');
    const r = parseConfig('/ws/train.sh', text);
    assert.equal(r.facts['model.mtpLayers']?.value ?? 0, 0);
    const d = r.diagnostics.find((x) => x.code === 'megatron-unresolved' && x.message.includes('--mtp-num-layers'));
    assert.ok(d, JSON.stringify(r.diagnostics));
    const line = text.split('\n')[d.range.start.line];
    assert.equal(line.slice(d.range.start.character).startsWith('$MTP'), true);
  });

  test('a layout that places the modules on the last rank says nothing more; elsewhere, or a different count, is a warning at the layout', () => {
    const pp = '--pipeline-model-parallel-size 2';
    const layoutWarn = (extra: string) => parseConfig('/ws/train.sh', script(extra)).diagnostics.filter((d) => d.code === 'megatron-pipeline-layout');
    assert.deepEqual(layoutWarn(`${pp} --mtp-num-layers 1 --pipeline-model-parallel-layout 'Et*4|t*4mL'`), []);
    const elsewhere = layoutWarn(`${pp} --mtp-num-layers 1 --pipeline-model-parallel-layout 'Et*4m|t*4L'`);
    assert.equal(elsewhere.length, 1, JSON.stringify(elsewhere));
    assert.match(elsewhere[0].message, /rank 0.*last rank \(1\)/);
    const count = layoutWarn(`${pp} --mtp-num-layers 2 --pipeline-model-parallel-layout 'Et*4|t*4mL'`);
    assert.equal(count.length, 1, JSON.stringify(count));
    assert.match(count[0].message, /places 1 MTP layer \(m\), --mtp-num-layers builds 2/);
  });

  test('--mtp-use-repeated-layer (one module run D times) is warned at the flag with what it overstates; with one module it changes nothing', () => {
    const text = script('--mtp-num-layers 3 --mtp-use-repeated-layer --mtp-loss-scaling-factor 0.3');
    const d = parseConfig('/ws/train.sh', text).diagnostics.find((x) => x.code === 'megatron-mtp-repeated');
    assert.equal(d?.severity, 'warning');
    assert.match(d?.message ?? '', /runs it 3 times.*2 modules too high/);
    assert.equal(text.split('\n')[d!.range.start.line].slice(d!.range.start.character).startsWith('--mtp-use-repeated-layer'), true);
    assert.equal(parseConfig('/ws/train.sh', script('--mtp-num-layers 1 --mtp-use-repeated-layer')).diagnostics.some((x) => x.code === 'megatron-mtp-repeated'), false);
  });

  test("a Megatron test YAML's MODEL_ARGS say the same", () => {
    const yaml = 'MODEL_ARGS:\n  --num-layers: 8\n  --hidden-size: 2048\n  --num-attention-heads: 16\n  --seq-length: 4096\n  --micro-batch-size: 1\n  --global-batch-size: 64\n  --mtp-num-layers: 1\n';
    const r = parseConfig('/ws/model_config.yaml', yaml);
    const d = r.diagnostics.find((x) => x.code === 'megatron-mtp');
    assert.ok(d, `${r.format}: ${JSON.stringify(r.diagnostics)}`);
    assert.equal(d.range.start.line, 7);
    assert.equal(r.facts['model.mtpLayers']?.value, 1);
  });
});
