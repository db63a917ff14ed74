/**
 * Runs the fake-tensor oracle (probe/shardlens_oracle.py) with an interpreter that has torch ≥ 2.4: one plan or a grid
 * of plans per process, as an argument array, with a timeout and cancel; the report is read back from a temporary
 * folder. Never rejects: every failure is an OracleFailure that says what and why.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { MAX_REPORT_BYTES, readTextFile } from '../../server/io/read';
import { releaseGroup, signalGroup, trackGroup } from '../processGroups';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inspectPython, type PythonInfo } from './python';
import type { OraclePlan, OracleReport } from './oracleTypes';
import { compareRelease, releaseOf } from '../../shared/versionSpec';

export type OracleFailureCode = 'python-not-found' | 'torch-missing' | 'torch-too-old' | 'launch-failed' | 'timeout' | 'cancelled' | 'no-report';

export interface OracleFailure {
  readonly ok: false;
  readonly kind: 'shardlens-oracle-failure';
  readonly code: OracleFailureCode;
  readonly message: string;
  readonly outputTail?: string;
}

export const MIN_TORCH: readonly [number, number] = [2, 4];

const fail = (code: OracleFailureCode, message: string, outputTail?: string): OracleFailure =>
  ({ ok: false, kind: 'shardlens-oracle-failure', code, message, ...(outputTail ? { outputTail } : {}) });

export function isOracleFailure(x: unknown): x is OracleFailure {
  return typeof x === 'object' && x !== null && (x as OracleFailure).kind === 'shardlens-oracle-failure';
}

/** Folder holding shardlens_oracle.py: next to the bundle (dist/probe) or the repository's probe/. */
export function oracleDir(): string | undefined {
  const candidates = [join(__dirname, 'probe'), resolve(__dirname, '..', '..', 'probe'), resolve(__dirname, '..', 'probe')];
  return candidates.find((d) => existsSync(join(d, 'shardlens_oracle.py')));
}

/** True when a torch version string ("2.13.0+cpu", "1.13.0a0") is at least 2.4. */
export function torchRecentEnough(version: string): boolean {
  const release = releaseOf(version);
  return release !== undefined && compareRelease(release, MIN_TORCH) >= 0;
}

/** Interpreters to try: the given one, $SHARDLENS_PYTHON, the repository's .venv, then python3/python on PATH, Debian's. */
export function oraclePythonCandidates(explicit?: string, env: NodeJS.ProcessEnv = process.env, dir = oracleDir()): string[] {
  // The repository's .venv (scripts/setup-python.sh), seen from probe/ or from dist/probe/.
  const venvs = dir ? [resolve(dir, '..', '.venv', 'bin', 'python'), resolve(dir, '..', '..', '.venv', 'bin', 'python')].filter((v) => existsSync(v)) : [];
  const list = explicit ? [explicit] : [env.SHARDLENS_PYTHON, ...venvs, 'python3', 'python', '/usr/bin/python3'];
  return [...new Set(list.filter((x): x is string => !!x && x.trim() !== ''))];
}

/** The first candidate with torch ≥ 2.4, or a failure naming what was found and how to install it. */
export async function findOraclePython(explicit?: string, env: NodeJS.ProcessEnv = process.env): Promise<PythonInfo | OracleFailure> {
  const tried = oraclePythonCandidates(explicit, env);
  let old: PythonInfo | undefined, bare: PythonInfo | undefined;
  for (const py of tried) {
    const info = await inspectPython(py);
    if (info?.torch && torchRecentEnough(info.torch)) return info;
    if (info?.torch && !old) old = info;
    if (info && !info.torch && !bare) bare = info;
  }
  const install = 'install it with "bash scripts/setup-python.sh" (a .venv with the pinned torch) or "pip install \'torch>=2.4\'"';
  if (old) return fail('torch-too-old', `torch ${old.torch} at ${old.executable} is older than 2.4: the oracle needs FSDP2 fully_shard, the fake process group and MemTracker; ${install}`);
  if (bare) return fail('torch-missing', `torch is not importable by ${bare.executable} (Python ${bare.pythonVersion}); ${install}`);
  return fail('python-not-found', `no Python interpreter could be started (tried ${tried.join(', ')}); install Python 3 and torch ≥ 2.4`);
}

