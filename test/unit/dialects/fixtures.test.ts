/**
 * Real launcher configs (test/fixtures/dialects, SOURCES.md): `shardlens estimate --json` of every development
 * fixture is compared with its answer key field by field (answers.json, written by reading each file; the held-out
 * third and the fresh tiers in split.json are scored by `npm run bench`, not here). Every fixture, held-out ones included, is read
 * without a crash and is either estimated or refused with a message.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { initFormats } from '../../../formats/index';
import { FIXTURES, freshTiers, heldOut, loadAnswers, notDevelopment, scoreFixture, type AnswerKey } from './score';

const answers = loadAnswers();
const held = heldOut();
const skipped = notDevelopment();
const fresh = new Set(freshTiers().flatMap(([, files]) => [...files]));

/** Console output of the CLI is not wanted in the test log. */
async function quietly<T>(f: () => Promise<T>): Promise<T> {
  const log = console.log;
  console.log = () => undefined;
  try { return await f(); } finally { console.log = log; }
}

describe('real launcher configs: every stated value read (development set)', () => {
  before(async () => { await initFormats(); });
  test('the answer keys name existing files and the held-out set is about a third', () => {
    const names = Object.keys(answers);
    assert.ok(names.length >= 120, `${names.length} fixtures`);
    for (const n of names) assert.ok(existsSync(join(FIXTURES, n)), n);
    for (const n of [...held, ...fresh]) assert.ok(answers[n], `held-out ${n} has a key`);
    // The seeded third is drawn from the files that are neither fresh nor from a held-out project.
    const drawn = names.filter((n) => !fresh.has(n));
    assert.ok(held.size >= drawn.length / 4 && held.size <= drawn.length / 2.5, `${held.size} held out of ${drawn.length}`);
  });
  test('the first, untouched run of the newest fresh tier is recorded (npm run bench prints it as the out-of-sample figure)', () => {
    const runs = JSON.parse(readFileSync(join(FIXTURES, 'first-runs.json'), 'utf8')) as Record<string, { correct: number; total: number }>;
    const newest = freshTiers().at(-1)?.[0];
    assert.ok(newest && runs[newest], `no first run recorded for ${newest}`);
    assert.ok(runs[newest]!.total > 0 && runs[newest]!.correct <= runs[newest]!.total);
  });
  for (const [fixture, key] of Object.entries(answers) as [string, AnswerKey][]) {
    if (skipped.has(fixture)) continue;
    test(`${key.dialect}: ${fixture}`, async () => {
      const r = await quietly(() => scoreFixture(fixture, key));
      assert.equal(r.crashed, undefined, `crashed: ${r.crashed}`);
      const wrong = r.comparisons.filter((c) => !c.ok).map((c) => `${c.field}: want ${c.want}, got ${c.got} (${c.source ?? 'not reported'})`);
      // `open` fields are known misses, said in the key's notes (the bench counts them, this test does not enforce them).
      const enforced = wrong.filter((w) => !key.open?.includes(w.slice(0, w.indexOf(':'))));
      assert.deepEqual(enforced, [], enforced.join('\n'));
    });
  }
});

describe('real launcher configs: no crash, estimated or refused with a message (all fixtures)', () => {
  before(async () => { await initFormats(); });
  for (const [fixture, key] of Object.entries(answers) as [string, AnswerKey][]) {
    test(fixture, async () => {
      const r = await quietly(() => scoreFixture(fixture, key));
      assert.equal(r.crashed, undefined, `crashed: ${r.crashed}`);
      assert.ok(r.estimated || r.refused, 'neither estimated nor refused with a message');
    });
  }
});
