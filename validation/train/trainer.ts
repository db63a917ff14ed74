/**
 * One rank's training in one sharding mode: DDP (ring all-reduce of gradients), ZeRO-1 (optimizer states sharded),
 * ZeRO-2 (+ gradients reduce-scattered per unit during backward) and ZeRO-3 (+ parameters sharded and all-gathered
 * per unit in forward and again in backward, as DeepSpeed stage 3 does). Rajbhandari et al. 2020 (ZeRO), §5 and §7.
 * Backward recomputes each unit's forward from its input (checkpoints at unit boundaries) so gradients, gathers and
 * reductions happen unit by unit.
 */
import type { Layout, Unit } from '../model/layout';
import { initUnit, batchFor } from '../model/init';
import type { TransformerOps, Views } from '../model/forward';
import type { Tensor, TF } from '../model/ops';
import type { Ring, Traffic } from '../collectives/ring';
import type { RunShape, ValidationMode } from '../types';
import { ADAM_DEFAULTS, adamStep, adamState, type AdamState } from './adam';

export interface RankModeResult {
  readonly parametersBytes: number;
  readonly gradientsBytes: number;
  readonly optimizerStatesBytes: number;
  readonly traffic: Readonly<Record<string, Traffic>>;
  readonly tapePeakBytes: number;
  readonly atRestBytes: number;
  readonly jsCommBufferBytes: number;
  readonly stepTimesMs: readonly number[];
  readonly losses: readonly number[];
  readonly leakedBytes: number;
  /** The full unpadded parameters after the last step (Ψ floats). */
  readonly params: Float32Array;
}

interface Ctx {
  readonly tf: TF;
  readonly ops: TransformerOps;
  readonly layout: Layout;
  readonly ring: Ring;
  readonly shape: RunShape;
  readonly mode: ValidationMode;
}

const bytesNow = (tf: TF): number => tf.memory().numBytes;

/** Copies a tensor's values (dataSync may return the backend's own buffer). */
const download = (t: Tensor): Float32Array => Float32Array.from(t.dataSync() as Float32Array);

class RankTrainer {
  private readonly units: readonly Unit[];
  private params: Tensor[];
  private readonly opt: AdamState[];
  private grads: (Tensor | null)[] = [];
  private readonly sharded: boolean;
  private jsBuffers = 0;

  constructor(private readonly c: Ctx) {
    this.units = c.layout.units;
    this.sharded = c.mode === 'zero3';
    const n = c.ring.size, r = c.ring.rank;
    this.params = this.units.map((u, i) => {
      const full = initUnit(u, c.shape.seed, i);
      const chunk = u.paddedSize / n;
      return c.tf.tensor1d(this.sharded ? full.slice(r * chunk, (r + 1) * chunk) : full);
    });
    this.opt = [];
  }

  /** Creates the optimizer states: full for DDP, this rank's shard otherwise. */
  createOptimizer(): void {
    for (const u of this.units) this.opt.push(adamState(this.c.tf, this.c.mode === 'ddp' ? u.paddedSize : u.paddedSize / this.c.ring.size));
  }

  private note(len: number): void {
    this.jsBuffers = Math.max(this.jsBuffers, 4 * len);
  }

  /** Unit i's parameters as named tensors: from a copy of the held flat tensor, or (ZeRO-3) an all-gather of the shards. */
  private gather(i: number, phase: 'forward' | 'backward'): Views {
    const own = download(this.params[i]);
    const full = this.sharded ? this.c.ring.allGather(own, `all-gather (${phase})`) : own;
    this.note(full.length);
    const out: Record<string, Tensor> = {};
    for (const t of this.units[i].tensors) out[t.name] = this.c.tf.tensor(full.subarray(t.offset, t.offset + t.size), [...t.shape]);
    return out;
  }

  private release(v: Views): void {
    for (const t of Object.values(v)) t.dispose();
  }

  /** Gradients of `f` at unit i's parameters (after `lead` inputs), as one flat padded tensor, plus the leading inputs' gradients. */
  private unitGrads(i: number, P: Views, lead: Tensor[], f: (lead: Tensor[], P: Views) => Tensor, dy?: Tensor, tail: Tensor[] = []): { flat: Tensor; lead: Tensor[]; tail: Tensor[] } {
    const { tf } = this.c, u = this.units[i], names = u.tensors.map((t) => t.name);
    return tf.tidy(() => {
      const g = tf.grads((...a: Tensor[]) => f(a.slice(0, lead.length).concat(a.slice(lead.length + names.length)),
        Object.fromEntries(names.map((n, k) => [n, a[lead.length + k]]))))([...lead, ...names.map((n) => P[n]), ...tail], dy);
      const parts = names.map((_n, k) => tf.reshape(g[lead.length + k], [u.tensors[k].size]));
      if (u.paddedSize > u.size) parts.push(tf.zeros([u.paddedSize - u.size]));
      return { flat: tf.concat(parts), lead: g.slice(0, lead.length), tail: g.slice(lead.length + names.length) };
    });
  }

