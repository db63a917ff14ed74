/**
 * Fuzz: real-looking configs of every format, mutated and truncated, through the server's analysis and every feature
 * builder. Asserts no throw, no input near a hang (2 s), and no NaN, ∞ or negative figure in any text shown.
 * Prints the count of inputs over 100 ms (the speed goal lives in bench/server.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { analyzeDocument } from '../../server/analysis/analyze';
import { core, initCore } from '../../server/analysis/core';
import { createHost } from '../../server/analysis/host';
import { buildAnalysisResult } from '../../server/features/analysisResult';
import { buildCodeActions } from '../../server/features/codeActions';
import { buildCodeLenses } from '../../server/features/codeLens';
import { buildCompletion } from '../../server/features/completion';
import { buildDiagnostics } from '../../server/features/diagnostics';
import { buildHover } from '../../server/features/hover';
import { buildInlayHints } from '../../server/features/inlayHints';
import { normalizeSettings } from '../../server/settings';
import { rng } from '../../shared/random';
import { mutate } from './mutate';

const INPUTS = Number(process.env.SHARDLENS_FUZZ_INPUTS ?? 10_000);
const SEED = Number(process.env.SHARDLENS_FUZZ_SEED ?? 20_260_401);
const CONFIG = /\.(json|ya?ml|toml|sh|slurm)$/;

function collect(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) collect(p, out);
    else if (CONFIG.test(name) && statSync(p).size < 200_000) out.push(p);
  }
  return out;
}

/**
 * A figure that must never be shown: NaN, infinity, or a negative number written with an ASCII minus. Words are whole
 * words: a file name the user wrote ("zeroInfinity.json", which verdicts name when it is missing) is not a figure.
 */
const BAD = /(^|[^A-Za-z])(NaN|Infinity)(?![A-Za-z])|∞|(^|[\s(=:,/])-\d/;

function check(texts: readonly string[], where: string): void {
  for (const t of texts) assert.doesNotMatch(t, BAD, `${where}: ${t}`);
}

test(`fuzz: ${INPUTS} mutated configs through analysis and features`, async () => {
  await initCore();
  const seeds = [...collect('examples'), ...collect('test/server/fixtures')].map((p) => ({ path: p, text: readFileSync(p, 'utf8') }));
  assert.ok(seeds.length >= 8, 'too few seed configs');
  const r = rng(SEED);
  const settings = normalizeSettings({ hints: { detail: 'verbose' } });
  const host = createHost(() => undefined);
  const api = core();
  let slow = 0;
  let worst = 0;
  for (let i = 0; i < INPUTS; i++) {
    const seed = seeds[i % seeds.length];
    let text = seed.text;
    const rounds = 1 + Math.floor(r() * 3);
    for (let k = 0; k < rounds; k++) text = mutate(text, r);
    const uri = pathToFileURL(join('/fuzz', seed.path)).toString();
    const t0 = performance.now();
    const where = `input ${i} (seed ${SEED}, ${seed.path})`;
    const a = analyzeDocument({ uri, version: i, text, settings }, host, api);
    const hints = buildInlayHints(a);
    const diags = buildDiagnostics(a);
    const lenses = buildCodeLenses(a);
    const lines = text.split('\n');
    const line = Math.floor(r() * lines.length);
    const pos = { line, character: Math.floor(r() * ((lines[line]?.length ?? 0) + 1)) };
    const hover = buildHover(a, pos, api);
    const actions = buildCodeActions(a, api, diags);
    buildCompletion(a.format, text, pos);
    if (i % 50 === 0) JSON.stringify(buildAnalysisResult(a));
    const ms = performance.now() - t0;
    worst = Math.max(worst, ms);
    if (ms > 100) slow++;
    assert.ok(ms < 2000, `${where} took ${ms.toFixed(0)} ms`);
    check(hints.map((h) => (typeof h.label === 'string' ? h.label : h.label.map((p) => p.value).join(''))), `${where} hint`);
    check(lenses.map((l) => l.command?.title ?? ''), `${where} lens`);
    check(actions.map((c) => c.title), `${where} action`);
    // The first line of a hover echoes the value as written in the file; the rest are ShardLens figures.
    const md = hover && typeof hover.contents === 'object' && 'value' in hover.contents ? hover.contents.value : '';
    check(md.split("\n").slice(1), `${where} hover`);
  }
  console.log(`fuzz: ${INPUTS} inputs from ${seeds.length} seeds, ${slow} over 100 ms, slowest ${worst.toFixed(1)} ms`);
});
