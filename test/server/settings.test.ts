/** Settings: whatever the client sends becomes valid settings; per-resource values reach the figures. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_SETTINGS } from '../../shared/protocol';
import { normalizeSettings } from '../../server/settings';
import { startClient } from './harness';

const CASES: readonly [string, unknown, (s: ReturnType<typeof normalizeSettings>) => unknown, unknown][] = [
  ['nothing gives the defaults', undefined, (s) => s, DEFAULT_SETTINGS],
  ['a valid detail is kept', { hints: { detail: 'verbose' } }, (s) => s.hints.detail, 'verbose'],
  ['an unknown detail falls back', { hints: { detail: 'loud' } }, (s) => s.hints.detail, 'normal'],
  ['GB units are kept', { units: 'GB' }, (s) => s.units, 'GB'],
  ['negative GPUs per node are ignored', { cluster: { gpusPerNode: -4 } }, (s) => s.cluster.gpusPerNode, 0],
  ['a fractional node count is floored', { cluster: { nodes: 2.7 } }, (s) => s.cluster.nodes, 2],
  ['NaN fragmentation falls back', { overhead: { fragmentation: Number.NaN } }, (s) => s.overhead.fragmentation, 0],
  ['the GPU name is trimmed', { cluster: { gpu: ' A100-80GB ' } }, (s) => s.cluster.gpu, 'A100-80GB'],
  ['non-string formats are dropped', { formats: { enabled: ['deepspeed', 3, null] } }, (s) => s.formats.enabled, ['deepspeed']],
];

for (const [name, raw, pick, want] of CASES) {
  test(`settings: ${name}`, () => assert.deepEqual(pick(normalizeSettings(raw)), want));
}

test('settings per resource: GB units and a chosen GPU reach the hints and lenses', async () => {
  const c = await startClient({ model: 'llama-2-7b', units: 'GB', cluster: { gpu: 'A100-40GB', gpusPerNode: 4, nodes: 2 } });
  try {
    const uri = 'file:///ws/settings/ds_config.json';
    const d = c.diagnostics(uri);
    await c.open(uri, '{\n  "train_micro_batch_size_per_gpu": 1,\n  "zero_optimization": { "stage": 3 }\n}\n');
    await d;
    const hints = await c.hints(uri);
    assert.ok(hints.length > 0 && hints.every((h) => !/GiB/.test(String(h.label))), JSON.stringify(hints.map((h) => h.label)));
    assert.match(String(hints[0]?.label), / GB/);
    const lenses = await c.lenses(uri);
    // 4 GPUs per node × 2 nodes of an A100 40 GB.
    assert.match(lenses[0]?.command?.title ?? '', /on 8×.*A100.*40/);
  } finally {
    c.dispose();
  }
});