  /** Stores unit i's full gradient: kept whole (DDP, ZeRO-1) or reduce-scattered to this rank's shard at once. */
  private onGrad(i: number, g: Tensor): void {
    if (this.c.mode === 'ddp' || this.c.mode === 'zero1') {
      this.grads[i] = g;
      return;
    }
    const data = download(g);
    g.dispose();
    this.note(data.length);
    this.grads[i] = this.c.tf.tensor1d(this.c.ring.reduceScatter(data, 'reduce-scatter (gradients)'));
  }

  /** Forward with checkpoints and backward unit by unit; returns the local loss (mean over the rank's tokens). */
  private forwardBackward(ids: Tensor, labels: Tensor): number {
    const { tf, ops, shape } = this.c, L = this.units.length - 1, n = this.c.ring.size, scale = 1 / n;
    const tied = shape.model.tiedEmbeddings;
    this.grads = this.units.map(() => null);
    // Forward: keep the input of every unit (activation checkpoints).
    const xs: Tensor[] = [];
    let embed = this.gather(0, 'forward');
    const e0 = embed;
    xs.push(tf.tidy(() => ops.embed(e0, ids)));
    if (!tied) this.release(embed);
    for (let i = 1; i < L; i++) {
      const P = this.gather(i, 'forward'), x = xs[i - 1];
      xs.push(tf.tidy(() => ops.layer(P, x)));
      this.release(P);
    }
    const headF = this.gather(L, 'forward');
    const lossT = tf.tidy(() => ops.headLoss(headF, xs[L - 1], labels, scale, tied ? e0.wte : null));
    const loss = lossT.dataSync()[0] * n;
    lossT.dispose();
    this.release(headF);
    if (tied) this.release(embed);
    // Backward: re-gather, recompute and differentiate each unit, last to first.
    const headB = this.gather(L, 'backward');
    if (tied) embed = this.gather(0, 'backward');
    const e1 = embed;
    const head = this.unitGrads(L, headB, [xs[L - 1]], ([x, wte], P) => ops.headLoss(P, x, labels, scale, wte ?? null), undefined, tied ? [e1.wte] : []);
    this.release(headB);
    this.onGrad(L, head.flat);
    const tiedGrad = head.tail[0] ?? null;
    let dy = head.lead[0];
    for (let i = L - 1; i >= 1; i--) {
      const P = this.gather(i, 'backward');
      const g = this.unitGrads(i, P, [xs[i - 1]], ([x], V) => ops.layer(V, x), dy);
      dy.dispose();
      xs[i].dispose();
      this.release(P);
      this.onGrad(i, g.flat);
      dy = g.lead[0];
    }
    const embedB = tied ? e1 : this.gather(0, 'backward');
    // The tied LM head's gradient joins the embedding's: d(wte) = d(embedding lookup) + d(head).
    const ge = this.unitGrads(0, embedB, [], (_, V) => ops.embed(V, ids), dy);
    const dEmbed = tiedGrad ? tf.tidy(() => tf.add(ge.flat, tf.concat([tf.reshape(tiedGrad, [-1]), tf.zeros([this.units[0].paddedSize - tiedGrad.size])]))) : ge.flat;
    if (dEmbed !== ge.flat) ge.flat.dispose();
    tiedGrad?.dispose();
    dy.dispose();
    xs[0].dispose();
    this.release(embedB);
    this.onGrad(0, dEmbed);
    return loss;
  }

