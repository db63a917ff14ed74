/**
 * Minimal text edits: applying `diffEdits(a, b)` to `a` gives `b` (LSP semantics: ranges refer to the original),
 * and no two edits share a position. Inputs are deterministic pseudo-random line mixes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyTextEdits, diffEdits } from '../../../formats/common/edit/text';

/** Park–Miller minimal standard generator, so failures reproduce. */
function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 48271) % 2147483647) / 2147483647;
}

test('diffEdits round-trips 500 random edits', () => {
  const next = rng(42);
  const pool = ['a = 1', 'b = 2', '', '  --tp 8 \\', '# c', 'x: y', '}'];
  const pick = (): string => pool[Math.floor(next() * pool.length)];
  for (let n = 0; n < 500; n++) {
    const a = Array.from({ length: Math.floor(next() * 8) }, pick).join('\n') + (next() < 0.5 ? '\n' : '');
    const b = Array.from({ length: Math.floor(next() * 8) }, pick).join('\n') + (next() < 0.5 ? '\n' : '');
    const edits = diffEdits(a, b);
    assert.equal(applyTextEdits(a, edits), b, JSON.stringify({ a, b, edits }));
    const keys = edits.map((e) => `${e.range.start.line}:${e.range.start.character}`);
    assert.equal(new Set(keys).size, keys.length);
  }
});

test('identical texts need no edits', () => {
  assert.deepEqual(diffEdits('same\n', 'same\n'), []);
});
