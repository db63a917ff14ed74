/**
 * Probes every backend in its own short-lived child process (dist/backend-probe.js), in parallel, each with a time
 * limit, and classifies the outcomes. Used by the runner process and by `probeBackends()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { BACKEND_ORDER, type BackendName, type BackendProbe } from '../types';
import { classifyProbe, type ProbeOutcome } from './classify';

/** Probe children still running, so that a cancelled runner can end them before it exits. */
const running = new Set<ChildProcess>();

/** Kills every probe child still running (synchronous, for exit paths). */
export function killProbes(): void {
  for (const c of running) c.kill('SIGKILL');
  running.clear();
}

/** Runs one probe child and collects its output; never rejects. */
export function runProbe(distDir: string, name: BackendName, timeoutMs: number, signal?: AbortSignal): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    let stdout = '', stderr = '', timedOut = false, done = false;
    const child = spawn(process.execPath, [join(distDir, 'backend-probe.js'), name], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TF_CPP_MIN_LOG_LEVEL: '0' },
    });
    running.add(child);
    const kill = () => { if (!done) child.kill('SIGKILL'); };
    const timer = setTimeout(() => { timedOut = true; kill(); }, timeoutMs);
    signal?.addEventListener('abort', kill, { once: true });
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { if (stderr.length < 64_000) stderr += d.toString(); });
    const finish = (exitCode: number | null, sig: string | null) => {
      if (done) return;
      done = true;
      running.delete(child);
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
      resolve({ stdout, stderr, exitCode, signal: sig, timedOut });
    };
    child.on('error', (e) => { stderr += String(e); finish(null, null); });
    child.on('close', (code, sig) => finish(code, sig));
  });
}

/** Probes the given backends (default: all, in preference order). */
export async function probeAll(distDir: string, names: readonly BackendName[] = BACKEND_ORDER, timeoutMs = 8000, signal?: AbortSignal): Promise<BackendProbe[]> {
  const outcomes = await Promise.all(names.map((n) => runProbe(distDir, n, timeoutMs, signal)));
  return names.map((n, i) => classifyProbe(n, outcomes[i]));
}

/** The first usable backend in preference order, or null. */
export function chooseBackend(probes: readonly BackendProbe[]): BackendName | null {
  for (const name of BACKEND_ORDER) if (probes.find((p) => p.name === name)?.ok) return name;
  return null;
}

/** The honest label of what a run on `backend` measures. */
export function backendLabel(backend: BackendName | null, detail?: string): string {
  switch (backend) {
    case 'tensorflow-gpu': return `measured tensor bytes on the GPU through libtensorflow (${detail ?? 'tfjs-node-gpu'}); logical tensor bytes, not CUDA allocator bytes`;
    case 'tensorflow': return `measured tensor bytes on CPU libtensorflow (${detail ?? 'tfjs-node'}); GPU memory is estimated, not measured`;
    case 'wasm': return `measured tensor bytes on ${detail ?? 'wasm'}; GPU memory is estimated, not measured`;
    case 'cpu': return `measured tensor bytes on the pure-JS cpu backend; GPU memory is estimated, not measured`;
    default: return 'no backend available';
  }
}
