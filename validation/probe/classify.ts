/**
 * Classifies the outcome of one backend probe child process into "usable" or a reason in words.
 * Failure patterns of @tensorflow/tfjs-node(-gpu) 4.22 from ../shared/reference/tfjs-notes.md §1.
 */
import type { BackendName, BackendProbe } from '../types';
import { NATIVE_PACKAGE_NAMES } from './packages';

export interface ProbeOutcome {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
}

interface Line { loaded?: boolean; error?: string; code?: string; detail?: string; backend?: string; workerError?: string }

function parseLine(stdout: string): Line | null {
  const last = stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  if (!last) return null;
  try {
    const v = JSON.parse(last) as unknown;
    return typeof v === 'object' && v !== null ? (v as Line) : null;
  } catch {
    return null;
  }
}

/** Why a native package failed to load, from the error text and code of require(). */
function nativeFailure(pkg: string, line: Line): string {
  const msg = line.error ?? '';
  if (line.code === 'MODULE_NOT_FOUND' && msg.includes(pkg)) return `not installed: ${pkg} is absent (optional; its install downloads libtensorflow, so it needs network — npm i ${pkg} in the workspace to use it)`;
  if (/tfjs_binding\.node/.test(msg)) return `${pkg} is installed but its native addon (tfjs_binding.node) was not built`;
  if (/libtensorflow[^ ]*\.so|cannot open shared object file|dlopen/i.test(msg)) return `${pkg} is installed but libtensorflow could not be loaded: ${msg}`;
  if (line.code === 'MODULE_NOT_FOUND') return `${pkg} could not be loaded: ${msg}`;
  return `${pkg} failed: ${msg || 'unknown error'}`;
}

/** The verdict on one backend from its probe's output. */
export function classifyProbe(name: BackendName, o: ProbeOutcome): BackendProbe {
  if (o.timedOut) return { name, ok: false, reason: `probe did not finish in time (killed)` };
  const line = parseLine(o.stdout);
  if (!line) {
    const how = o.signal ? `signal ${o.signal}` : `exit code ${o.exitCode}`;
    const tail = o.stderr.trim().split('\n').slice(-2).join(' ').slice(0, 300);
    return { name, ok: false, reason: `probe crashed (${how})${tail ? `: ${tail}` : ''}` };
  }
  const pkg = NATIVE_PACKAGE_NAMES[name];
  if (!line.loaded) {
    if (pkg) return { name, ok: false, reason: nativeFailure(pkg, line) };
    return { name, ok: false, reason: `${name} did not initialise: ${line.error ?? 'unknown error'}` };
  }
  if (line.workerError) {
    return { name, ok: false, reason: `loads in the main thread but not in a worker thread, where ranks run (tensorflow/tfjs#2079): ${line.workerError}` };
  }
  if (name === 'tensorflow-gpu') {
    const cudaMissing = /Could not load dynamic library 'libcud/.test(o.stderr);
    const gpuCreated = /Created (TensorFlow )?device.*GPU:0/.test(o.stderr);
    if (!gpuCreated) {
      return {
        name, ok: false,
        reason: cudaMissing
          ? 'loaded, but the CUDA 11 / cuDNN 8 libraries are missing, so libtensorflow would run on CPU kernels'
          : 'loaded, but no GPU device was created (libtensorflow runs on CPU)',
      };
    }
    return { name, ok: true, reason: 'GPU device created by libtensorflow', detail: line.detail };
  }
  return { name, ok: true, reason: 'initialised and ran a test matmul', detail: line.detail };
}
