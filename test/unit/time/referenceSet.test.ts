/**
 * The team reference set of published runs as `npm run bench` finds and reads it (bench/measured/reference.ts): the
 * folder is <checkout>/../shared/reference/measured-runs (for /work/main: /work/shared/…; for a worktree /work/wt/x the
 * same folder two levels up), never the checkout's own shared/ (ShardLens's core); a missing or malformed cases.json
 * gives a reason instead of an exception; rows the repository copy already holds are told apart from new ones.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { findReferenceSet, inRepositoryCopy, readReferenceRows } from '../../../bench/measured/reference';
import type { MeasuredCase } from '../../../bench/measured/runs';

let root = '';
const set = () => join(root, 'work', 'shared', 'reference', 'measured-runs');

describe('reference set: where it is', () => {
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'shardlens-ref-'));
    for (const d of ['work/main/bench', 'work/wt/time/bench', 'work/main/shared/reference/measured-runs', 'work/shared/reference/measured-runs']) mkdirSync(join(root, d), { recursive: true });
    writeFileSync(join(set(), 'cases.json'), '[]');
    // A decoy inside the checkout's own shared/ (the core's folder) must never be taken for the team's set.
    writeFileSync(join(root, 'work/main/shared/reference/measured-runs/cases.json'), '[]');
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  test('from the main checkout: <checkout>/../shared/reference/measured-runs', () => {
    assert.equal(findReferenceSet(join(root, 'work/main'), {}).dir, set());
  });

  test('from a worktree two levels down: the same folder', () => {
    assert.equal(findReferenceSet(join(root, 'work/wt/time'), {}).dir, set());
  });

  test('the old expression resolve(bench, "../../../shared/…") left the work folder (the bug this replaces)', () => {
    const old = resolve(join(root, 'work/main/bench'), '../../../shared/reference/measured-runs');
    assert.notEqual(old, set());
    assert.equal(old, join(root, 'shared/reference/measured-runs'));
  });

  test('no set anywhere above: no folder, and where it looked', () => {
    const lone = mkdtempSync(join(tmpdir(), 'shardlens-noref-'));
    try {
      mkdirSync(join(lone, 'co'));
      const r = findReferenceSet(join(lone, 'co'), {});
      // The walk goes on above the temp folder; whatever a machine holds there, nothing below `lone` is found.
      assert.ok(r.dir === undefined || !r.dir.startsWith(lone), r.dir);
      assert.equal(r.looked[0], join(lone, 'shared/reference/measured-runs'));
      if (r.dir === undefined) assert.equal(r.looked.at(-1), resolve('/', 'shared/reference/measured-runs'));
    } finally {
      rmSync(lone, { recursive: true, force: true });
    }
  });

  test('SHARDLENS_REFERENCE_RUNS names the folder outright', () => {
    assert.equal(findReferenceSet(join(root, 'work/main'), { SHARDLENS_REFERENCE_RUNS: '/elsewhere/runs' }).dir, '/elsewhere/runs');
  });
});

describe('reference set: malformed cases.json', () => {
  let dir = '';
  before(() => { dir = mkdtempSync(join(tmpdir(), 'shardlens-refbad-')); });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (text: string | Buffer) => writeFileSync(join(dir, 'cases.json'), text);

  test('missing file: a reason, no rows', () => {
    const r = readReferenceRows(join(dir, 'absent'));
    assert.deepEqual(r.rows, []);
    assert.match(r.error ?? '', /does not exist/);
  });

  test('not JSON: a reason, no exception', () => {
    write('[{"id": "x",');
    assert.match(readReferenceRows(dir).error ?? '', /not JSON/);
  });

  test('JSON that is not an array: a reason', () => {
    write('{"cases": []}');
    assert.match(readReferenceRows(dir).error ?? '', /not a JSON array/);
  });

  test('binary data: refused by the bounded reader', () => {
    write(Buffer.from([0x5b, 0, 1, 2, 0x5d]));
    assert.match(readReferenceRows(dir).error ?? '', /binary/);
  });

  test('bad rows are named and skipped, good time rows kept, memory rows ignored', () => {
    write(JSON.stringify([
      { id: 'ok-tps', kind: 'time', file: 'a.toml', gpus: '8xH100', model: null, measured: 3890 },
      { id: 'neg', kind: 'time', file: 'b.toml', gpus: '8xH100', measured: -1 },
      { kind: 'time', file: 'c.toml', gpus: '8xH100', measured: 5 },
      { id: 'nofile', kind: 'time', gpus: '8xH100', measured: 5 },
      { id: 'nan', kind: 'time', file: 'd.toml', gpus: '8xH100', measured: 'fast' },
      { id: 'mem', kind: 'memory', file: 'e.toml', gpus: '8xH100', measured: 80 },
      null,
    ]));
    const r = readReferenceRows(dir);
    assert.equal(r.error, undefined);
    assert.deepEqual(r.rows.map((x) => x.id), ['ok-tps']);
    assert.equal(r.rows[0].model, undefined);
    assert.equal(r.problems.length, 5, r.problems.join(' | '));
    assert.ok(r.problems.some((p) => p.includes('(neg)') && p.includes('positive')));
  });
});

describe('reference set: which rows the repository copy holds', () => {
  const cases: MeasuredCase[] = [
    { id: 'tt24-t2-8b-cp1', source: 'torchtitan-2024-12', file: 'measured-runs/tt24_t2_8b_fsdp8_cp1.toml', gpus: '8xH100-96GB-500W', measured: 3890, unit: 'tokens/s/GPU' },
  ];
  const row = (id: string, file: string, measured: number) => ({ id, file, gpus: '8xH100', measured });

  test('the set\'s "-tps" id of a repository row with the same measured value', () => {
    assert.equal(inRepositoryCopy(row('tt24-t2-8b-cp1-tps', 'other.toml', 3890), cases), true);
  });

  test('the same launch file and measured value under another id', () => {
    assert.equal(inRepositoryCopy(row('renamed', 'tt24_t2_8b_fsdp8_cp1.toml', 3890), cases), true);
  });

  test('a new measurement of a known file, or a new row, is out of sample', () => {
    assert.equal(inRepositoryCopy(row('tt24-t2-8b-cp1-tps', 'tt24_t2_8b_fsdp8_cp1.toml', 3900), cases), false);
    assert.equal(inRepositoryCopy(row('mpt-13b-s4096-tps', '13b_s4096.toml', 4717), cases), false);
  });
});
