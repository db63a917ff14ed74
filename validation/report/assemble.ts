/** Assembles the full validation report (or an error report) from the runner's pieces. */
import type { Layout } from '../model/layout';
import type { ScaledModel } from '../model/scale';
import { initUnit } from '../model/init';
import type { RankModeResult } from '../train/trainer';
import { estimateMode } from '../estimate/expected';
import type { RunnerJob } from '../runner/main';
import type { BackendName, BackendProbe, ModeRun, ValidationCheck, ValidationMode, ValidationReport } from '../types';
import { buildModeRun } from './build';

/** The initial unpadded parameters, as every rank creates them. */
function initialParams(layout: Layout, seed: number): Float32Array {
  const out = new Float32Array(layout.parameters);
  let at = 0;
  layout.units.forEach((u, i) => {
    out.set(initUnit(u, seed, i).subarray(0, u.size), at);
    at += u.size;
  });
  return out;
}

const NOTES = [
  'Tensor bytes are tf.memory() deltas of the tfjs engine of each rank (logical bytes, not a CUDA allocator).',
  'Bytes sent are counted at the sender of each ring step (reduce-scatter and all-gather send (N−1)/N of the buffer each).',
  'The tfjs tape peak is tf.profile() peakBytes of the last step; tfjs keeps every intermediate of a unit’s recomputed forward, so it is not forced to agree with the activation estimate.',
  'Backward recomputes each unit from its input (activation checkpoints at unit boundaries), so ZeRO-3 gathers every unit once in forward and once in backward.',
  'JavaScript Float32Array buffers of the collectives are outside tf.memory(); the largest one per rank is reported separately.',
];

export interface AssembleInput {
  readonly job: RunnerJob;
  readonly started: number;
  readonly probes: readonly BackendProbe[];
  readonly backend: BackendName;
  readonly label: string;
  readonly scaled: ScaledModel;
  readonly layout: Layout;
  readonly results: ReadonlyMap<ValidationMode, RankModeResult[]>;
  readonly constants: readonly number[];
}

export function assembleReport(a: AssembleInput): ValidationReport {
  const { job, scaled, layout } = a;
  const init = initialParams(layout, job.seed);
  const ddp = a.results.get('ddp');
  const reference = ddp?.[0] ? { init, final: ddp[0].params } : null;
  const runs: ModeRun[] = [];
  const checks: ValidationCheck[] = [];
  let sources: readonly string[] = [];
  for (const mode of job.modes) {
    const got = a.results.get(mode);
    if (!got) continue;
    const est = estimateMode(job.plan, scaled.model, scaled.seqLen, scaled.microBatch, job.ranks, mode);
    sources = est.sources;
    checks.push({
      id: `${mode}.parameters`, label: 'Ψ of the scaled model: runner tensors vs the core’s parameter count', mode,
      passed: est.parameters === layout.parameters, measured: layout.parameters, expected: est.parameters, detail: 'shared/model/params.ts countParams',
    });
    const built = buildModeRun(mode, layout, got, a.constants, est, reference);
    runs.push(built.run);
    checks.push(...built.checks);
  }
  const failed = checks.some((c) => c.passed === false);
  return {
    kind: 'shardlens-validation', version: 1, status: failed ? 'failed-checks' : 'ok',
    backend: a.backend, backendLabel: a.label, backends: a.probes,
    parameters: layout.parameters, scaling: scaled.scaling,
    ranks: job.ranks, steps: job.steps, modes: job.modes, runs, checks,
    estimateSources: sources, notes: NOTES,
    startedAt: new Date(a.started).toISOString(), durationMs: Date.now() - a.started,
  };
}

/** A report that says the run did not complete, and why. */
export function errorReport(
  job: Pick<RunnerJob, 'ranks' | 'steps' | 'modes'>, started: number, probes: readonly BackendProbe[], error: string,
  status: ValidationReport['status'] = 'error',
): ValidationReport {
  return {
    kind: 'shardlens-validation', version: 1, status, error,
    backend: null, backendLabel: 'no run', backends: probes, parameters: 0, scaling: null,
    ranks: job.ranks, steps: job.steps, modes: job.modes, runs: [], checks: [], estimateSources: [], notes: [],
    startedAt: new Date(started).toISOString(), durationMs: Math.max(0, Date.now() - started),
  };
}
