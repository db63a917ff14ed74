/**
 * Properties of the GPU name lookup over the whole catalog (shared/hardware/gpuName.ts, gpus.ts): every name an entry
 * answers to finds it however it is punctuated or cased; the same name with another board, a memory size no part of
 * that chip has, or a MIG profile never finds it; any string, hostile ones included, gives an entry or undefined
 * without throwing; and an entry's own id or full name leaves no smaller part for the memory assumption to name.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findGpu, listGpus, smallerGpusNamed, suggestGpus } from '../../../shared/hardware/gpus';
import { FORM_CLASS } from '../../../shared/hardware/gpuName';
import { rng } from '../../../shared/random';

/** A board word of each class, as torch and nvidia-smi write them. */
const BOARD_WORD = { module: 'SXM', pcie: 'PCIe', nvl: 'NVL' } as const;

describe('GPU names, over the catalog', () => {
  test('an entry\'s names find it in upper case, with spaces or underscores for the dashes', () => {
    for (const g of listGpus()) {
      for (const n of [g.name, ...g.aliases]) {
        for (const written of [n.toUpperCase(), n.replace(/-/g, ' '), n.replace(/-/g, '_')]) assert.equal(findGpu(written)?.id, g.id, written);
      }
    }
  });

  test('the name with another board is never the entry', () => {
    for (const g of listGpus()) {
      const own = FORM_CLASS[g.form];
      for (const [cls, word] of Object.entries(BOARD_WORD)) {
        if (cls === own) continue;
        const hit = findGpu(`${g.name} ${word}`);
        assert.notEqual(hit?.id, g.id, `${g.name} ${word}`);
        // Whatever it finds has the board the name says.
        if (hit) assert.equal(FORM_CLASS[hit.form], cls, `${g.name} ${word} → ${hit.id}`);
      }
    }
  });

  test('a memory size no catalog part has is never read as a part', () => {
    // 7 GB and 333 GB are no part's capacity; the lookup must not drop the size to find the chip.
    for (const g of listGpus()) for (const size of ['7GB', '333GB']) assert.equal(findGpu(`${g.id} ${size}`), undefined, `${g.id} ${size}`);
  });

  test('a MIG profile after any entry\'s name is not the entry', () => {
    for (const g of listGpus()) assert.equal(findGpu(`${g.name} MIG 1g.10gb`), undefined, g.name);
  });

  test('any string gives an entry or undefined, never an exception', () => {
    const next = rng(20261205);
    const alphabet = 'aAbBgGhHmMnNpPsSxX0123456789 -_./()[]{}$%\u00e9\u4e2d\u{1F600}\u0000\n\t';
    const samples: string[] = ['', ' ', '----', 'GB', '80GB', 'MIG', 'nvl72', 'h'.repeat(100_000), '1'.repeat(100_000), `H100 ${'9'.repeat(400)}GB`];
    for (let i = 0; i < 2000; i++) {
      const len = Math.floor(next() * 40);
      let s = '';
      for (let k = 0; k < len; k++) s += [...alphabet][Math.floor(next() * [...alphabet].length)];
      samples.push(s);
    }
    const ids = new Set(listGpus().map((g) => g.id));
    // A value far longer than any device name is no GPU and gets no suggestion (edit distance is quadratic).
    assert.equal(findGpu(`H100 ${'x'.repeat(300)}`), undefined);
    assert.deepEqual(suggestGpus('h'.repeat(100_000)), []);
    for (const s of samples) {
      const hit = findGpu(s);
      assert.ok(hit === undefined || ids.has(hit.id), JSON.stringify(s.slice(0, 40)));
      // The smaller parts a name also fits exist only where the name finds a part, and each has less memory than it.
      const smaller = smallerGpusNamed(s);
      assert.ok(hit ? smaller.every((g) => ids.has(g.id) && g.memoryBytes < hit.memoryBytes) : smaller.length === 0, JSON.stringify(s.slice(0, 40)));
    }
  });

  test('an entry\'s own id, and its name with its memory stated, leave no smaller part to name', () => {
    for (const g of listGpus()) {
      assert.deepEqual(smallerGpusNamed(g.id), [], g.id);
      assert.deepEqual(smallerGpusNamed(g.name), [], g.name);
    }
  });
});
