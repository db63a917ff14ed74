/**
 * A training log against the estimate of the config that ran it: the measured step time (or the throughput it follows
 * from) and peak memory per GPU next to ShardLens's figures for the same plan, and the cluster correction that makes
 * the estimate reproduce them (shardlens.calibration: the kernel speed solved in kernelSpeed.ts and the memory the
 * run held beyond the estimate). Pure: the caller reads the log (bounded) and stores the correction.
 */
import type { LogFigure, LogMeasurement } from '../logs/types';
import { parseTrainingLog } from '../logs/parse';
import { applyCalibration, calibrationFor, withoutCalibration, type ClusterCorrection } from '../plan/calibration';
import { gpusOf } from '../time/shape';
import { skippedLogWarning } from '../wording/calibration';
import type { Plan } from '../plan/types';
import { estimateMemory } from '../memory/estimate';
import { estimateStepTime } from '../time/estimate';
import { solveKernelSpeed } from './kernelSpeed';
import { torchReportedPeak } from '../memory/torchView';

const GIB = 2 ** 30;

/** One figure measured and estimated. */
export interface Compared {
  readonly measured: number;
  readonly estimated: number;
  /** (estimated − measured) / measured. */
  readonly error: number;
  /** The log line the measurement came from (1-based) and how it was read. */
  readonly line: number;
  readonly detail: string;
}

export interface LogComparison {
  readonly engine: LogMeasurement['engine'];
  /** Seconds per optimizer step. */
  readonly step?: Compared;
  /**
   * Peak bytes per GPU, reserved when the log gives it, else allocated, against the estimate of the stage whose ranks
   * log it (stage 0, or the largest stage for Megatron, whose every stage reports).
   */
  readonly memory?: Compared & { readonly kind: 'reserved' | 'allocated'; readonly stage: number };
  readonly warnings: readonly string[];
}

const compared = (measured: number, estimated: number, f: LogFigure, detail = f.detail): Compared =>
  ({ measured, estimated, error: (estimated - measured) / measured, line: f.line, detail });

/** Tokens one GPU processes per optimizer step: global batch × sequence length over all GPUs (CP ranks share a sequence). */
function tokensPerGpuPerStep(plan: Plan): number {
  return (plan.training.globalBatch * plan.training.seqLen) / gpusOf(plan);
}

/** The measured seconds per step, from the log's step time or from the throughput it states. */
function measuredStep(plan: Plan, m: LogMeasurement): { seconds: number; figure: LogFigure; detail: string } | undefined {
  if (m.stepSeconds) return { seconds: m.stepSeconds.value, figure: m.stepSeconds, detail: m.stepSeconds.detail };
  const t = m.tokensPerSecondPerGpu;
  if (t && t.value > 0) {
    const tokens = tokensPerGpuPerStep(plan);
    return { seconds: tokens / t.value, figure: t, detail: `${Math.round(tokens).toLocaleString('en-US')} tokens per GPU per step ÷ ${t.detail}` };
  }
  const sp = m.samplesPerSecond;
  if (sp && sp.value > 0) {
    const perStep = sp.scope === 'global' ? plan.training.globalBatch : plan.training.globalBatch / gpusOf(plan);
    return { seconds: perStep / sp.value, figure: sp, detail: `${perStep} sequences per step ÷ ${sp.detail}` };
  }
  return undefined;
}

/**
 * Compares a parsed log with the estimate of `plan` (the config that ran, on the GPUs it ran on). The logged memory is
 * torch's allocator view, so the estimate's `outside` bytes (the CUDA context term of the uncalibrated plan; default
 * `plan`'s) are left out of it (shared/memory/torchView.ts).
 */