export interface RunOracleOptions {
  readonly python: string;
  readonly signal?: AbortSignal;
  /** Whole-run limit (default 10 minutes). */
  readonly timeoutMs?: number;
  readonly dir?: string;
}

/** Runs one plan (→ its report) or a list (→ one report per plan, in one process). */
export async function runOracle(plan: OraclePlan, o: RunOracleOptions): Promise<OracleReport | OracleFailure>;
export async function runOracle(plan: readonly OraclePlan[], o: RunOracleOptions): Promise<OracleReport[] | OracleFailure>;
export async function runOracle(plan: OraclePlan | readonly OraclePlan[], o: RunOracleOptions): Promise<OracleReport | OracleReport[] | OracleFailure> {
  const dir = o.dir ?? oracleDir();
  if (!dir) return fail('launch-failed', 'the oracle script (shardlens_oracle.py) was not found next to ShardLens');
  if (o.signal?.aborted) return fail('cancelled', 'cancelled before launch');
  const work = mkdtempSync(join(tmpdir(), 'shardlens-oracle-'));
  const grid = Array.isArray(plan);
  const input = join(work, 'plan.json'), out = join(work, 'report.json');
  writeFileSync(input, JSON.stringify(plan));
  const argv = [join(dir, 'shardlens_oracle.py'), grid ? '--grid' : '--plan', input, '--out', out];
  try {
    const run = await spawnAndWait(o.python, argv, o.timeoutMs ?? 600_000, o.signal);
    if (run.code === 'timeout' || run.code === 'cancelled') return fail(run.code, run.code === 'timeout' ? 'the oracle did not finish in time' : 'cancelled', run.tail);
    if (run.code === 'spawn') return fail('launch-failed', `could not start ${o.python}`, run.tail);
    const text = readTextFile(out, { maxBytes: MAX_REPORT_BYTES });
    if (!text.ok) return fail('no-report', text.reason === 'missing' ? `the oracle wrote no report (exit code ${run.exit})` : text.detail, run.tail);
    return JSON.parse(text.text) as OracleReport | OracleReport[];
  } catch (e) {
    return fail('no-report', `the oracle's report could not be read: ${String(e)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

interface SpawnResult { readonly code: 'exit' | 'timeout' | 'cancelled' | 'spawn'; readonly exit: number | null; readonly tail: string }

function spawnAndWait(python: string, argv: readonly string[], timeoutMs: number, signal?: AbortSignal): Promise<SpawnResult> {
  return new Promise((done) => {
    let tail = '';
    const keep = (d: Buffer) => { tail = (tail + d.toString()).slice(-4000); };
    let child;
    try {
      // Its own process group, killed on cancel, timeout and exit (processGroups.ts); it stops if this process dies.
      child = spawn(python, argv, {
        stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32',
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', SHARDLENS_PARENT_PID: String(process.pid) },
      });
    } catch {
      done({ code: 'spawn', exit: null, tail: '' });
      return;
    }
    const proc = child;
    trackGroup(proc.pid);
    let settled = false;
    const finish = (r: SpawnResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      done(r);
    };
    const onAbort = () => { signalGroup(proc.pid, 'SIGKILL'); finish({ code: 'cancelled', exit: null, tail }); };
    const timer = setTimeout(() => { signalGroup(proc.pid, 'SIGKILL'); finish({ code: 'timeout', exit: null, tail }); }, timeoutMs);
    signal?.addEventListener('abort', onAbort);
    proc.stdout.on('data', keep);
    proc.stderr.on('data', keep);
    proc.on('error', () => { releaseGroup(proc.pid); finish({ code: 'spawn', exit: null, tail }); });
    proc.on('exit', () => releaseGroup(proc.pid));
    proc.on('close', (exit) => finish({ code: 'exit', exit, tail }));
  });
}
