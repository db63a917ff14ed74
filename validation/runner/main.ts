/**
 * The validation runner process (bundled as dist/validation-runner.js), started by `runValidation` with fork().
 * It probes the backends, scales the model, starts one worker thread per rank, trains every mode, and sends the report
 * back over IPC. A 'cancel' message or the parent going away ends the process (and with it every worker) at once.
 */
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import type { Plan } from '../../shared/plan/types';
import { createMailboxes } from '../collectives/ring';
import { buildLayout } from '../model/layout';
import { planDropped, scaleModel } from '../model/scale';
import { backendLabel, chooseBackend, killProbes, probeAll } from '../probe/launch';
import type { RankModeResult } from '../train/trainer';
import type { BackendName, ScaleOverrides, ValidationMode, ValidationProgress, ValidationReport } from '../types';
import type { FromWorker, ToWorker, WorkerInit } from './worker';
import { assembleReport, errorReport } from '../report/assemble';
import { faultFromEnv, injectRunnerFault } from './fault';

export interface RunnerJob {
  readonly plan: Plan;
  readonly ranks: number;
  readonly modes: readonly ValidationMode[];
  readonly steps: number;
  readonly backend: 'auto' | BackendName;
  readonly scale: ScaleOverrides;
  readonly seed: number;
  /** How long the ranks may take to start their backend, ms. */
  readonly readyTimeoutMs: number;
}

export type ToRunner = { type: 'start'; job: RunnerJob } | { type: 'cancel' };
export type FromRunner = { type: 'progress'; progress: ValidationProgress } | { type: 'report'; report: ValidationReport };

const send = (m: FromRunner): Promise<void> => new Promise((resolve) => {
  if (!process.send) { resolve(); return; }
  process.send(m, undefined, undefined, () => resolve());
});

/**
 * Starts the rank workers and waits until each has its backend ready, at most `timeoutMs`: a rank that never reports
 * (a backend stuck in its initialisation) ends the run with an error naming the ranks, instead of a wait without end.
 */
async function startWorkers(init: Omit<WorkerInit, 'rank'>, timeoutMs: number, onMessage: (m: FromWorker) => void): Promise<{ workers: Worker[]; ready: FromWorker[] }> {
  const workers: Worker[] = [];
  const started = new Set<number>();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const missing = Array.from({ length: init.shape.ranks }, (_, r) => r).filter((r) => !started.has(r));
      reject(new Error(`rank${missing.length > 1 ? 's' : ''} ${missing.join(', ')} did not start the ${init.backend} backend within ${timeoutMs / 1000} s`));
    }, timeoutMs);
  });
  const all = Promise.all(Array.from({ length: init.shape.ranks }, (_, rank) => new Promise<FromWorker>((resolve, reject) => {
    const w = new Worker(join(__dirname, 'validation-worker.js'), { workerData: { ...init, rank } satisfies WorkerInit });
    workers.push(w);
    w.on('error', (e) => reject(e));
    w.on('exit', (code) => {
      if (code !== 0 || !started.has(rank)) reject(new Error(`rank ${rank} exited with code ${code}${started.has(rank) ? '' : ' before it started'}`));
    });
    w.on('message', (m: FromWorker) => {
      if (m.type === 'ready' || m.type === 'error') { started.add(rank); resolve(m); }
      onMessage(m);
    });
  })));
  try {
    return { workers, ready: await Promise.race([all, late]) };
  } catch (e) {
    await Promise.all(workers.map((w) => w.terminate()));
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

async function run(job: RunnerJob): Promise<ValidationReport> {
  const started = Date.now();
  const probes = await probeAll(__dirname, job.backend === 'auto' ? undefined : [job.backend]);
  const backend = chooseBackend(probes);
  if (!backend) return errorReport(job, started, probes, 'no TensorFlow.js backend could be started');
  const base = scaleModel(job.plan.model, job.plan.training, job.scale);
  const scaled = { ...base, scaling: { ...base.scaling, dropped: [...base.scaling.dropped, ...planDropped(job.plan)] } };
  const layout = buildLayout(scaled.model, job.ranks);
  const capacity = Math.max(...layout.units.map((u) => u.paddedSize / job.ranks));
  const shape = { model: scaled.model, seqLen: scaled.seqLen, microBatch: scaled.microBatch, ranks: job.ranks, seed: job.seed, learningRate: 3e-3 };
  let pending: ((m: FromWorker) => void) | null = null;
  let failure: ((e: Error) => void) | null = null;
  const { workers, ready } = await startWorkers(
    { mailboxes: createMailboxes(job.ranks, capacity), shape, backend, assetsDir: join(__dirname, 'assets') },
    job.readyTimeoutMs,
    (m) => { if (m.type === 'error') failure?.(new Error(`rank ${m.rank}: ${m.message}`)); else pending?.(m); },
  );
  const bad = ready.find((m) => m.type === 'error');
  if (bad && bad.type === 'error') throw new Error(`rank ${bad.rank}: ${bad.message}`);
  const first = ready[0];
  const detail = first.type === 'ready' ? first.detail : backend;
  const used = first.type === 'ready' ? first.backend : backend;
  const constants = ready.map((m) => (m.type === 'ready' ? m.constantsBytes : 0));
  const results = new Map<ValidationMode, RankModeResult[]>();
  const total = job.modes.length * job.steps;
  for (const [mi, mode] of job.modes.entries()) {
    const stepOf = new Array<number>(job.ranks).fill(0);
    const got: RankModeResult[] = [];
    await new Promise<void>((resolve, reject) => {
      failure = reject;
      for (const w of workers) w.on('exit', (code) => reject(new Error(`a rank exited with code ${code}`)));
      pending = (m) => {
        if (m.type === 'step' && m.mode === mode) {
          const before = Math.min(...stepOf);
          stepOf[m.rank] = m.step;
          const done = Math.min(...stepOf);
          if (done > before) void send({ type: 'progress', progress: { fraction: (mi * job.steps + done) / total, message: `${mode}: step ${done}/${job.steps}`, mode, step: done } });
        } else if (m.type === 'result' && m.mode === mode) {
          got[m.rank] = m.result;
          if (got.filter(Boolean).length === job.ranks) resolve();
        }
      };
      for (const w of workers) w.postMessage({ type: 'run', mode, steps: job.steps } satisfies ToWorker);
    });
    for (const w of workers) w.removeAllListeners('exit');
    results.set(mode, got);
  }
  for (const w of workers) w.postMessage({ type: 'exit' } satisfies ToWorker);
  await Promise.all(workers.map((w) => w.terminate()));
  return assembleReport({ job, started, probes, backend: used, label: backendLabel(used, detail), scaled, layout, results, constants });
}

process.on('message', (msg: ToRunner) => {
  if (msg.type === 'cancel') { killProbes(); process.exit(130); }
  if (msg.type !== 'start') return;
  injectRunnerFault(faultFromEnv());
  run(msg.job)
    .catch((e: unknown) => errorReport(msg.job, Date.now(), [], e instanceof Error ? e.message : String(e)))
    .then((report) => send({ type: 'report', report }))
    .then(() => process.exit(0));
});
process.on('disconnect', () => { killProbes(); process.exit(0); });
