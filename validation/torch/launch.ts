/**
 * Runs the probe locally: exports the plan, finds a Python with torch, launches torchrun (through the compat shim)
 * as an argument array, streams progress, honours cancel, and reads the report back.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { MAX_REPORT_BYTES, readTextFile } from '../../server/io/read';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Plan } from '../../shared/plan/types';
import { exportProbePlan, isExportProblem, stageOfMode, type ExportOptions } from './exportPlan';
import { findPython } from './python';
import { releaseGroup, signalGroup, trackGroup } from '../processGroups';
import { parseProbeReport } from './report';
import type { ProbeFailure, ProbeFailureCode, ProbeMode, ProbePlan, ProbeProgress, ProbeReport } from './types';

export interface RunProbeOptions {
  /** A resolved plan (exported here) or an already exported probe plan. */
  readonly plan: Plan | ProbePlan;
  /** Ranks to launch; default: one per GPU, else 2 CPU ranks (see chooseRanks). */
  readonly ranks?: number;
  /** Allow more ranks than the machine has GPUs (or CPU cores). */
  readonly oversubscribe?: boolean;
  readonly mode?: ProbeMode;
  /** Where the report is written (default: a new temporary folder). */
  readonly out?: string;
  /** Interpreter to use; default: the first of pythonCandidates() that imports torch. */
  readonly python?: string;
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: ProbeProgress) => void;
  /** Export options (scaling budget, steps, layout, DeepSpeed JSON). */
  readonly export?: Omit<ExportOptions, 'ranks' | 'mode'>;
  /** Folder holding shardlens_probe.py (default: dist/probe next to the bundle, or the repository's probe/). */
  readonly probeDir?: string;
  /** Whole-run limit; the probe's own watchdog is set a little shorter. Default 10 minutes. */
  readonly timeoutMs?: number;
}

/** Locates the shipped probe: next to the bundle (dist/probe) or in the source tree (probe/). */
export function defaultProbeDir(): string | undefined {
  const candidates = [join(__dirname, 'probe'), resolve(__dirname, '..', '..', 'probe'), resolve(__dirname, '..', 'probe')];
  return candidates.find((d) => existsSync(join(d, 'shardlens_probe.py')));
}

const isProbePlan = (p: Plan | ProbePlan): p is ProbePlan => (p as ProbePlan).kind === 'shardlens-probe-plan';

const fail = (code: ProbeFailureCode, message: string, extra: Partial<ProbeFailure> = {}): ProbeFailure =>
  ({ ok: false, kind: 'shardlens-probe-failure', code, message, ...extra });

/** Type guard: true for a failure, false for a successful report. */
export function isProbeFailure(r: ProbeReport | ProbeFailure): r is ProbeFailure {
  return (r as ProbeFailure).kind === 'shardlens-probe-failure';
}

/**
 * The launcher's argument vector (after the interpreter); exported so tests and the log show exactly what runs. A
 * local rendezvous: a c10d store on 127.0.0.1 (port chosen by the store), a fresh run id, and this node's address
 * 127.0.0.1 (torchrun_compat.py drops `--local_addr` for torch < 2 and binds the store's socket to loopback).
 */
export function localArgv(probeDir: string, ranks: number, planPath: string, mode: ProbeMode, out: string, watchdogS: number, runId = randomUUID()): string[] {
  return [
    join(probeDir, 'torchrun_compat.py'), '--rdzv_backend', 'c10d', '--rdzv_endpoint', '127.0.0.1:0', '--rdzv_id', runId,
    '--local_addr', '127.0.0.1', '--nnodes', '1', '--nproc_per_node', String(ranks), '--monitor_interval', '1',
    join(probeDir, 'shardlens_probe.py'),
    '--plan', planPath, '--mode', mode, '--out', out, '--watchdog', String(Math.max(10, Math.round(watchdogS))),
  ];
}

/** Environment of a local run: collectives bind to the loopback interface, so nothing listens on the network. */
export function localEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return {
    ...env, PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1',
    // torchrun_compat.py exits (and kills its group) when this process is gone (probe/watchdog.py).
    SHARDLENS_PARENT_PID: String(process.pid),
    MASTER_ADDR: '127.0.0.1', GLOO_SOCKET_IFNAME: 'lo', NCCL_SOCKET_IFNAME: 'lo', TP_SOCKET_IFNAME: 'lo',
  };
}

