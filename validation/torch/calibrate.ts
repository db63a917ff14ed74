/**
 * "Calibrate": a per-cluster correction derived from a probe report and the estimate it was compared with. Pure: it
 * returns the correction and the settings value it would write; applying it to later plans is `applyCalibration`.
 */
import type { ClusterCorrection } from '../../shared/plan/calibration';
import type { ProbeReport } from './types';

import { CALIBRATION_SETTING } from '../../shared/plan/calibration';

export { applyCalibration, CALIBRATION_SETTING, type ClusterCorrection } from '../../shared/plan/calibration';


export interface CalibrationInput {
  readonly report: ProbeReport;
  /** The estimate's peak allocated bytes per rank for the comparable plan (max over stages). */
  readonly estimatedPeakAllocatedBytes?: number;
  /** The estimate's step time for the comparable plan, seconds. */
  readonly estimatedStepSeconds?: number;
  readonly clusterId: string;
}

export type SettingsValue = Readonly<Record<string, ClusterCorrection>>;

const finitePositive = (x: number | undefined): x is number => typeof x === 'number' && Number.isFinite(x) && x > 0;

/** Computes the correction and the new settings value (the existing value with this cluster's entry replaced). */
export function calibrate(input: CalibrationInput, existing: SettingsValue = {}): { correction: ClusterCorrection; setting: { key: string; value: SettingsValue } } {
  const { report } = input;
  const warnings: string[] = [];
  const okRanks = report.ranks.filter((r) => r.ok);
  if (!report.ok || okRanks.length === 0) warnings.push('the report has failed ranks; the correction is neutral');
  if (report.device === 'cpu') warnings.push('measured on CPU ranks (a stand-in): GPU overhead and speed are not represented');
  const peaks = okRanks.map((r) => r.peakAllocatedBytes).filter(finitePositive);
  const measuredPeak = peaks.length ? Math.max(...peaks) : undefined;
  let overheadBytes = 0;
  if (measuredPeak !== undefined && finitePositive(input.estimatedPeakAllocatedBytes)) {
    overheadBytes = Math.max(0, Math.round(measuredPeak - input.estimatedPeakAllocatedBytes));
  } else warnings.push('no peak memory to compare: overhead left at 0');
  const steps = okRanks.map((r) => r.stepSeconds).filter(finitePositive);
  // The slowest rank sets the step time of a synchronous data-parallel step.
  const measuredStep = steps.length ? Math.max(...steps) : undefined;
  let efficiency = 1;
  if (measuredStep !== undefined && finitePositive(input.estimatedStepSeconds)) {
    efficiency = Math.min(10, Math.max(0.05, input.estimatedStepSeconds / measuredStep));
  } else warnings.push('no step time to compare: efficiency left at 1');
  const correction: ClusterCorrection = {
    clusterId: input.clusterId, overheadBytes, efficiency,
    source: { device: report.device, mode: report.mode, worldSize: report.worldSize, createdAt: report.createdAt, engine: `${report.engine.name} ${report.engine.versions.torch ?? ''}`.trim() },
    warnings,
  };
  return { correction, setting: { key: CALIBRATION_SETTING, value: { ...existing, [input.clusterId]: correction } } };
}
