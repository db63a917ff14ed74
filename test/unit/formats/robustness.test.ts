/**
 * Broken and half-typed input: every example file truncated and mutated (deterministic seed) is read
 * without throwing, with finite numbers and well-formed ranges, and resolvePlan never throws either. One mutated plan
 * in three also runs the memory and step-time estimates and the step simulator: finite figures, and a simulation the
 * server can send (it turns into JSON of bounded size: a long accumulation once made one too large for a string).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { FormatId } from '../../../shared/plan/facts';
import { detectFormat, initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { rng } from '../../../shared/random';
import { configFiles } from './helpers';
import { estimateMemory } from '../../../shared/memory/estimate';
import { estimateStepTime } from '../../../shared/time/estimate';
import { simulateStep } from '../../../shared/sim/simulate';

const ROOT = resolve(__dirname, '../../../examples');


const JUNK = ['"', '{', '}', '[', ']', ':', '\n', '\\', '$', '$((', '${', '=', '-', '#', ' ', '\t', 'auto', '1e999', '-1', '0', 'NaN', '<<EOF\n',
  // Digits next to a number make it huge (a global batch of millions: long steps).
  '99999', '000'];

function mutate(text: string, r: () => number): string {
  let t = text;
  const n = 1 + Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(r() * (t.length + 1));
    const op = r();
    if (op < 0.4) t = t.slice(0, at) + JUNK[Math.floor(r() * JUNK.length)] + t.slice(at);
    else if (op < 0.8) t = t.slice(0, at) + t.slice(at + 1 + Math.floor(r() * 20));
    else t = t.slice(0, at);
  }
  return t;
}

let checked = 0;

function check(path: string, text: string, fmt: FormatId): void {
  const f = parseConfig(path, text, fmt);
  for (const [k, fact] of Object.entries(f.facts)) {
    if (typeof fact.value === 'number') assert.ok(Number.isFinite(fact.value), `${k} finite`);
    const r = fact.source.range;
    if (r) assert.ok(r.start.line >= 0 && r.start.character >= 0 && (r.end.line > r.start.line || (r.end.line === r.start.line && r.end.character >= r.start.character)), `${k} range`);
  }
  for (const d of f.diagnostics) assert.ok(d.range.start.line >= 0);
  const res = resolvePlan(f, [], { settings: { worldSize: 8 } });
  if (res.plan) for (const v of [res.plan.training.microBatch, res.plan.training.globalBatch, res.plan.parallel.dp]) assert.ok(Number.isFinite(v) && v > 0);
  if (res.plan && checked++ % 3 === 0) {
    const mem = estimateMemory(res.plan);
    for (const st of mem.stages) assert.ok(Number.isFinite(st.peakReservedBytes) && st.peakReservedBytes >= 0, 'peak finite');
    const time = estimateStepTime(res.plan);
    assert.ok(Number.isFinite(time.stepSeconds) && time.stepSeconds >= 0, 'step finite');
    const sim = simulateStep(res.plan);
    if (sim.ok) {
      assert.ok(sim.stepSeconds > 0 && Number.isFinite(sim.stepSeconds), 'simulated step finite');
      assert.ok(JSON.stringify(sim).length < 16e6, 'the simulation stays small enough to send');
    }
  }
}

describe('broken input never throws', () => {
  before(async () => { await initFormats(); });
  for (const path of configFiles(ROOT)) {
    test(path.slice(ROOT.length + 1), () => {
      const text = readFileSync(path, 'utf8');
      const fmt = detectFormat(path, text)!;
      assert.ok(fmt);
      for (let cut = 0; cut <= text.length; cut += Math.max(1, Math.floor(text.length / 40))) check(path, text.slice(0, cut), fmt);
      const r = rng(text.length);
      for (let i = 0; i < 60; i++) check(path, mutate(text, r), fmt);
      for (let i = 0; i < 5; i++) assert.doesNotThrow(() => detectFormat(path, mutate(text, r)));
    });
  }
});
