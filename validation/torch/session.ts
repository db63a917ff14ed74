/**
 * One call for the CLI and the extension: export the plan, run the probe, estimate the same (scaled) plan with the
 * core, compare per rank and per term, and attach the estimates to the report.
 */
import { estimateMemory } from '../../shared/memory/estimate';
import type { Plan } from '../../shared/plan/types';
import { compareReport, coreRankEstimate, withEstimates, type ProbeComparison } from './compare';
import { exportProbePlan, isExportProblem } from './exportPlan';
import { availableParallelism } from 'node:os';
import { chooseRanks, isProbeFailure, runProbe, type RunProbeOptions } from './launch';
import { findPython } from './python';
import type { ProbeFailure, ProbeReport } from './types';

export interface ProbeOutcome {
  readonly ok: true;
  readonly report: ProbeReport;
  readonly comparison: ProbeComparison;
  /** What the export changed (scaling, batch, layout), as sentences. */
  readonly notes: readonly string[];
}

/** Runs and compares; every failure (no torch, bad layout, failed ranks, cancel) comes back as a ProbeFailure. */
export async function probeAndCompare(opts: RunProbeOptions & { readonly plan: Plan }): Promise<ProbeOutcome | ProbeFailure> {
  const py = await findPython(opts.python);
  if (!py.ok) return { ok: false, kind: 'shardlens-probe-failure', code: py.code, message: py.message };
  const ranks = chooseRanks(opts.ranks, { gpus: py.info.gpus, cpus: availableParallelism() }, opts.oversubscribe);
  if (typeof ranks !== 'number') return { ok: false, kind: 'shardlens-probe-failure', code: 'too-many-ranks', message: ranks.error };
  const exported = exportProbePlan(opts.plan, { ...opts.export, ranks, mode: opts.mode, deepspeedAvailable: !!py.info.deepspeed });
  if (isExportProblem(exported)) return { ok: false, kind: 'shardlens-probe-failure', code: exported.code, message: exported.message };
  const out = await runProbe({ ...opts, ranks, plan: exported.probePlan, python: py.info.python, mode: undefined });
  if (isProbeFailure(out)) return out;
  let core;
  try {
    const est = estimateMemory(exported.comparablePlan);
    core = est.stages.length ? coreRankEstimate(est.stages[0]) : undefined;
  } catch {
    core = undefined; // The core never throws by contract; first principles are the fallback if it ever does.
  }
  const comparison = compareReport(out, { core });
  const notes = [exported.probePlan.scaling.note, ...exported.notes, ...comparison.notes];
  return { ok: true, report: withEstimates(out, comparison), comparison, notes };
}
