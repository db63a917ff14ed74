/**
 * Logged numbers and the bounds a measured figure must keep. Engines print with Python formatting, so a number may
 * carry thousands commas (`{:,}`), an exponent (`1.2e+16`) or be `nan`/`inf`; a value outside its bounds (a step time
 * of 0 s, negative bytes, `1e400`) is skipped and counted, and the reader says so once per series.
 */
import { listLines } from './lines';

const GIB = 2 ** 30;

/** The range a figure must fall in to be kept, and how a skipped one is described. */
export interface Bounds {
  /** Values must be above this (or equal to it when `minInclusive`). */
  readonly min: number;
  readonly minInclusive: boolean;
  readonly max: number;
  /** Why a value was skipped, e.g. "0, negative, not a number or over a day". */
  readonly why: string;
}

/** Seconds of one step: above 0 and at most a day. */
export const SECONDS: Bounds = { min: 0, minInclusive: false, max: 86_400, why: '0, negative, not a number or over a day' };
/** Bytes per GPU: 0 to 10 TiB. */
export const BYTES: Bounds = { min: 0, minInclusive: true, max: 10 * 1024 * GIB, why: 'negative, not a number or over 10 TiB' };
/** Tokens or samples per second: above 0 and at most 10¹². */
export const RATE: Bounds = { min: 0, minInclusive: false, max: 1e12, why: '0, negative, not a number or over 10¹²' };

/** One kept value and its 1-based line. */
export interface Sample {
  readonly value: number;
  readonly line: number;
}

/** The values of one logged field, with the lines of those skipped. */
export interface Series {
  /** The field as the log names it, e.g. "elapsed time per iteration (ms)". */
  readonly label: string;
  readonly bounds: Bounds;
  readonly samples: Sample[];
  readonly skippedLines: number[];
}

/** An empty series of one field. */
export function series(label: string, bounds: Bounds): Series {
  return { label, bounds, samples: [], skippedLines: [] };
}

const DECIMAL = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
const INFINITE = /^[-+]?inf(?:inity)?$/i;

/** A logged number as Python prints it (commas allowed); `inf` gives ±Infinity, anything else not a number NaN. */
export function parseLogged(token: string): number {
  const t = token.replace(/,/g, '');
  if (DECIMAL.test(t)) return Number(t);
  if (INFINITE.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  return NaN;
}

/** True when the value is finite and inside the bounds. */
export function within(value: number, b: Bounds): boolean {
  if (!Number.isFinite(value) || value > b.max) return false;
  return b.minInclusive ? value >= b.min : value > b.min;
}

/** Adds `token × scale` to the series when it keeps the bounds, else records the line as skipped. */
export function addValue(s: Series, token: string, scale: number, line: number): boolean {
  const value = parseLogged(token) * scale;
  if (within(value, s.bounds)) {
    s.samples.push({ value, line });
    return true;
  }
  s.skippedLines.push(line);
  return false;
}

/** One warning per series with skipped values. */
export function skippedWarnings(list: readonly Series[]): string[] {
  return list.filter((s) => s.skippedLines.length > 0).map((s) => {
    const n = s.skippedLines.length;
    return `Skipped ${n} ${s.label} value${n === 1 ? ' that was' : 's that were'} ${s.bounds.why} (${listLines(s.skippedLines)}).`;
  });
}
