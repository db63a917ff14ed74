/**
 * Public entry of local validation runs (Node side): `runValidation` forks the runner process
 * (dist/validation-runner.js), relays progress, and always resolves with a report — cancelled, crashed or finished;
 * `probeBackends` classifies the TensorFlow.js backends in short-lived child processes.
 */
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { probeAll } from './probe/launch';
import { releaseGroup, trackGroup } from './processGroups';
import { errorReport } from './report/assemble';
import type { FromRunner, RunnerJob, ToRunner } from './runner/main';
import {
  BACKEND_ORDER, VALIDATION_MODES, type BackendProbe, type RunValidationOptions, type ValidationMode, type ValidationReport,
} from './types';

export * from './types';

/** Time the runner gets to exit after 'cancel' before its process group is killed. */
const CANCEL_GRACE_MS = 500;

/** The folder holding the bundled runner: the caller's bundle folder (dist/) or ./dist of the repository. */
export function findDistDir(explicit?: string): string {
  if (explicit) return explicit;
  const candidates = [__dirname, join(__dirname, '..', 'dist'), resolve('dist')];
  return candidates.find((d) => existsSync(join(d, 'validation-runner.js'))) ?? candidates[candidates.length - 1];
}

/** Probes every backend (tensorflow-gpu, tensorflow, wasm, cpu), each in its own child process. */
export function probeBackends(distDir?: string, signal?: AbortSignal): Promise<BackendProbe[]> {
  return probeAll(findDistDir(distDir), BACKEND_ORDER, 8000, signal);
}

/** Normalises the options into a job; bad values fall back to defaults rather than throwing. */
function jobOf(o: RunValidationOptions): RunnerJob {
  const int = (x: number | undefined, d: number, lo: number, hi: number) =>
    Number.isInteger(x) ? Math.max(lo, Math.min(hi, x as number)) : d;
  const modes = (o.modes?.length ? o.modes : VALIDATION_MODES).filter((m): m is ValidationMode => VALIDATION_MODES.includes(m));
  return {
    plan: o.plan,
    ranks: int(o.ranks, 4, 1, 16),
    modes: modes.length ? [...new Set(modes)] : [...VALIDATION_MODES],
    steps: int(o.steps, 5, 1, 1000),
    backend: o.backend && (o.backend === 'auto' || BACKEND_ORDER.includes(o.backend)) ? o.backend : 'auto',
    scale: o.scale ?? {},
    seed: int(o.seed, 1234, 0, 2 ** 31 - 1),
    readyTimeoutMs: int(o.readyTimeoutMs, 120_000, 100, 600_000),
  };
}

/** Kills the runner's process group (runner, probes); the workers are threads of the runner and die with it. */
function killGroup(pid: number | undefined): void {
  releaseGroup(pid);
}

/** Trains the scaled model of `opts.plan` in every mode as real ranks and compares with the core's estimates. */
export function runValidation(opts: RunValidationOptions): Promise<ValidationReport> {
  const job = jobOf(opts);
  const started = Date.now();
  const runner = join(findDistDir(opts.distDir), 'validation-runner.js');
  const plan = opts.plan as Partial<RunValidationOptions['plan']> | undefined;
  if (typeof plan?.model !== 'object' || typeof plan.training !== 'object') return Promise.resolve(errorReport(job, started, [], 'the plan has no model or training shape to scale down'));
  if (!existsSync(runner)) return Promise.resolve(errorReport(job, started, [], `validation runner not built: ${runner} is missing (run npm run build)`));
  if (opts.signal?.aborted) return Promise.resolve(errorReport(job, started, [], 'cancelled before start', 'cancelled'));
  return new Promise((resolveReport) => {
    let settled = false, stderr = '';
    // Test hook: SHARDLENS_VALIDATION_FAULT=oom starts the runner with a tiny heap (see runner/fault.ts).
    const execArgv = process.env.SHARDLENS_VALIDATION_FAULT === 'oom' ? ['--max-old-space-size=32'] : [];
    const child = fork(runner, [], {
      detached: process.platform !== 'win32', stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced', execArgv,
    });
    const settle = (r: ValidationReport) => {
      if (settled) return;
      settled = true;
      opts.signal?.removeEventListener('abort', onAbort);
      resolveReport(r);
    };
    const onAbort = () => {
      try { child.send({ type: 'cancel' } satisfies ToRunner); } catch { /* The channel may be closed already. */ }
      const timer = setTimeout(() => killGroup(child.pid), CANCEL_GRACE_MS);
      child.once('exit', () => { clearTimeout(timer); killGroup(child.pid); });
      settle(errorReport(job, started, [], 'cancelled by the user', 'cancelled'));
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    trackGroup(child.pid);
    if (child.pid) opts.onSpawn?.(child.pid);
    if (opts.signal?.aborted && !settled) onAbort();
    child.stderr?.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-4000); });
    child.on('message', (m: FromRunner) => {
      if (m.type === 'progress') opts.onProgress?.(m.progress);
      else if (m.type === 'report') settle({ ...m.report });
    });
    child.on('error', (e) => settle(errorReport(job, started, [], `runner failed to start: ${e.message}`)));
    child.on('exit', (code, signal) => {
      killGroup(child.pid);
      const oom = /heap out of memory|Allocation failed/i.test(stderr);
      const why = oom ? 'the runner ran out of memory' : `the runner exited (${signal ?? `code ${code}`}) without a report`;
      settle(errorReport(job, started, [], `${why}${stderr.trim() ? `: ${stderr.trim().split('\n').slice(-3).join(' ')}` : ''}`));
    });
    if (!settled) child.send({ type: 'start', job } satisfies ToRunner);
  });
}
