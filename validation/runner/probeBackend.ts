/**
 * The short-lived backend probe (bundled as dist/backend-probe.js): `node backend-probe.js <backend>` tries to start
 * one backend and run a small matmul, then prints one JSON line. Native backends write to the process's stderr and
 * can crash it, which is why this runs in its own child process; the parent classifies the outcome.
 */
import { join } from 'node:path';
import { BACKEND_ORDER, type BackendName } from '../types';
import { initBackend } from './backend';

export interface ProbeLine {
  readonly name: BackendName;
  readonly loaded: boolean;
  readonly backend?: string;
  readonly detail?: string;
  readonly error?: string;
  readonly code?: string;
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

const name = process.argv[2] as BackendName;
if (!BACKEND_ORDER.includes(name)) {
  process.stdout.write(`${JSON.stringify({ name, loaded: false, error: `unknown backend ${name}` })}\n`);
  process.exit(2);
}
void probe(name).then((line) => {
  process.stdout.write(`${JSON.stringify(line)}\n`);
  process.exit(0);
});
