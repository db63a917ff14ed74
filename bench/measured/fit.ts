/**
 * Fitting the step-time model's free parameters (shared/time/params.ts) to published runs, in the open: minimise the
 * mean over sources of the mean squared log error of tokens/s/GPU (each source weighs the same, whatever its row
 * count), with a weak pull towards the priors; and the leave-one-source-out report (fit without a source, predict it).
 */
import { PARAM_NAMES, type FittedParamName, type TimeParams } from '../../shared/time/params';
import { errorsOf, type MeasuredRun } from './runs';
import { nelderMead } from './nelderMead';

/** Priors (data/time/fitted.json comments) and the physical range each parameter is kept in. */
export const PRIORS: TimeParams = { gemmScale: 0.95, attentionScale: 1, memoryFraction: 0.7, kernelGap: 2e-6, overlapCost: 0.1, stepOverhead: 0.02 };
const RANGE: Readonly<Record<FittedParamName, readonly [number, number]>> = {
  gemmScale: [0.5, 1.1], attentionScale: [0.3, 1.3], memoryFraction: [0.25, 0.95], kernelGap: [0, 2e-5], overlapCost: [0, 0.6], stepOverhead: [0, 0.5],
};
/** Nelder–Mead evaluations of one fit: the full fit and every leave-one-source-out fold (bench and fit script alike). */
export const FIT_EVALS = 600;
/** Weight of the pull towards the priors, per parameter, in units of its range squared. */
const RIDGE = 0.002;

/** Parameters from unconstrained coordinates: each maps into its range through a logistic. */
function paramsOf(x: readonly number[]): TimeParams {
  const out: Record<string, number> = {};
  PARAM_NAMES.forEach((k, i) => {
    const [lo, hi] = RANGE[k];
    out[k] = lo + (hi - lo) / (1 + Math.exp(-x[i]));
  });
  return out as unknown as TimeParams;
}

/** Unconstrained coordinates of a parameter set. */
function coordsOf(p: TimeParams): number[] {
  return PARAM_NAMES.map((k) => {
    const [lo, hi] = RANGE[k];
    const u = Math.min(1 - 1e-6, Math.max(1e-6, (p[k] - lo) / (hi - lo)));
    return Math.log(u / (1 - u));
  });
}

/** The objective: mean over sources of mean squared log(predicted/measured), plus the ridge to the priors. */
export function objective(runs: readonly MeasuredRun[], params: TimeParams): number {
  const errs = errorsOf(runs, params);
  const bySource = new Map<string, number[]>();
  runs.forEach((r, i) => {
    const e = Math.log(Math.max(1e-6, 1 + errs[i]));
    bySource.set(r.case.source, [...(bySource.get(r.case.source) ?? []), e * e]);
  });
  let loss = 0;
  for (const v of bySource.values()) loss += v.reduce((a, b) => a + b, 0) / v.length;
  loss /= Math.max(1, bySource.size);
  for (const k of PARAM_NAMES) {
    const [lo, hi] = RANGE[k];
    loss += RIDGE * ((params[k] - PRIORS[k]) / (hi - lo)) ** 2;
  }
  return loss;
}

/** Fits the parameters on `runs` from the priors (or `start`). */
export function fitParams(runs: readonly MeasuredRun[], start: TimeParams = PRIORS, maxEvals = FIT_EVALS): { params: TimeParams; loss: number; evals: number } {
  const r = nelderMead((x) => objective(runs, paramsOf(x)), coordsOf(start), PARAM_NAMES.map(() => 0.6), maxEvals);
  return { params: paramsOf(r.x), loss: r.value, evals: r.evals };
}

/** Median and maximum of |x|. */
export function medianMax(xs: readonly number[]): { median: number; max: number } {
  const a = xs.map(Math.abs).sort((p, q) => p - q);
  if (!a.length) return { median: 0, max: 0 };
  const mid = a.length >> 1;
  return { median: a.length % 2 ? a[mid] : (a[mid - 1] + a[mid]) / 2, max: a[a.length - 1] };
}

export interface LosoRow {
  readonly source: string;
  readonly rows: number;
  /** Errors of the held-out source's rows, predicted with parameters fitted without them. */
  readonly errors: readonly number[];
  readonly params: TimeParams;
}

/**
 * Leave-one-source-out: for every source, fit on the others and predict it. Each fold starts from the priors: the
 * shipped parameters were fitted on every row, so starting there would carry the held-out rows into the fold.
 */
export function leaveOneSourceOut(runs: readonly MeasuredRun[], start: TimeParams = PRIORS, maxEvals = FIT_EVALS): LosoRow[] {
  const sources = [...new Set(runs.map((r) => r.case.source))];
  return sources.map((source) => {
    const train = runs.filter((r) => r.case.source !== source);
    const test = runs.filter((r) => r.case.source === source);
    const { params } = fitParams(train, start, maxEvals);
    return { source, rows: test.length, errors: errorsOf(test, params), params };
  });
}
