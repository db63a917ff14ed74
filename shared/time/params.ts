/**
 * The few free parameters of the step-time model, fitted in the open to published runs (data/time/fitted.json,
 * scripts/fit-time-model.ts, docs/time-model.md §Calibration). Everything else comes from datasheets, published kernel
 * curves or first principles. A TimeCache (shared/time/cache.ts) carries one parameter set; the fit and the
 * leave-one-source-out report of `npm run bench` evaluate others.
 */
import fitted from '../../data/time/fitted.json';

export interface TimeParams {
  /** Sustained fraction of the GEMM curve's rate during training. */
  readonly gemmScale: number;
  /** Sustained fraction of the fused-attention curves' rate. */
  readonly attentionScale: number;
  /** Fraction of HBM bandwidth memory-bound kernels reach. */
  readonly memoryFraction: number;
  /** Seconds between two consecutive kernels. */
  readonly kernelGap: number;
  /** Share of an overlapped communication's time that still slows compute. */
  readonly overlapCost: number;
  /** Seconds per optimizer step outside the modelled kernels. */
  readonly stepOverhead: number;
}

/** Names of the parameters, in the order the fit varies them. */
export const PARAM_NAMES: readonly (keyof TimeParams)[] = ['gemmScale', 'attentionScale', 'memoryFraction', 'kernelGap', 'overlapCost', 'stepOverhead'];

/** The shipped parameters (the last full fit). */
export const FITTED_PARAMS: TimeParams = fitted.params;

/** Where the shipped parameters come from, for provenance lines. */
export const FIT_PROVENANCE = 'fitted to published runs (data/time/fitted.json, docs/time-model.md)';
