/**
 * The run's length from its planned optimizer steps and the step time: wall-clock = steps × step time, GPU-hours =
 * wall-clock × GPUs / 3,600 s. Only the steps themselves: evaluation, checkpoints, data-loading stalls, start-up and
 * restarts are not in it, and every surface says so.
 */
import type { Plan } from '../plan/types';
import { formatSeconds } from '../units';
import { gpusOf } from '../time/shape';

export interface RunLength {
  readonly steps: number;
  readonly stepSeconds: number;
  /** steps × step time. */
  readonly seconds: number;
  readonly gpus: number;
  /** seconds × GPUs / 3600. */
  readonly gpuHours: number;
}

/** What a run length leaves out, for tooltips and hovers. */
export const RUN_LENGTH_SCOPE = 'the steps only: no evaluation, checkpoints, data-loading stalls, start-up or restarts';

/** The run length of a plan whose file states its steps, or undefined (no steps, or no finite step time). */
export function runLength(plan: Plan | undefined, stepSeconds: number | undefined): RunLength | undefined {
  const t = plan?.stated?.training;
  // Megatron-LM's train_iters = train_samples // global_batch_size without batch-size ramp-up (megatron/training/training.py).
  const samples = t?.samples;
  const steps = t?.steps ?? (samples !== undefined && plan && plan.training.globalBatch >= 1 ? Math.floor(samples / plan.training.globalBatch) : undefined);
  if (!plan || steps === undefined || !(steps >= 1) || stepSeconds === undefined || !(stepSeconds > 0) || !Number.isFinite(stepSeconds)) return undefined;
  const gpus = gpusOf(plan);
  const seconds = steps * stepSeconds;
  return { steps, stepSeconds, seconds, gpus, gpuHours: (seconds * gpus) / 3600 };
}

/** A duration as "45.0 s", "12 min", "8.00 h", "3.20 days" or "4.9 years". */
export function formatDuration(s: number): string {
  if (!(s >= 0) || !Number.isFinite(s)) return '—';
  if (s < 60) return formatSeconds(s);
  if (s < 3600) return `${(s / 60).toFixed(s < 600 ? 1 : 0)} min`;
  if (s < 2 * 86400) return `${(s / 3600).toFixed(s < 36000 ? 2 : 1)} h`;
  if (s < 365 * 86400) return `${(s / 86400).toFixed(s < 864000 ? 2 : 1)} days`;
  return `${(s / (365.25 * 86400)).toFixed(1)} years`;
}

/** GPU-hours as "21.3 GPU-hours" or "1.2 M GPU-hours". */
export function formatGpuHours(h: number): string {
  if (h >= 1e6) return `${(h / 1e6).toFixed(2)} M GPU-hours`;
  if (h >= 1e4) return `${Math.round(h).toLocaleString('en-US')} GPU-hours`;
  return `${h.toPrecision(3)} GPU-hours`;
}

/** "1,000 steps ≈ 2.67 h". */
export function runShort(r: RunLength): string {
  return `${r.steps.toLocaleString('en-US')} steps ≈ ${formatDuration(r.seconds)}`;
}

/** "1,000 steps × 9.60 s ≈ 2.67 h on 8 GPUs = 21.3 GPU-hours". */
export function runLine(r: RunLength): string {
  return `${r.steps.toLocaleString('en-US')} steps × ${formatSeconds(r.stepSeconds)} ≈ ${formatDuration(r.seconds)} on ${r.gpus.toLocaleString('en-US')} GPU${r.gpus === 1 ? '' : 's'} = ${formatGpuHours(r.gpuHours)}`;
}
