/**
 * The short-lived backend probe (bundled as dist/backend-probe.js): `node backend-probe.js <backend>` tries to start
 * one backend and run a small matmul, then prints one JSON line. Native backends write to the process's stderr and
 * can crash it, which is why this runs in its own child process; the parent classifies the outcome.
 */
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { NATIVE_PACKAGE_NAMES } from '../probe/packages';
import { BACKEND_ORDER, type BackendName } from '../types';
import { initBackend } from './backend';

export interface ProbeLine {
  readonly name: BackendName;
  readonly loaded: boolean;
  readonly backend?: string;
  readonly detail?: string;
  readonly error?: string;
  readonly code?: string;
  /** Set when the backend loads in the main thread but not in a worker thread. */
  readonly workerError?: string;
}

async function probe(name: BackendName): Promise<ProbeLine> {
  try {
    const ready = await initBackend(name, join(__dirname, 'assets'));
    if (ready.backend !== name) return { name, loaded: false, backend: ready.backend, detail: ready.detail, error: `${name} did not initialise` };
    const { tf } = ready;
    const y = tf.tidy(() => tf.sum(tf.matMul(tf.ones([64, 64]), tf.ones([64, 64]))));
    const value = (await y.data())[0];
    y.dispose();
    if (value !== 64 * 64 * 64) return { name, loaded: false, error: `wrong matmul result ${value}` };
    return { name, loaded: true, backend: tf.getBackend(), detail: ready.detail };
  } catch (e) {
    const err = e as { message?: string; code?: string };
    return { name, loaded: false, error: String(err?.message ?? e).split('\n')[0], code: err?.code };
  }
}

/**
 * Native addons have upstream failures inside worker threads ("Module did not self-register", tensorflow/tfjs#2079,
 * #8388), and the runner trains each rank in a worker thread, so a native backend must also start in one.
 */
function probeInWorker(name: BackendName): Promise<ProbeLine> {
  return new Promise((resolve) => {
    const w = new Worker(__filename, { workerData: { name } });
    w.once('message', (line: ProbeLine) => { resolve(line); void w.terminate(); });
    w.once('error', (e) => resolve({ name, loaded: false, error: e.message }));
    w.once('exit', (code) => resolve({ name, loaded: false, error: `worker exited with code ${code}` }));
  });
}

async function main(): Promise<void> {
  const name = (isMainThread ? process.argv[2] : (workerData as { name?: string } | null)?.name) as BackendName;
  if (!BACKEND_ORDER.includes(name)) {
    process.stdout.write(`${JSON.stringify({ name, loaded: false, error: `unknown backend ${name}` })}\n`);
    process.exit(2);
  }
  let line = await probe(name);
  if (!isMainThread) {
    parentPort?.postMessage(line);
    return;
  }
  if (line.loaded && NATIVE_PACKAGE_NAMES[name]) {
    const inWorker = await probeInWorker(name);
    if (!inWorker.loaded) line = { ...line, workerError: inWorker.error ?? 'failed' };
  }
  process.stdout.write(`${JSON.stringify(line)}\n`);
  process.exit(0);
}

void main();
