/**
 * The kernel speed of a cluster, solved from one measured step: the factor s by which every modelled kernel (GEMMs,
 * attention, memory-bound) must be sped up for the estimate of the measured plan to equal the measured step time.
 * Step time falls monotonically as s grows (each kernel's time is divided by s; collectives and host gaps stay), so
 * bisection on log s finds it; a measurement faster than the estimate with instant kernels cannot be reached by kernel
 * speed alone, and one more than 20× away from the model is not a cluster property: both are clamped and said.
 */
import type { Plan } from '../plan/types';
import { estimateStepTime } from '../time/estimate';

/** Bounds of a stored speed (shared/plan/calibration.ts normalizeCalibration accepts (0, 10]). */
export const MIN_SPEED = 0.05;
export const MAX_SPEED = 10;

/** The plan with its kernels at `speed` × the catalog's rates (a new cluster object: time caches key on identity). */
export function withKernelSpeed(plan: Plan, speed: number): Plan {
  return { ...plan, cluster: { ...plan.cluster, gpu: { ...plan.cluster.gpu, kernelSpeed: speed } } };
}

export interface KernelSpeedFit {
  /** The speed to store (clamped to [MIN_SPEED, MAX_SPEED]). */
  readonly speed: number;
  /** The estimate's step time at the catalog's rates and at `speed`, seconds. */
  readonly estimatedSeconds: number;
  readonly calibratedSeconds: number;
  readonly warnings: readonly string[];
}

/** Solves the kernel speed for one measured step time (seconds, > 0), or undefined when the plan has no step time. */
export function solveKernelSpeed(plan: Plan, measuredSeconds: number): KernelSpeedFit | undefined {
  const step = (s: number): number => estimateStepTime(withKernelSpeed(plan, s)).stepSeconds;
  const estimated = step(1);
  if (!(estimated > 0) || !Number.isFinite(estimated) || !(measuredSeconds > 0) || !Number.isFinite(measuredSeconds)) return undefined;
  const warnings: string[] = [];
  const lo0 = step(MAX_SPEED), hi0 = step(MIN_SPEED);
  if (measuredSeconds <= lo0) {
    warnings.push(`the measured step (${measuredSeconds.toPrecision(3)} s) is shorter than the estimate with kernels ${MAX_SPEED}× faster `
      + `(${lo0.toPrecision(3)} s): what is left is communication and host time the kernel speed does not change; the speed is capped at ${MAX_SPEED}×`);
    return { speed: MAX_SPEED, estimatedSeconds: estimated, calibratedSeconds: lo0, warnings };
  }
  if (measuredSeconds >= hi0) {
    warnings.push(`the measured step (${measuredSeconds.toPrecision(3)} s) is longer than the estimate with kernels at ${MIN_SPEED}× `
      + `(${hi0.toPrecision(3)} s): the run is held up by something other than kernels (data loading, checkpoints, failures); the speed is floored`);
    return { speed: MIN_SPEED, estimatedSeconds: estimated, calibratedSeconds: hi0, warnings };
  }
  // Bisection on log s: 40 halvings of a 200× range leave the step within 1e-9 of its bracket.
  let a = Math.log(MIN_SPEED), b = Math.log(MAX_SPEED);
  for (let i = 0; i < 40; i++) {
    const mid = (a + b) / 2;
    if (step(Math.exp(mid)) > measuredSeconds) a = mid;
    else b = mid;
  }
  const speed = Math.exp((a + b) / 2);
  if (speed < 0.5 || speed > 2) {
    warnings.push(`kernels ${speed.toFixed(2)}× the model's speed: check that the log and the config describe the same run `
      + '(GPU, batch, sequence length, precision) before saving it as a property of this cluster');
  }
  return { speed, estimatedSeconds: estimated, calibratedSeconds: step(speed), warnings };
}
