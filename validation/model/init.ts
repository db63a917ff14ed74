/**
 * Deterministic initialisation and training data, from a seed, so every rank and every mode starts from the same
 * parameters and sees the same global batch.
 */
import { rng } from '../../shared/random';
import type { Unit } from './layout';

/** Standard deviation of the normal initialisation (GPT-2's 0.02). */
export const INIT_STD = 0.02;

/** The full (padded) flat vector of one unit; the padding is zero. */
export function initUnit(u: Unit, seed: number, unitIndex: number): Float32Array {
  const out = new Float32Array(u.paddedSize);
  const next = rng((seed * 7919 + unitIndex * 104729 + 17) >>> 0);
  for (const t of u.tensors) {
    if (t.init === 'ones') out.fill(1, t.offset, t.offset + t.size);
    else if (t.init === 'normal') {
      for (let i = 0; i < t.size; i++) {
        // Box–Muller transform of two uniform draws.
        const u1 = Math.max(next(), 1e-12), u2 = next();
        out[t.offset + i] = INIT_STD * Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
      }
    }
  }
  return out;
}

/** A batch of token ids and next-token labels, row-major [batch, seqLen]. */
export interface Batch {
  readonly ids: Int32Array;
  readonly labels: Int32Array;
}

/**
 * The slice of the global batch of `step` that `rank` trains on. Sequences follow a fixed random bigram table,
 * so the loss falls as the model learns it.
 */
export function batchFor(seed: number, step: number, rank: number, microBatch: number, seqLen: number, vocab: number): Batch {
  const table = rng(seed ^ 0x5bd1e995);
  const successors = Array.from({ length: vocab }, () => [Math.floor(table() * vocab), Math.floor(table() * vocab)]);
  const ids = new Int32Array(microBatch * seqLen), labels = new Int32Array(microBatch * seqLen);
  for (let b = 0; b < microBatch; b++) {
    const sample = (step * 1_000_003 + rank * microBatch + b) >>> 0;
    const next = rng((seed * 31 + sample * 2654435761) >>> 0);
    let tok = Math.floor(next() * vocab);
    for (let t = 0; t <= seqLen; t++) {
      const nextTok = successors[tok][next() < 0.5 ? 0 : 1];
      if (t < seqLen) ids[b * seqLen + t] = tok;
      if (t > 0) labels[b * seqLen + t - 1] = tok;
      tok = nextTok;
    }
  }
  return { ids, labels };
}
