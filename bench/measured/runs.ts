/**
 * The published runs of data/calibration/measured-runs.json, each read through the CLI's own path (cli/load.ts: the
 * format reader, the resolver, `--gpus` and `--model` as the case says) into the Plan the estimators see.
 */
import { resolve } from 'node:path';
import data from '../../data/calibration/measured-runs.json';
import { loadConfig } from '../../cli/load';
import type { Plan } from '../../shared/plan/types';
import { estimateStepTime } from '../../shared/time/estimate';
import { TimeCache } from '../../shared/time/cache';
import type { TimeParams } from '../../shared/time/params';

export interface MeasuredCase {
  readonly id: string;
  readonly source: string;
  readonly file: string;
  readonly gpus: string;
  readonly model?: string;
  readonly measured: number;
  readonly unit: string;
}

export interface MeasuredRun {
  readonly case: MeasuredCase;
  readonly plan: Plan;
}

export const CASES: readonly MeasuredCase[] = data.cases as MeasuredCase[];
const ROOT = resolve(__dirname, '../../data/calibration');

/** Resolves every case's plan; a case the pipeline cannot read is reported, not dropped silently. */
export async function loadRuns(): Promise<{ runs: MeasuredRun[]; failures: string[] }> {
  const runs: MeasuredRun[] = [];
  const failures: string[] = [];
  for (const c of CASES) {
    const flags: Record<string, string> = { gpus: c.gpus };
    if (c.model) flags.model = c.model;
    try {
      const loaded = await loadConfig(resolve(ROOT, c.file), flags);
      const plan = loaded.resolved.plan;
      if (plan) runs.push({ case: c, plan });
      else failures.push(`${c.id}: no plan (${loaded.resolved.problems.map((p) => p.message).join('; ')})`);
    } catch (e) {
      failures.push(`${c.id}: ${(e as Error).message}`);
    }
  }
  return { runs, failures };
}

/** Predicted tokens/s/GPU of a plan: global batch × sequence / (step seconds × world size). */
export function predictedTokensPerGpu(plan: Plan, cache: TimeCache): number {
  const est = estimateStepTime(plan, cache);
  const world = plan.parallel.dp * plan.parallel.tp * plan.parallel.pp * plan.parallel.cp;
  return est.stepSeconds > 0 ? (plan.training.globalBatch * plan.training.seqLen) / (est.stepSeconds * world) : 0;
}

/** Relative error (predicted − measured) / measured of every run under a parameter set. */
export function errorsOf(runs: readonly MeasuredRun[], params: TimeParams): number[] {
  return runs.map((r) => predictedTokensPerGpu(r.plan, new TimeCache(params)) / r.case.measured - 1);
}
