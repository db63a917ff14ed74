/**
 * The few free parameters of the step-time model, fitted in the open to published runs (data/time/fitted.json,
 * scripts/fit-time-model.ts, docs/time-model.md §Calibration). Everything else comes from datasheets, published kernel
 * curves or first principles. A TimeCache (shared/time/cache.ts) carries one parameter set; the fit and the
 * leave-one-source-out report of `npm run bench` evaluate others.
 */
import fitted from '../../data/time/fitted.json';
import moeHost from '../../data/time/moeHost.json';

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
  /**
   * Host seconds a MoE layer's forward adds per micro-batch where the host launches it (shared/time/moeHost.ts):
   * fitted apart from the six above, on MoE rows (data/time/moeHost.json); absent or 0 charges nothing.
   */
  readonly moeHostSeconds?: number;
}

/** The six parameters the joint fit varies (moeHostSeconds has its own fit). */
export type FittedParamName = Exclude<keyof TimeParams, 'moeHostSeconds'>;

/** Names of the jointly fitted parameters, in the order the fit varies them. */
export const PARAM_NAMES: readonly FittedParamName[] = ['gemmScale', 'attentionScale', 'memoryFraction', 'kernelGap', 'overlapCost', 'stepOverhead'];

/** The shipped parameters (the last full fit, and the MoE host constant's own fit). */
export const FITTED_PARAMS: TimeParams = { ...fitted.params, moeHostSeconds: moeHost.value };

/** Where the shipped parameters come from, for provenance lines. */
export const FIT_PROVENANCE = 'fitted to published runs (data/time/fitted.json, docs/time-model.md)';
