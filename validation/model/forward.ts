/**
 * Forward functions of the scaled transformer, one per flat unit (embedding, layer, head). Each takes the unit's
 * parameters as named tensors ("views" made from the unit's flat vector in JavaScript: tfjs-backend-wasm's Slice is
 * about 8× slower than building the tensors from subarrays), so tf.grads returns one gradient per parameter.
 */
import type { ModelSpec } from '../../shared/plan/types';
import {
  applyRotary, causalMask, gelu, layerNorm, makeMatMul, rmsNorm, rotaryTables, silu, type Tensor, type TF,
} from './ops';

/** The parameters of one unit by name (see layout.ts). */
export type Views = Readonly<Record<string, Tensor>>;

export interface Constants {
  readonly mask: Tensor;
  readonly cos: Tensor | null;
  readonly sin: Tensor | null;
}

export class TransformerOps {
  private readonly mm: (a: Tensor, b: Tensor) => Tensor;
  readonly constants: Constants;

  constructor(private readonly tf: TF, private readonly m: ModelSpec, private readonly seqLen: number, private readonly batch: number) {
    this.mm = makeMatMul(tf);
    const rot = m.positions === 'rotary' ? rotaryTables(seqLen, m.headDim) : null;
    this.constants = {
      mask: tf.tensor2d(causalMask(seqLen), [seqLen, seqLen]),
      cos: rot ? tf.tensor2d(rot.cos, [seqLen, m.headDim]) : null,
      sin: rot ? tf.tensor2d(rot.sin, [seqLen, m.headDim]) : null,
    };
  }

  /** Frees the constant tensors. */
  dispose(): void {
    for (const t of [this.constants.mask, this.constants.cos, this.constants.sin]) t?.dispose();
  }

  /** One named parameter of a unit. */
  private p(P: Views, name: string): Tensor {
    const t = P[name];
    if (!t) throw new Error(`parameter ${name} missing`);
    return t;
  }

  private norm(x: Tensor, P: Views, prefix: string): Tensor {
    const g = this.p(P, `${prefix}.weight`);
    if (this.m.norm === 'rmsnorm') return rmsNorm(this.tf, x, g);
    return layerNorm(this.tf, x, g, P[`${prefix}.bias`] ?? null);
  }

  private linear(x: Tensor, P: Views, w: string, b: string): Tensor {
    const y = this.mm(x, this.p(P, w));
    return P[b] ? this.tf.add(y, P[b]) : y;
  }

  /** Token (and learned position) embeddings: one-hot(ids)·wte [+ wpe] → [B·T, h]. */
  embed(P: Views, oneHotIds: Tensor): Tensor {
    const tf = this.tf, h = this.m.hiddenSize;
    const x = this.mm(oneHotIds, this.p(P, 'wte'));
    if (!P.wpe) return x;
    const withPos = tf.add(tf.reshape(x, [this.batch, this.seqLen, h]), P.wpe);
    return tf.reshape(withPos, [this.batch * this.seqLen, h]);
  }

  /** [B·T, n·d] → [B·n, T, d]. */
  private heads(x: Tensor, n: number): Tensor {
    const tf = this.tf, d = this.m.headDim;
    return tf.reshape(tf.transpose(tf.reshape(x, [this.batch, this.seqLen, n, d]), [0, 2, 1, 3]), [this.batch * n, this.seqLen, d]);
  }

  /** Repeats each KV head for its group of query heads: [B·kv, T, d] → [B·H, T, d]. */
  private repeatKv(x: Tensor): Tensor {
    const tf = this.tf, { heads, kvHeads, headDim } = this.m, g = heads / kvHeads;
    if (g === 1) return x;
    const tiled = tf.tile(tf.reshape(x, [this.batch, kvHeads, 1, this.seqLen * headDim]), [1, 1, g, 1]);
    return tf.reshape(tiled, [this.batch * heads, this.seqLen, headDim]);
  }

  /** Causal self-attention of a pre-normed input [B·T, h]. */
  private attention(x: Tensor, P: Views): Tensor {
    const tf = this.tf, { heads, kvHeads, headDim } = this.m;
    let q = this.heads(this.linear(x, P, 'wq', 'bq'), heads);
    let k = this.heads(this.linear(x, P, 'wk', 'bk'), kvHeads);
    const v = this.repeatKv(this.heads(this.linear(x, P, 'wv', 'bv'), kvHeads));
    if (this.m.qkNorm) {
      q = rmsNorm(tf, q, this.p(P, 'qnorm'));
      k = rmsNorm(tf, k, this.p(P, 'knorm'));
    }
    if (this.constants.cos && this.constants.sin) {
      q = applyRotary(tf, q, this.constants.cos, this.constants.sin);
      k = applyRotary(tf, k, this.constants.cos, this.constants.sin);
    }
    k = this.repeatKv(k);
    const scores = tf.add(tf.mul(this.mm(q, tf.transpose(k, [0, 2, 1])), 1 / Math.sqrt(headDim)), this.constants.mask);
    const ctx = this.mm(tf.softmax(scores), v);
    const merged = tf.reshape(tf.transpose(tf.reshape(ctx, [this.batch, heads, this.seqLen, headDim]), [0, 2, 1, 3]),
      [this.batch * this.seqLen, heads * headDim]);
    return this.linear(merged, P, 'wo', 'bo');
  }

  private mlp(x: Tensor, P: Views): Tensor {
    const tf = this.tf;
    const hidden = this.m.gatedMlp
      ? tf.mul(silu(tf, this.linear(x, P, 'wgate', 'bgate')), this.linear(x, P, 'wup', 'bup'))
      : gelu(tf, this.linear(x, P, 'w1', 'b1'));
    return this.linear(hidden, P, 'w2', 'b2');
  }

  /** One pre-norm transformer layer: x + attn(norm(x)), then + mlp(norm(·)). */
  layer(P: Views, x: Tensor): Tensor {
    const a = this.tf.add(x, this.attention(this.norm(x, P, 'ln1'), P));
    return this.tf.add(a, this.mlp(this.norm(a, P, 'ln2'), P));
  }

  /**
   * Final norm, LM head and mean cross-entropy, multiplied by `scale` (1/N, so that summing gradients over ranks
   * gives the gradient of the global mean loss).
   */
  headLoss(P: Views, x: Tensor, oneHotLabels: Tensor, scale: number, tiedWte: Tensor | null): Tensor {
    const tf = this.tf;
    const xf = this.norm(x, P, 'lnf');
    const w = tiedWte ? tf.transpose(tiedWte) : this.p(P, 'lm_head');
    const logits = this.mm(xf, w);
    const logp = tf.logSoftmax(logits);
    const n = this.batch * this.seqLen;
    return tf.mul(tf.sum(tf.mul(oneHotLabels, logp)), -scale / n);
  }
}
