/**
 * The shared wording of the verdict and the hints (shared/wording): a verdict that rests on an assumed input that
 * decides fit says so; an assumed batch shape does not, when the model states alone exceed GPU memory (no batch could
 * make it fit); hints of one line fit VS Code's per-line length (43 characters, editorOptions.ts in VS Code 1.100).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { verdict, type VerdictInput } from '../../../shared/wording/verdict';
import { HINT_MAX_LENGTH, fitHint, packLine, stagesHint, statesHint } from '../../../shared/wording/hints';

const GIB = 2 ** 30;
const base: VerdictInput = { fits: false, peakReservedBytes: 164 * GIB, gpuMemoryBytes: 80 * GIB, gpuName: 'H100 SXM', units: 'GiB', assumptions: [] };

describe('verdict', () => {
  const cases: [string, Partial<VerdictInput>, RegExp, boolean][] = [
    ['nothing assumed: plain', {}, /^does not fit: needs ~164 GiB\/GPU, H100 SXM has 80\.0 GiB$/, false],
    ['an assumed micro batch decides it', { assumptions: [{ path: 'training.microBatch', value: '8' }] }, /^needs ~164 GiB\/GPU of 80\.0 GiB if micro batch 8 \(assumed\) — set it$/, true],
    ['an assumed GPU type and count read as one cluster', { assumptions: [{ path: 'cluster.gpu', value: 'H100' }, { path: 'cluster.worldSize', value: '8' }] }, /if 8×H100 \(assumed\) — set it$/, true],
    ['a non-deciding assumption (GPUs per node) leaves it plain', { assumptions: [{ path: 'cluster.gpusPerNode', value: '8' }] }, /^does not fit/, false],
    // ZeRO paper §3: the model states are fixed by the model and sharding; a smaller batch cannot bring 120 GiB under 80.
    ['states above GPU memory: an assumed batch shape cannot flip it', { shapeFreeBytes: 120 * GIB, assumptions: [{ path: 'training.seqLen', value: '2048' }] }, /^does not fit/, false],
    ['a missing referenced file', { missingFile: 'ds_z3.json' }, /without ds_z3\.json \(not found\) — add it$/, true],
    ['fits on an assumption', { fits: true, peakReservedBytes: 52 * GIB, assumptions: [{ path: 'model', value: 'Llama-3.1-8B' }] }, /^fits \(~52\.0 GiB\/GPU of 80\.0 GiB\) if model Llama-3\.1-8B \(assumed\)$/, true],
  ];
  for (const [name, change, re, conditional] of cases) {
    test(name, () => {
      const v = verdict({ ...base, ...change });
      assert.match(v.headline, re);
      assert.equal(v.conditional, conditional);
    });
  }
  test('more than two assumptions are counted on one-line surfaces', () => {
    const v = verdict({ ...base, assumptions: ['model', 'training.microBatch', 'training.seqLen'].map((path) => ({ path, value: '1' })) });
    assert.match(v.short, /· 3 assumed inputs$/);
    assert.match(v.headline, /if model 1, micro batch 1, sequence length 1 \(assumed\)/);
  });
});

describe('hints', () => {
  test('the verdict hint says "if assumed"; the step time follows only when the line has room', () => {
    const h = fitHint({ ...base, assumptions: [{ path: 'training.microBatch', value: '8' }] }, 3.2);
    assert.equal(h.label, '≈164 GiB/GPU > 80.0 GiB if assumed');
    assert.match(h.tooltip, /needs ~164 GiB\/GPU of 80\.0 GiB if micro batch 8 \(assumed\)/);
    assert.equal(fitHint({ ...base, fits: true, peakReservedBytes: 52 * GIB }, 3.2).label, '≈52.0 GiB/GPU ✓ fits · step 3.20 s');
  });
  test('model states with the replication factor (ZeRO-2 on 8 GPUs: 16Ψ / (2 + 14/8)Ψ = 4.27×)', () => {
    const psi = 7e9;
    assert.equal(statesHint((2 + 14 / 8) * psi, 16 * psi, 'GiB').label, 'states ≈24.4 GiB/GPU · ×4.3 rep.');
  });
  test('per-stage peaks shorten to fit', () => {
    const h = stagesHint(Array.from({ length: 16 }, (_, i) => (40 + i) * GIB), 'GiB');
    assert.ok(h.label.length <= HINT_MAX_LENGTH, h.label);
    assert.match(h.label, /^stages ≈40\.0 · 41\.0 · … · 55\.0 GiB$/);
  });
  test('a crowded line takes compact labels when that keeps more hints, and moves the rest into the tooltip', () => {
    const line = packLine([
      { label: 'states ≈59.8 GiB/GPU · ×2.0 rep.', compact: 'states ≈59.8 GiB', tooltip: 'A' },
      { label: 'DP ≈44.9 GiB/step', compact: 'DP ≈44.9 GiB', tooltip: 'B' },
      { label: 'TP ≈1.20 TiB/step', tooltip: 'C' },
    ]);
    // Full labels keep one hint; compact ones keep two (16 + 12 characters), and the third waits in the tooltip.
    assert.deepEqual(line.map((h) => h.label), ['states ≈59.8 GiB', 'DP ≈44.9 GiB']);
    assert.ok(line.map((h) => h.label).join('').length <= HINT_MAX_LENGTH);
    assert.equal(line[1]?.tooltip, 'B\n\nC');
  });
});
