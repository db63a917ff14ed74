/**
 * Entry of one rank (a worker thread of the runner process, bundled as dist/validation-worker.js). It owns its own
 * tfjs engine, trains each mode the runner asks for, and exchanges tensors with the other ranks through the ring.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Ring } from '../collectives/ring';
import { buildLayout } from '../model/layout';
import { TransformerOps } from '../model/forward';
import type { BackendName, RunShape, ValidationMode } from '../types';
import { initBackend } from './backend';
import { trainMode } from '../train/trainer';
import { faultFromEnv } from './fault';

export interface WorkerInit {
  readonly rank: number;
  readonly mailboxes: readonly SharedArrayBuffer[];
  readonly shape: RunShape;
  readonly backend: BackendName;
  readonly assetsDir: string;
}

export type ToWorker = { type: 'run'; mode: ValidationMode; steps: number } | { type: 'exit' };
export type FromWorker =
  | { type: 'ready'; rank: number; backend: BackendName; detail: string; constantsBytes: number }
  | { type: 'step'; rank: number; mode: ValidationMode; step: number; loss: number }
  | { type: 'result'; rank: number; mode: ValidationMode; result: Awaited<ReturnType<typeof trainMode>> }
  | { type: 'error'; rank: number; message: string };

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) return;
  const init = workerData as WorkerInit;
  const post = (m: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
  // Test hook: rank 0 stays in its start-up for good (the runner's start deadline must end the run).
  if (init.rank === 0 && faultFromEnv() === 'stall') { setInterval(() => undefined, 60_000); return; }
  try {
    const { tf, backend, detail } = await initBackend(init.backend, init.assetsDir);
    const layout = buildLayout(init.shape.model, init.shape.ranks);
    const ring = new Ring(init.rank, init.shape.ranks, init.mailboxes);
    const before = tf.memory().numBytes;
    const ops = new TransformerOps(tf, init.shape.model, init.shape.seqLen, init.shape.microBatch);
    post({ type: 'ready', rank: init.rank, backend, detail, constantsBytes: tf.memory().numBytes - before });
    port.on('message', (msg: ToWorker) => {
      if (msg.type === 'exit') {
        ops.dispose();
        port.close();
        return;
      }
      const ctx = { tf, ops, layout, ring, shape: init.shape, mode: msg.mode };
      if (init.rank === 0 && faultFromEnv() === 'worker') {
        post({ type: 'error', rank: 0, message: 'injected fault: rank 0 failed in its first step' });
        return;
      }
      trainMode(ctx, msg.steps, (step, loss) => post({ type: 'step', rank: init.rank, mode: msg.mode, step, loss }))
        .then((result) => post({ type: 'result', rank: init.rank, mode: msg.mode, result }, [result.params.buffer as ArrayBuffer]))
        .catch((e: unknown) => post({ type: 'error', rank: init.rank, message: e instanceof Error ? e.stack ?? e.message : String(e) }));
    });
  } catch (e) {
    post({ type: 'error', rank: init.rank, message: e instanceof Error ? e.message : String(e) });
  }
}

void main();
