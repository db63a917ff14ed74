/**
 * `shardlens profile` on this machine: writes the measurement request for the user's plans, launches
 * probe/profile_sweep.py under torchrun (argument arrays, its own process group, cancel and timeout as the probe's),
 * and reads the profile back. On a machine without GPUs the ranks run on CPU over gloo: the plumbing is the same and
 * the profile says its numbers describe no GPU.
 */
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { normalizeProfile, type ClusterProfile } from '../../shared/hardware/profile';
import type { ProfileRequest } from '../../shared/time/profileRequest';
import { defaultProbeDir, launch } from './launch';
import { findPython } from './python';

export interface RunProfileOptions {
  readonly request: ProfileRequest;
  readonly ranks: number;
  /** Where the profile is written (default: a new temporary folder). */
  readonly out?: string;
  readonly python?: string;
  readonly signal?: AbortSignal;
  readonly onLine?: (line: string) => void;
  readonly probeDir?: string;
  readonly timeoutMs?: number;
}

export type RunProfileResult =
  | { readonly ok: true; readonly profile: ClusterProfile; readonly path: string; readonly argv: readonly string[] }
  | { readonly ok: false; readonly message: string; readonly outputTail?: string };

/** The launcher's argument vector after the interpreter (exported so tests and logs show exactly what runs). */
export function profileArgv(probeDir: string, ranks: number, requestPath: string, out: string, watchdogS: number): string[] {
  return [
    join(probeDir, 'torchrun_compat.py'), '--standalone', '--nnodes', '1', '--nproc_per_node', String(ranks), '--monitor_interval', '1',
    join(probeDir, 'profile_sweep.py'), '--request', requestPath, '--out', out, '--watchdog', String(Math.max(10, Math.round(watchdogS))),
  ];
}

/** Runs the sweep; resolves with the normalized profile or a message saying what went wrong (never rejects). */
export async function runProfile(o: RunProfileOptions): Promise<RunProfileResult> {
  if (!Number.isInteger(o.ranks) || o.ranks < 1 || o.ranks > 4096) return { ok: false, message: `ranks must be a whole number from 1 to 4096 (got ${o.ranks})` };
  const probeDir = o.probeDir ?? defaultProbeDir();
  if (!probeDir || !existsSync(join(probeDir, 'profile_sweep.py'))) return { ok: false, message: 'probe/profile_sweep.py was not found next to ShardLens' };
  const py = await findPython(o.python);
  if (!py.ok) return { ok: false, message: py.message };
  const request = py.info.gpus < o.ranks ? { ...o.request, device: 'cpu' as const } : o.request;
  const dir = mkdtempSync(join(tmpdir(), 'shardlens-profile-'));
  const requestPath = join(dir, 'request.json');
  const out = resolve(o.out ?? join(dir, 'profile.json'));
  writeFileSync(requestPath, JSON.stringify(request));
  const timeoutMs = o.timeoutMs ?? 900_000;
  const argv = profileArgv(probeDir, o.ranks, requestPath, out, timeoutMs / 1000 - 5);
  const run = await launch(py.info.python, argv, o.signal, timeoutMs, o.onLine ?? (() => undefined));
  if (run.reason !== 'exit') return { ok: false, message: run.reason === 'error' ? run.message : `the sweep was ${run.reason === 'timeout' ? 'stopped after the time limit' : 'cancelled'}`, outputTail: run.tail };
  if (!existsSync(out)) return { ok: false, message: `the sweep exited with code ${run.code} and wrote no profile`, outputTail: run.tail };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(out, 'utf8'));
  } catch (e) {
    return { ok: false, message: `the profile is not JSON: ${(e as Error).message}`, outputTail: run.tail };
  }
  const profile = normalizeProfile(raw, out);
  if (!profile) return { ok: false, message: 'the profile holds no usable measurement', outputTail: run.tail };
  return { ok: true, profile, path: out, argv: [py.info.python, ...argv] };
}

/** Reads a profile file (bounded: at most 64 MiB); undefined with a message when it is missing or malformed. */
export function readProfileFile(path: string): { profile?: ClusterProfile; message?: string } {
  try {
    if (statSync(path).size > 64 * 2 ** 20) return { message: `${path} is larger than 64 MiB` };
    const text = readFileSync(path, 'utf8');
    const profile = normalizeProfile(JSON.parse(text), path);
    return profile ? { profile } : { message: `${path} is not a ShardLens cluster profile (kind "shardlens-profile") with measurements` };
  } catch (e) {
    return { message: `${path}: ${(e as Error).message}` };
  }
}