/**
 * How many ranks to launch: the request, else what the machine has (one per GPU, or 2 CPU ranks). More ranks than
 * GPUs (or CPU cores, on CPU) are refused unless `oversubscribe` says so: a config's data-parallel size of 1,024 must
 * never become 1,024 processes on a laptop.
 */
export function chooseRanks(requested: number | undefined, machine: { readonly gpus: number; readonly cpus: number }, oversubscribe = false): number | { error: string } {
  const capacity = machine.gpus > 0 ? machine.gpus : Math.max(2, machine.cpus);
  if (requested === undefined) return machine.gpus > 0 ? machine.gpus : 2;
  if (!Number.isInteger(requested) || requested < 1) return { error: `ranks must be a positive integer (got ${requested})` };
  if (requested > capacity && !oversubscribe) {
    const what = machine.gpus > 0 ? `${machine.gpus} GPU${machine.gpus > 1 ? 's' : ''}` : `${machine.cpus} CPU core${machine.cpus > 1 ? 's' : ''}`;
    return { error: `${requested} ranks is more than this machine has (${what}); use fewer ranks, or allow it explicitly (--oversubscribe)` };
  }
  return requested;
}

/** Runs the probe and resolves with the report, or a failure that says what went wrong; never rejects. */
export async function runProbe(opts: RunProbeOptions): Promise<ProbeReport | ProbeFailure> {
  const progress = opts.onProgress ?? (() => undefined);
  if (opts.ranks !== undefined && (!Number.isInteger(opts.ranks) || opts.ranks < 1)) return fail('layout-mismatch', `ranks must be a positive integer (got ${opts.ranks})`);
  const probeDir = opts.probeDir ?? defaultProbeDir();
  if (!probeDir) return fail('launch-failed', 'the probe scripts (shardlens_probe.py) were not found next to ShardLens');
  progress({ phase: 'python', message: 'Looking for a Python with torch…' });
  const py = await findPython(opts.python);
  if (!py.ok) return fail(py.code, py.message);
  const chosen = chooseRanks(opts.ranks, { gpus: py.info.gpus, cpus: availableParallelism() }, opts.oversubscribe);
  if (typeof chosen !== 'number') return fail('too-many-ranks', chosen.error);
  const ranks = chosen;
  if (opts.signal?.aborted) return fail('cancelled', 'cancelled before launch');
  let probePlan: ProbePlan;
  if (isProbePlan(opts.plan)) {
    const mode = opts.mode ?? opts.plan.parallel.mode;
    probePlan = { ...opts.plan, parallel: { ...opts.plan.parallel, mode, zeroStage: stageOfMode(mode, opts.plan.parallel.zeroStage) } };
  } else {
    const exported = exportProbePlan(opts.plan, { ...opts.export, ranks: ranks, mode: opts.mode, deepspeedAvailable: !!py.info.deepspeed });
    if (isExportProblem(exported)) return fail(exported.code, exported.message);
    probePlan = exported.probePlan;
  }
  // One process per GPU when there are enough GPUs; otherwise CPU ranks over gloo.
  if (probePlan.device === 'auto' && py.info.gpus < ranks) probePlan = { ...probePlan, device: 'cpu' };
  const dir = mkdtempSync(join(tmpdir(), 'shardlens-probe-'));
  try {
    return await launchIn(dir, probeDir, ranks, probePlan, py.info, opts, progress);
  } finally {
    // The plan and the default report live here; the report has been read (or copied to --out) by now.
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes the plan into `dir`, runs torchrun and reads the report back. */
async function launchIn(
  dir: string, probeDir: string, ranks: number, probePlan: ProbePlan, py: { python: string; executable: string; torch: string | null },
  opts: RunProbeOptions, progress: (p: ProbeProgress) => void,
): Promise<ProbeReport | ProbeFailure> {
  const planPath = join(dir, 'plan.json');
  const out = resolve(opts.out ?? join(dir, 'report.json'));
  writeFileSync(planPath, JSON.stringify(probePlan, null, 1));
  const timeoutMs = opts.timeoutMs ?? 600_000;
  const argv = localArgv(probeDir, ranks, planPath, probePlan.parallel.mode, out, timeoutMs / 1000 - 5);
  progress({ phase: 'launch', message: `Launching ${ranks} ranks (${probePlan.parallel.mode}) with ${py.executable}, torch ${py.torch}`, argv: [py.python, ...argv] });
  const run = await launch(py.python, argv, opts.signal, timeoutMs, (line) => progress({ phase: 'output', message: line }));
  if (run.reason === 'cancelled') return fail('cancelled', 'the probe was cancelled; every rank was stopped', { outputTail: run.tail });
  if (run.reason === 'timeout') return fail('timeout', `the probe did not finish within ${Math.round(timeoutMs / 1000)} s`, { outputTail: run.tail });
  if (run.reason === 'error') return fail('launch-failed', run.message, { outputTail: run.tail });
  if (run.code === 3) return fail('torch-missing', `torch is not importable by ${py.executable}`, { outputTail: run.tail });
  const text = readTextFile(out, { maxBytes: MAX_REPORT_BYTES });
  if (!text.ok) return fail('no-report', text.reason === 'missing' ? `the probe exited with code ${run.code} and wrote no report` : text.detail, { outputTail: run.tail });
  const read = parseProbeReport(text.text);
  if (!read.ok) return fail('invalid-report', `the report does not match its schema: ${read.problems.slice(0, 5).join('; ')}`, { outputTail: run.tail });
  progress({ phase: 'done', message: read.report.ok ? `Report written to ${out}` : 'The probe reported errors' });
  if (!read.report.ok) {
    const first = read.report.errors[0];
    const code: ProbeFailureCode = first?.code === 'torch-too-old' || first?.code === 'layout-mismatch' ? first.code : 'probe-failed';
    return fail(code, first ? `rank ${first.rank}: ${first.message}` : 'the probe reported errors', { report: read.report, outputTail: run.tail });
  }
  return read.report;
}

export type LaunchResult =
  | { reason: 'exit'; code: number | null; tail: string }
  | { reason: 'cancelled'; tail: string }
  | { reason: 'timeout'; tail: string }
  | { reason: 'error'; message: string; tail: string };

/**
 * Spawns the launcher in its own process group: cancel and timeout stop torchrun and every rank (SIGTERM, then
 * SIGKILL), ranks left over when torchrun exits are killed, and the group dies with this process (processGroups.ts).
 */
export function launch(python: string, argv: string[], signal: AbortSignal | undefined, timeoutMs: number, onLine: (l: string) => void): Promise<LaunchResult> {
  return new Promise((done) => {
    const lines: string[] = [];
    const child = spawn(python, argv, { stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32', env: localEnv() });
    trackGroup(child.pid);
    let stopped: 'cancelled' | 'timeout' | undefined;
    const kill = (sig: NodeJS.Signals) => signalGroup(child.pid, sig);
    const stop = (why: 'cancelled' | 'timeout') => {
      if (stopped) return;
      stopped = why;
      kill('SIGTERM');
      setTimeout(() => kill('SIGKILL'), 2000).unref();
    };
    const onAbort = () => stop('cancelled');
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    let partial = '';
    const onData = (d: Buffer) => {
      const text = partial + d.toString();
      const parts = text.split('\n');
      partial = parts.pop() ?? '';
      for (const l of parts) {
        lines.push(l);
        if (lines.length > 200) lines.shift();
        onLine(l);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const finish = (r: LaunchResult) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      done(r);
    };
    child.on('error', (e) => {
      releaseGroup(child.pid);
      finish({ reason: 'error', message: `could not start ${python}: ${e.message}`, tail: lines.join('\n') });
    });
    // torchrun has exited: any rank still running (holding the output pipes open) is killed with the group.
    child.on('exit', () => releaseGroup(child.pid));
    child.on('close', (code) => {
      if (partial) lines.push(partial);
      const tail = lines.slice(-40).join('\n');
      finish(stopped === 'cancelled' ? { reason: 'cancelled', tail } : stopped === 'timeout' ? { reason: 'timeout', tail } : { reason: 'exit', code, tail });
    });
  });
}
