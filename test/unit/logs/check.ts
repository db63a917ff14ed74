/**
 * One check for every log case: the parser's result against figures written out by hand from the log text.
 */
import assert from 'node:assert/strict';
import { parseTrainingLog } from '../../../shared/logs/parse';
import type { LogEngine, LogMeasurement } from '../../../shared/logs/types';

export const GIB = 2 ** 30;
export const MIB = 2 ** 20;

type FigureKey = 'stepSeconds' | 'tokensPerSecondPerGpu' | 'samplesPerSecond' | 'peakReservedBytes' | 'peakAllocatedBytes';
const FIGURES: readonly FigureKey[] = ['stepSeconds', 'tokensPerSecondPerGpu', 'samplesPerSecond', 'peakReservedBytes', 'peakAllocatedBytes'];

/** What a log must give; a figure not named must be absent. */
export interface Expect {
  readonly engine: LogEngine;
  readonly figures: Partial<Record<FigureKey, number>>;
  /** The 1-based line each named figure comes from. */
  readonly lines?: Partial<Record<FigureKey, number>>;
  /** Text each named figure's detail must hold. */
  readonly details?: Partial<Record<FigureKey, RegExp>>;
  readonly scope?: 'global' | 'per-gpu';
  readonly steps?: number;
  /** Each must match one warning. */
  readonly warnings?: readonly RegExp[];
  /** None may match any warning. */
  readonly noWarnings?: readonly RegExp[];
}

/** The measurement of a log that must parse. */
export function measure(log: string): LogMeasurement {
  const r = parseTrainingLog(log);
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.measurement;
}

/** Parses the log and checks every expectation (figures to a relative 1e-12). */
export function check(log: string, e: Expect): LogMeasurement {
  const m = measure(log);
  const why = JSON.stringify(m, null, 1);
  assert.equal(m.engine, e.engine, why);
  for (const key of FIGURES) {
    const want = e.figures[key];
    const got = m[key];
    if (want === undefined) { assert.equal(got, undefined, `${key} should be absent: ${why}`); continue; }
    assert.ok(got, `${key} missing: ${why}`);
    assert.ok(Math.abs(got.value - want) <= 1e-12 * Math.abs(want), `${key}: ${got.value} ≠ ${want}: ${why}`);
    const line = e.lines?.[key];
    if (line !== undefined) assert.equal(got.line, line, `${key} line: ${why}`);
    const detail = e.details?.[key];
    if (detail) assert.match(got.detail, detail);
  }
  if (e.scope) assert.equal(m.samplesPerSecond?.scope, e.scope);
  if (e.steps !== undefined) assert.equal(m.steps, e.steps, why);
  for (const w of e.warnings ?? []) assert.ok(m.warnings.some((x) => w.test(x)), `no warning ${w}: ${why}`);
  for (const w of e.noWarnings ?? []) assert.ok(!m.warnings.some((x) => w.test(x)), `unexpected warning ${w}: ${why}`);
  return m;
}

/** The error of a log that must not parse. */
export function failure(log: string): string {
  const r = parseTrainingLog(log);
  assert.equal(r.ok, false, JSON.stringify(r));
  return r.ok ? '' : r.error;
}