  /** Reduces the remaining gradients, runs Adam on what this rank owns and refreshes the full parameters. */
  private optimizerStep(t: number): void {
    const { tf, ring, mode } = this.c, n = ring.size, r = ring.rank;
    this.units.forEach((u, i) => {
      let g = this.grads[i] as Tensor;
      if (mode === 'ddp') {
        const data = download(g);
        g.dispose();
        this.note(2 * data.length);
        g = tf.tensor1d(ring.allReduce(data, 'all-reduce (gradients)'));
        this.params[i] = adamStep(tf, ADAM_DEFAULTS, t, this.params[i], g, this.opt[i]);
      } else if (mode === 'zero3') {
        this.params[i] = adamStep(tf, ADAM_DEFAULTS, t, this.params[i], g, this.opt[i]);
      } else {
        const chunk = u.paddedSize / n;
        if (mode === 'zero1') {
          const data = download(g);
          g.dispose();
          this.note(data.length);
          g = tf.tensor1d(ring.reduceScatter(data, 'reduce-scatter (gradients)'));
        }
        // The owned slice is copied in JavaScript: tfjs-backend-wasm's Slice is slow (see model/forward.ts).
        const own = tf.tensor1d(download(this.params[i]).subarray(r * chunk, (r + 1) * chunk));
        const updated = adamStep(tf, ADAM_DEFAULTS, t, own, g, this.opt[i]);
        const full = ring.allGather(download(updated), 'all-gather (parameters)');
        this.note(full.length);
        updated.dispose();
        this.params[i].dispose();
        this.params[i] = tf.tensor1d(full);
      }
      g.dispose();
      this.grads[i] = null;
    });
  }

  /** One optimizer step; returns the loss and the gradient bytes held at the end of backward. */
  step(t: number): { loss: number; gradBytes: number } {
    const { tf, shape, ring } = this.c, V = shape.model.vocabSize;
    const batch = batchFor(shape.seed, t - 1, ring.rank, shape.microBatch, shape.seqLen, V);
    // tfjs-backend-wasm 4.22's OneHot writes int32 bits whatever the dtype, so cast an int32 one-hot instead.
    const oneHot = (x: Int32Array) => tf.tidy(() => tf.cast(tf.oneHot(tf.tensor1d(x, 'int32'), V), 'float32'));
    const ids = oneHot(batch.ids), labels = oneHot(batch.labels);
    const before = bytesNow(tf);
    const loss = this.forwardBackward(ids, labels);
    const gradBytes = bytesNow(tf) - before;
    this.optimizerStep(t);
    ids.dispose();
    labels.dispose();
    return { loss, gradBytes };
  }

  /** Full unpadded parameters, all-gathered without counting the traffic when sharded. */
  finalParams(): Float32Array {
    const out = new Float32Array(this.c.layout.parameters);
    let at = 0;
    this.c.ring.counting = false;
    this.units.forEach((u, i) => {
      const full = this.sharded ? this.c.ring.allGather(download(this.params[i]), 'check') : download(this.params[i]);
      out.set(full.subarray(0, u.size), at);
      at += u.size;
    });
    this.c.ring.counting = true;
    return out;
  }

  dispose(): void {
    for (const p of this.params) p.dispose();
    for (const s of this.opt) { s.m.dispose(); s.v.dispose(); }
    this.params = [];
  }

  get commBufferBytes(): number { return this.jsBuffers; }
}

/** Trains `steps` steps in one mode on this rank and measures it. The last step runs under tf.profile. */
export async function trainMode(c: Ctx, steps: number, onStep: (step: number, loss: number) => void): Promise<RankModeResult> {
  const { tf } = c;
  const b0 = bytesNow(tf);
  const trainer = new RankTrainer(c);
  const b1 = bytesNow(tf);
  trainer.createOptimizer();
  const b2 = bytesNow(tf);
  const losses: number[] = [], times: number[] = [];
  let gradientsBytes = 0, peak = 0, traffic: Record<string, Traffic> = {};
  for (let t = 1; t <= steps; t++) {
    c.ring.traffic.clear();
    const start = performance.now();
    let r = { loss: 0, gradBytes: 0 };
    if (t === steps) {
      const profile = await tf.profile(() => { r = trainer.step(t); return []; });
      peak = profile.peakBytes;
    } else r = trainer.step(t);
    times.push(performance.now() - start);
    gradientsBytes = Math.max(gradientsBytes, r.gradBytes);
    losses.push(r.loss);
    traffic = Object.fromEntries([...c.ring.traffic].map(([k, v]) => [k, { ...v }]));
    onStep(t, r.loss);
  }
  const leakedBytes = bytesNow(tf) - b2;
  const params = trainer.finalParams();
  const result: RankModeResult = {
    parametersBytes: b1 - b0,
    gradientsBytes,
    optimizerStatesBytes: b2 - b1,
    traffic,
    tapePeakBytes: peak,
    atRestBytes: b2,
    jsCommBufferBytes: trainer.commBufferBytes,
    stepTimesMs: times.length > 1 ? times.slice(0, -1) : times,
    losses,
    leakedBytes,
    params,
  };
  trainer.dispose();
  return result;
}
