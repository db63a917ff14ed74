/**
 * `shardlens profile` on this machine: writes the measurement request for the user's plans, launches
 * probe/profile_sweep.py under torchrun (argument arrays, its own process group, cancel and timeout as the probe's),
 * and reads the profile back. On a machine without GPUs the ranks run on CPU over gloo: the plumbing is the same and
 * the profile says its numbers describe no GPU.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_REPORT_BYTES, readTextFile } from '../../server/io/read';
import { writeUserFile } from '../../server/io/write';
import { normalizeProfile, type ClusterProfile } from '../../shared/hardware/profile';
import type { ProfileRequest } from '../../shared/time/profileRequest';
import { chooseRanks, defaultProbeDir, launch } from './launch';
import { findPython } from './python';

export interface RunProfileOptions {
  /**
   * The measurement request for the number of ranks launched (chosen here when `ranks` is not given); `cpu` is true
   * when the ranks run on CPU (no GPU per rank), where a full-size sweep would take hours and mean nothing.
   */
  readonly requestFor: (ranks: number, cpu: boolean) => ProfileRequest;
  /** Ranks to launch; default: one per GPU, else 2 CPU ranks (chooseRanks, as the probe). */
  readonly ranks?: number;
  /** Allow more ranks than the machine has GPUs (or CPU cores). */
  readonly oversubscribe?: boolean;
  /** Where the profile is copied (atomically, refusing symlinked folders); default: only returned. */
  readonly out?: string;
  readonly python?: string;
  readonly signal?: AbortSignal;
  readonly onLine?: (line: string) => void;
  readonly probeDir?: string;
  readonly timeoutMs?: number;
}

export type RunProfileResult =
  | { readonly ok: true; readonly profile: ClusterProfile; readonly path?: string; readonly argv: readonly string[] }
  | { readonly ok: false; readonly message: string; readonly outputTail?: string };

/**
 * The launcher's argument vector after the interpreter (exported so tests and logs show exactly what runs): a local
 * rendezvous on 127.0.0.1 with a fresh run id, as the probe's (launch.ts localArgv).
 */
export function profileArgv(probeDir: string, ranks: number, requestPath: string, out: string, watchdogS: number, runId = randomUUID()): string[] {
  return [
    join(probeDir, 'torchrun_compat.py'), '--rdzv_backend', 'c10d', '--rdzv_endpoint', '127.0.0.1:0', '--rdzv_id', runId,
    '--local_addr', '127.0.0.1', '--nnodes', '1', '--nproc_per_node', String(ranks), '--monitor_interval', '1',
    join(probeDir, 'profile_sweep.py'), '--request', requestPath, '--out', out, '--watchdog', String(Math.max(10, Math.round(watchdogS))),
  ];
}

/** Runs the sweep; resolves with the normalized profile or a message saying what went wrong (never rejects). */
export async function runProfile(o: RunProfileOptions): Promise<RunProfileResult> {
  const probeDir = o.probeDir ?? defaultProbeDir();
  if (!probeDir || !existsSync(join(probeDir, 'profile_sweep.py'))) return { ok: false, message: 'probe/profile_sweep.py was not found next to ShardLens' };
  const py = await findPython(o.python);
  if (!py.ok) return { ok: false, message: py.message };
  const ranks = chooseRanks(o.ranks, { gpus: py.info.gpus, cpus: availableParallelism() }, o.oversubscribe);
  if (typeof ranks !== 'number') return { ok: false, message: ranks.error };
  if (o.signal?.aborted) return { ok: false, message: 'cancelled before launch' };
  const cpu = py.info.gpus < ranks;
  const asked = o.requestFor(ranks, cpu);
  const request = cpu ? { ...asked, device: 'cpu' as const } : asked;
  const dir = mkdtempSync(join(tmpdir(), 'shardlens-profile-'));
  try {
    const requestPath = join(dir, 'request.json');
    const written = join(dir, 'profile.json');
    writeFileSync(requestPath, JSON.stringify(request));
    const timeoutMs = o.timeoutMs ?? 900_000;
    const argv = profileArgv(probeDir, ranks, requestPath, written, timeoutMs / 1000 - 5);
    const run = await launch(py.info.python, argv, o.signal, timeoutMs, o.onLine ?? (() => undefined));
    if (run.reason !== 'exit') return { ok: false, message: run.reason === 'error' ? run.message : `the sweep was ${run.reason === 'timeout' ? 'stopped after the time limit' : 'cancelled; every rank was stopped'}`, outputTail: run.tail };
    if (run.code === 3) return { ok: false, message: `torch is not importable by ${py.info.executable}`, outputTail: run.tail };
    const text = readTextFile(written, { maxBytes: MAX_REPORT_BYTES });
    if (!text.ok) return { ok: false, message: text.reason === 'missing' ? `the sweep exited with code ${run.code} and wrote no profile` : text.detail, outputTail: run.tail };
    const read = parseProfile(text.text, o.out ?? written);
    if (!read.profile) return { ok: false, message: read.message ?? 'the profile holds no usable measurement', outputTail: run.tail };
    let path: string | undefined;
    try {
      path = o.out ? writeUserFile(o.out, text.text) : undefined;
    } catch (e) {
      return { ok: false, message: `the profile could not be written to ${o.out}: ${(e as Error).message}` };
    }
    return { ok: true, profile: read.profile, path, argv: [py.info.python, ...argv] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A profile from its JSON text; undefined with a message when it is malformed or holds no measurement. */
function parseProfile(text: string, source: string): { profile?: ClusterProfile; message?: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { message: `${source} is not JSON: ${(e as Error).message}` };
  }
  const profile = normalizeProfile(raw, source);
  return profile ? { profile } : { message: `${source} is not a ShardLens cluster profile (kind "shardlens-profile") with measurements` };
}

/** Reads a profile file (bounded: at most 64 MiB, regular files only); a message when it is missing or malformed. */
export function readProfileFile(path: string): { profile?: ClusterProfile; message?: string } {
  const text = readTextFile(path, { maxBytes: MAX_REPORT_BYTES });
  if (!text.ok) return { message: text.detail };
  return parseProfile(text.text, path);
}
