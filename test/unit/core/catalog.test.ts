/** GPU catalog and preset lookup: forgiving names, complete entries. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findGpu, listGpus, suggestGpus } from '../../../shared/hardware/gpus';
import { findPreset, listPresets } from '../../../shared/model/presets';

describe('GPU catalog', () => {
  const cases: [string, string][] = [
    ['A100-80GB', 'a100-80gb'], ['a100_80g', 'a100-80gb'], ['A100 40GB', 'a100-40gb'], ['H100', 'h100-sxm'], ['H100-SXM', 'h100-sxm'],
    ['h100-sxm5-80gb', 'h100-sxm'], ['NVIDIA H100 80GB HBM3', 'h100-sxm'], ['H100 PCIe', 'h100-pcie'], ['mi300x', 'mi300x'],
    ['MI250X', 'mi250x'], ['4090', 'rtx-4090'], ['RTX 4090', 'rtx-4090'], ['v100-32gb', 'v100-32gb'], ['b200', 'b200'], ['H200', 'h200'],
    ['L40S', 'l40s'], ['NVIDIA A100-SXM4-40GB', 'a100-40gb'],
  ];
  for (const [name, id] of cases) test(`"${name}" finds ${id}`, () => assert.equal(findGpu(name)?.id, id));
  test('unknown names give undefined and suggestions', () => {
    assert.equal(findGpu('tpu-v5'), undefined);
    assert.equal(findGpu(''), undefined);
    assert.equal(findGpu(42), undefined);
    assert.ok(suggestGpus('h10').includes('h100-sxm'));
  });
  test('every entry is complete and cites a source', () => {
    // Issue 2 §2 lists these GPUs as the minimum catalog.
    for (const id of ['v100-16gb', 'a100-40gb', 'a100-80gb', 'h100-sxm', 'h100-pcie', 'h200', 'b200', 'mi250x', 'mi300x', 'l40s', 'rtx-4090']) {
      assert.ok(listGpus().some((g) => g.id === id), id);
    }
    for (const g of listGpus()) {
      for (const k of ['memoryBytes', 'hbmBandwidth', 'intraNodeBandwidth', 'interNodeBandwidth', 'hostBandwidth', 'intraNodeLatency', 'interNodeLatency'] as const) {
        assert.ok(g[k] > 0, `${g.id}.${k}`);
      }
      assert.ok((g.peakFlops.bf16 ?? g.peakFlops.fp16 ?? 0) > 0, g.id);
      assert.ok(g.achievableFlopsFraction > 0 && g.achievableFlopsFraction < 1);
      assert.ok(g.source.length > 10);
    }
  });
  test('memory sizes are the reported device sizes (A100 80GB = 80 GiB, H100 = 81,559 MiB)', () => {
    assert.equal(findGpu('a100-80gb')?.memoryBytes, 80 * 2 ** 30);
    assert.equal(findGpu('h100')?.memoryBytes, 81_559 * 2 ** 20);
  });
});

describe('model presets', () => {
  const cases: [string, string][] = [
    ['llama3-8b', 'llama-3-8b'], ['meta-llama/Meta-Llama-3-8B', 'llama-3-8b'], ['Llama-3.1-8B', 'llama-3.1-8b'],
    ['meta-llama/Llama-3.1-8B-Instruct', 'llama-3.1-8b'], ['Qwen/Qwen2.5-7B', 'qwen2.5-7b'], ['mistralai/Mixtral-8x7B-v0.1', 'mixtral-8x7b'],
    ['gpt2', 'gpt2'], ['Llama-2-7b-hf', 'llama-2-7b'], ['qwen3-30b-a3b', 'qwen3-30b-a3b'], ['torchtitan-llama3-debugmodel', 'torchtitan-llama3-debugmodel'],
  ];
  for (const [name, id] of cases) test(`"${name}" finds ${id}`, () => assert.equal(findPreset(name)?.id, id));
  test('every preset loads and names a source', () => {
    assert.ok(listPresets().length >= 40);
    for (const p of listPresets()) {
      assert.ok(p.source.length > 10, p.id);
      assert.ok(p.model.layers > 0 && p.model.hiddenSize > 0);
    }
    assert.equal(findPreset('no-such-model'), undefined);
    assert.equal(findPreset(undefined), undefined);
  });
});