export function compareWithLog(plan: Plan, m: LogMeasurement, outside = plan.overhead.cudaContextBytes): LogComparison {
  const warnings = [...m.warnings];
  let step: Compared | undefined;
  const ms = measuredStep(plan, m);
  if (ms) {
    const estimated = estimateStepTime(plan).stepSeconds;
    if (estimated > 0 && Number.isFinite(estimated)) step = compared(ms.seconds, estimated, ms.figure, ms.detail);
    else warnings.push('the config has no step-time estimate to compare with');
  }
  let memory: LogComparison['memory'];
  const mf = m.peakReservedBytes ?? m.peakAllocatedBytes;
  const est = mf ? estimateMemory(plan) : undefined;
  // Megatron prints report_memory on data-parallel rank 0 of every TP and PP rank (megatron/training/utils
  // report_memory) and the reader keeps the largest: the estimate's largest stage. torchtitan's logger and DeepSpeed's
  // see_memory_usage and throughput timer print on global rank 0: pipeline stage 0.
  const stage = est && (m.engine === 'megatron' ? est.peakStage : 0);
  const s = est && stage !== undefined ? est.stages[stage] : undefined;
  if (mf && est && s) {
    const kind = m.peakReservedBytes ? 'reserved' : 'allocated';
    // The logs print torch's allocator figures, which leave out the CUDA context term (shared/memory/torchView.ts).
    const torch = torchReportedPeak(s, outside);
    memory = { ...compared(mf.value, kind === 'reserved' ? torch.reserved : torch.allocated, mf), kind, stage: s.stage };
    if (est.stages.length > 1 && stage !== est.peakStage) {
      const peak = est.stages[est.peakStage];
      warnings.push(`memory compared with pipeline stage ${stage} (the logging rank); stage ${est.peakStage} peaks at ${(peak.peakReservedBytes / GIB).toFixed(1)} GiB reserved`);
    }
  }
  if (!step && !memory) warnings.push('the log gives neither a step time nor peak memory to compare');
  return { engine: m.engine, step, memory, warnings };
}

/**
 * The cluster correction a log supports: the kernel speed that reproduces its step time, and the bytes it held beyond
 * the estimate (never negative: an estimate above the measurement is a modelling error of this config, not a cluster
 * overhead, and it is said instead of being stored). `previous` is the correction already applied to `plan` (by the
 * shardlens.calibration setting): the new one is solved against the catalog's rates, not on top of it.
 */
export function correctionFromLog(
  calibrated: Plan, m: LogMeasurement, clusterId: string, createdAt: string, logName: string, previous?: ClusterCorrection,
): { comparison: LogComparison; correction: ClusterCorrection; after: LogComparison } {
  const plan = withoutCalibration(calibrated, previous);
  const base = compareWithLog(plan, m);
  const warnings = [...base.warnings];
  let efficiency = 1;
  if (base.step) {
    const fit = solveKernelSpeed(plan, base.step.measured);
    if (fit) {
      efficiency = fit.speed;
      warnings.push(...fit.warnings);
    }
  } else warnings.push('no step time to compare: kernel speed left at 1');
  let overheadBytes = 0;
  const mem = base.memory;
  if (mem) {
    if (mem.measured >= mem.estimated) overheadBytes = Math.round(mem.measured - mem.estimated);
    else warnings.push(`the estimate is ${((mem.estimated - mem.measured) / GIB).toFixed(2)} GiB above the measured peak: not stored as a cluster overhead (it is this config's estimate, not the cluster)`);
  } else warnings.push('no peak memory to compare: overhead left at 0');
  const correction: ClusterCorrection = {
    clusterId, overheadBytes, efficiency,
    source: { device: plan.cluster.gpu.name, mode: `training log ${logName}`, worldSize: gpusOf(plan), createdAt, engine: m.engine },
    warnings,
  };
  // What the user sees now (with the stored correction, if any) and what the estimate becomes with the new one.
  // The calibrated plans' context terms also hold the stored overhead: only the uncalibrated context is outside torch's view.
  const outside = plan.overhead.cudaContextBytes;
  const comparison = previous && plan !== calibrated ? compareWithLog(calibrated, m, outside) : base;
  return { comparison, correction, after: compareWithLog(applyCalibration(plan, correction), m, outside) };
}

/** A log's text as read (its end), and how much before it was skipped. */
export interface LogText {
  readonly text: string;
  readonly name: string;
  readonly skippedBytes?: number;
}

/**
 * The whole "calibrate from a training log" step the CLI and the editor share: parse the log, note a skipped start,
 * find the correction already stored for the plan's GPU (`stored`, the shardlens.calibration table), and compare and
 * solve against it. The cluster id is the caller's, else the stored entry's, else the GPU's catalog id.
 */
export function calibrateFromLog(
  plan: Plan, log: LogText, stored: Readonly<Record<string, ClusterCorrection>>, createdAt: string, clusterId?: string,
): { ok: false; error: string } | ({ ok: true; measurement: LogMeasurement; clusterId: string; previous?: ClusterCorrection } & ReturnType<typeof correctionFromLog>) {
  const parsed = parseTrainingLog(log.text);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  const measurement = log.skippedBytes
    ? { ...parsed.measurement, warnings: [...parsed.measurement.warnings, skippedLogWarning(log.skippedBytes, log.text.length)] }
    : parsed.measurement;
  const previous = calibrationFor(plan, stored);
  const id = clusterId ?? previous?.clusterId ?? plan.cluster.gpu.id;
  return { ok: true, measurement, clusterId: id, ...(previous ? { previous } : {}), ...correctionFromLog(plan, measurement, id, createdAt, log.name, previous) };
}
