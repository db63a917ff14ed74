/**
 * A small pool of analysis workers (server/analysis/worker.ts). Jobs go to an idle worker; a job whose document
 * changed again before it started is dropped (cancellation), and a worker that fails or dies is replaced while its
 * job is analysed on the main thread instead, so a request always gets an answer.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { AnalyzeInput, DocumentAnalysis } from './analyze';
import type { FromWorker, ToWorker } from './workerProtocol';

interface Job {
  readonly id: number;
  readonly input: AnalyzeInput;
  /** True when the result is no longer wanted (a newer version exists): the job is dropped before it starts. */
  readonly stale: () => boolean;
  readonly done: (a: DocumentAnalysis | undefined) => void;
}

interface Slot {
  worker: Worker;
  job?: Job;
}

/** Memory one worker may use (a hostile document cannot take the server down with it). */
const WORKER_HEAP_MB = 1024;

/** Starts one worker: the bundled dist/analysis-worker.js, or the TypeScript source through tsx (tests, bench). */
function spawnWorker(): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: WORKER_HEAP_MB };
  const bundled = join(__dirname, 'analysis-worker.js');
  if (existsSync(bundled)) return new Worker(bundled, { resourceLimits });
  const tsx = createRequire(__filename).resolve('tsx/cjs/api');
  const entry = join(__dirname, 'worker.ts');
  return new Worker(`require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(entry)});`, { eval: true, resourceLimits });
}

export class AnalysisPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  /** The last state every worker must know (replayed to a replacement worker). */
  private folders: ToWorker | undefined;
  private readonly documents = new Map<string, string>();
  private disposed = false;

  /**
   * `fallback` analyses on the main thread (a worker failed or died); `revive` gives a worker's analysis back what
   * cannot cross threads (its what-if function).
   */
  constructor(size: number, private readonly fallback: (input: AnalyzeInput) => DocumentAnalysis, private readonly revive: (a: DocumentAnalysis) => DocumentAnalysis = (a) => a) {
    for (let i = 0; i < size; i++) this.slots.push(this.start());
  }

  private start(): Slot {
    const slot: Slot = { worker: spawnWorker() };
    slot.worker.on('message', (m: FromWorker) => this.finished(slot, m));
    slot.worker.on('error', () => this.replace(slot));
    slot.worker.on('exit', () => this.replace(slot));
    slot.worker.unref();
    if (this.folders) slot.worker.postMessage(this.folders);
    for (const [uri, text] of this.documents) slot.worker.postMessage({ type: 'document', uri, text } satisfies ToWorker);
    return slot;
  }

  /** A worker died (out of memory, a crash): its job runs on the main thread, and a new worker takes its place. */
  private replace(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i < 0 || this.disposed) return;
    const job = slot.job;
    slot.job = undefined;
    this.slots[i] = this.start();
    if (job) job.done(job.stale() ? undefined : this.fallback(job.input));
    this.pump();
  }

  private finished(slot: Slot, m: FromWorker): void {
    const job = slot.job;
    slot.job = undefined;
    // An idle worker does not keep the process alive; a busy one does, until its answer arrives.
    slot.worker.unref();
    if (job && job.id === m.id) job.done(m.type === 'result' ? this.revive(m.analysis) : job.stale() ? undefined : this.fallback(job.input));
    this.pump();
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.job) continue;
      let job = this.queue.shift();
      while (job?.stale()) {
        job.done(undefined);
        job = this.queue.shift();
      }
      if (!job) return;
      slot.job = job;
      slot.worker.ref();
      slot.worker.postMessage({ type: 'analyze', id: job.id, input: job.input } satisfies ToWorker);
    }
  }

  /** Analyses in a worker; resolves undefined when the job went stale before it started. */
  analyze(input: AnalyzeInput, stale: () => boolean = () => false): Promise<DocumentAnalysis | undefined> {
    return new Promise((done) => {
      this.queue.push({ id: this.nextId++, input, stale, done });
      this.pump();
    });
  }

  /** Sends an event to every worker (and remembers what a replacement worker must know). */
  broadcast(m: ToWorker): void {
    if (m.type === 'folders') this.folders = m;
    if (m.type === 'document') {
      if (m.text === undefined) this.documents.delete(m.uri);
      else this.documents.set(m.uri, m.text);
    }
    for (const s of this.slots) s.worker.postMessage(m);
  }

  dispose(): void {
    this.disposed = true;
    for (const s of this.slots) void s.worker.terminate();
  }
}
