/**
 * What code and hovers cite lives in the repository (issue 11): no citation of the team's reference notes outside the
 * checkout (formulas.md / config-formats.md), every `docs/formulas.md#…`, `docs/framework-facts.md#…` and `docs/formats/…` citation names a page and
 * a heading that exist, and the key tables in docs/formats/ match formats/<name>/keys.json.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const SOURCES = ['shared', 'formats', 'server', 'extension', 'cli', 'validation', 'webview', 'test', 'bench', 'data', 'scripts'];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (n === 'node_modules' || n === 'fixtures' || n.startsWith('.')) return [];
    return statSync(p).isDirectory() ? files(p) : /\.(ts|mjs|json)$/.test(n) ? [p] : [];
  });
}

/** GitHub's heading anchors: lowercase, punctuation dropped, spaces as hyphens. */
function anchors(markdown: string): Set<string> {
  return new Set(markdown.split('\n').filter((l) => /^#{1,6} /.test(l)).map((l) => l.replace(/^#+ /, '').trim().toLowerCase().replace(/[^\p{L}\p{N} -]/gu, '').replace(/ /g, '-')));
}

const all = SOURCES.flatMap(files).map((f) => [f, readFileSync(f, 'utf8')] as const);

describe('docs the code cites', () => {
  test('nothing cites the reference notes outside the checkout', () => {
    for (const [f, text] of all) {
      if (f === 'test/unit/docs.test.ts') continue;
      assert.doesNotMatch(text, /config-formats\.md|(?<!docs\/)formulas\.md/, f);
    }
  });

  test('every citation of docs/formulas.md, docs/framework-facts.md and docs/formats/ names an existing page and heading', () => {
    let n = 0;
    for (const [f, text] of all) {
      for (const m of text.matchAll(/docs\/(formulas\.md|framework-facts\.md|formats\/[\w.-]*\.md)(#[\w-]+)?/g)) {
        n++;
        const page = join('docs', m[1]!);
        assert.ok(existsSync(page), `${f} cites ${page}`);
        if (m[2]) assert.ok(anchors(readFileSync(page, 'utf8')).has(m[2].slice(1)), `${f} cites ${page}${m[2]}`);
      }
    }
    assert.ok(n >= 20, `only ${n} citations found`);
  });

  test('the key tables of docs/formats/ match formats/<name>/keys.json (node scripts/gen-format-docs.mjs)', () => {
    const r = spawnSync(process.execPath, ['scripts/gen-format-docs.mjs', '--check'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  });
});
