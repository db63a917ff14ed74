/**
 * The end of a training log, bounded (server/io/read.ts readTextTail): a log longer than the cap is read from its last
 * `maxBytes`, starting at the first whole line, and says how much it skipped; devices, FIFOs, folders and binary files
 * are refused with the reason, never read or waited on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { readTextTail } from '../../server/io/read';
import { tempTree } from '../cli/helpers';

test('a long log is read from its end at a line start; a short one whole', () => {
  // 1,000 lines of "line NNNN\n" (10 bytes each): the last 95 bytes start mid-line 0990, so 0991…0999 are read.
  const text = Array.from({ length: 1000 }, (_, i) => `line ${String(i).padStart(4, '0')}\n`).join('');
  const t = tempTree({ 'train.log': text, 'short.log': 'a\nb\n' });
  try {
    const r = readTextTail(join(t.dir, 'train.log'), 95);
    assert.ok(r.ok);
    if (!r.ok) return;
    assert.equal(r.text, Array.from({ length: 9 }, (_, i) => `line ${String(991 + i).padStart(4, '0')}\n`).join(''));
    assert.equal(r.skippedBytes, 10000 - 90);
    const s = readTextTail(join(t.dir, 'short.log'), 95);
    assert.ok(s.ok && s.text === 'a\nb\n' && s.skippedBytes === undefined);
  } finally {
    t.cleanup();
  }
});

test('devices, FIFOs, folders, missing and binary files are refused with the reason', () => {
  const t = tempTree({ 'bin.log': 'ab\u0000cd' });
  try {
    execFileSync('mkfifo', [join(t.dir, 'fifo.log')]);
    const cases: [string, RegExp][] = [
      ['/dev/zero', /not a regular file/], [join(t.dir, 'fifo.log'), /not a regular file/], [t.dir, /not a regular file/],
      [join(t.dir, 'missing.log'), /does not exist/], [join(t.dir, 'bin.log'), /binary/],
    ];
    for (const [p, want] of cases) {
      const r = readTextTail(p);
      assert.equal(r.ok, false, p);
      if (!r.ok) assert.match(r.detail, want);
    }
  } finally {
    t.cleanup();
  }
});
