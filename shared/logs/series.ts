/**
 * From logged values to one figure. A time or rate is the median of the steady-state lines: the first logged lines
 * are warm-up (compilation, allocator growth, data-loader start) and are skipped. A memory figure is the peak: the
 * largest value logged, since each engine logs a peak since its last report.
 */
import type { LogFigure } from './types';
import type { Series } from './values';

/** How many of the first logged lines are warm-up: only the first, or at least the first 10 % (and at least 1). */
export type Warmup = 'first' | 'tenth';

/** A steady-state figure, the lines it rests on and what makes it doubtful. */
export interface Steady {
  readonly figure: LogFigure;
  readonly steps: number;
  readonly warnings: readonly string[];
}

/** Fewer usable lines than this make a figure rough. */
const ENOUGH = 3;

/** "1 step", "18 steps". */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** Warm-up lines to skip out of n logged. */
export function warmupCount(n: number, warmup: Warmup): number {
  return warmup === 'first' ? 1 : Math.max(1, Math.ceil(0.1 * n));
}

/** The median of sorted values (the mean of the middle two for an even count). */
function medianOf(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * The median of a series after its warm-up lines, `noun` naming one logged line ("step", "iteration") and `what` the
 * field with its unit and meaning. When the only line logged is a warm-up one, it is used and flagged.
 */
export function steadyMedian(s: Series, warmup: Warmup, noun: string, what: string): Steady | undefined {
  const n = s.samples.length;
  if (n === 0) return undefined;
  const skip = warmupCount(n, warmup);
  if (n <= skip) {
    // Only when a single line was logged: every rule skips fewer lines than it is given from two on.
    const last = s.samples[n - 1];
    return {
      figure: { value: last.value, line: last.line, detail: `the only logged ${noun}, a warm-up ${noun}, ${what}` },
      steps: n,
      warnings: [`Only one ${noun} of ${s.label} was logged, a warm-up one: the figure includes warm-up (compilation, allocator growth) and is rough.`],
    };
  }
  const used = s.samples.slice(skip);
  const line = used.reduce((m, x) => Math.max(m, x.line), 0);
  const value = medianOf(used.map((x) => x.value));
  const detail = `median of ${count(used.length, `logged ${noun}`)} after ${count(skip, `warm-up ${noun}`)}, ${what}`;
  const warnings = used.length < ENOUGH
    ? [`Only ${count(used.length, `logged ${noun}`)} of ${s.label} after warm-up: the figure is rough.`]
    : [];
  return { figure: { value, line, detail }, steps: used.length, warnings };
}

/** The largest value over several series (the first logged wins a tie), with `what` naming its unit and meaning. */
export function peakOf(list: readonly Series[], what: string): LogFigure | undefined {
  let best: { value: number; line: number } | undefined;
  let n = 0;
  for (const s of list) {
    for (const x of s.samples) {
      n++;
      if (!best || x.value > best.value || (x.value === best.value && x.line < best.line)) best = x;
    }
  }
  if (!best) return undefined;
  const labels = list.filter((s) => s.samples.length > 0).map((s) => `'${s.label}'`).join(' and ');
  return { value: best.value, line: best.line, detail: `largest of ${count(n, 'logged value')} of ${labels}, ${what}` };
}
