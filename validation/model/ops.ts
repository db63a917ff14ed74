/**
 * Building blocks of the scaled transformer in TensorFlow.js ops. The tf namespace is passed in, so the same code
 * runs on the bundled tfjs-core (wasm, cpu) and on @tensorflow/tfjs-node(-gpu).
 */
import type * as TFNS from '@tensorflow/tfjs-core';

export type TF = typeof TFNS;
export type Tensor = TFNS.Tensor;

/**
 * Matrix product whose gradient uses explicit transposes: tfjs-backend-wasm 4.22 runs BatchMatMul with transpose flags
 * 5–12× slower than transpose() followed by matMul (measured, tfjs-notes.md §2).
 */
export function makeMatMul(tf: TF): (a: Tensor, b: Tensor) => Tensor {
  const perm = (r: number) => (r === 2 ? [1, 0] : [0, 2, 1]);
  const f = (a: Tensor, b: Tensor, save: (ts: Tensor[]) => void) => {
    save([a, b]);
    return {
      value: tf.matMul(a, b),
      gradFunc: (dy: Tensor, saved: Tensor[]) => {
        const [sa, sb] = saved;
        return [tf.matMul(dy, tf.transpose(sb, perm(sb.rank))), tf.matMul(tf.transpose(sa, perm(sa.rank)), dy)];
      },
    };
  };
  return tf.customGrad(f as unknown as Parameters<TF["customGrad"]>[0]) as unknown as (a: Tensor, b: Tensor) => Tensor;
}

/** LayerNorm over the last axis: (x − μ)/√(σ² + ε)·g + b. */
export function layerNorm(tf: TF, x: Tensor, g: Tensor, b: Tensor | null, eps = 1e-5): Tensor {
  const { mean, variance } = tf.moments(x, -1, true);
  const y = tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, eps))), g);
  return b ? tf.add(y, b) : y;
}

/** RMSNorm over the last axis: x/√(mean(x²) + ε)·g. */
export function rmsNorm(tf: TF, x: Tensor, g: Tensor, eps = 1e-6): Tensor {
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(tf.mean(tf.square(x), -1, true), eps))), g);
}

/** GELU, tanh approximation (GPT-2): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
export function gelu(tf: TF, x: Tensor): Tensor {
  const inner = tf.mul(tf.add(x, tf.mul(tf.pow(x, 3), 0.044715)), Math.sqrt(2 / Math.PI));
  return tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(inner), 1));
}

/** SiLU: x·σ(x). */
export function silu(tf: TF, x: Tensor): Tensor {
  return tf.mul(x, tf.sigmoid(x));
}

/** Rotary tables cos, sin of shape [T, d] (rotate-half convention, base 10000). */
export function rotaryTables(seqLen: number, headDim: number): { cos: Float32Array; sin: Float32Array } {
  const half = headDim / 2;
  const cos = new Float32Array(seqLen * headDim), sin = new Float32Array(seqLen * headDim);
  for (let t = 0; t < seqLen; t++) {
    for (let i = 0; i < half; i++) {
      const angle = t / Math.pow(10000, (2 * i) / headDim);
      for (const j of [i, i + half]) {
        cos[t * headDim + j] = Math.cos(angle);
        sin[t * headDim + j] = Math.sin(angle);
      }
    }
  }
  return { cos, sin };
}

/** Applies rotary embeddings to x of shape [BH, T, d]: x·cos + rotate_half(x)·sin. */
export function applyRotary(tf: TF, x: Tensor, cos: Tensor, sin: Tensor): Tensor {
  const [bh, t, d] = x.shape;
  const x1 = tf.slice(x, [0, 0, 0], [bh, t, d / 2]);
  const x2 = tf.slice(x, [0, 0, d / 2], [bh, t, d / 2]);
  return tf.add(tf.mul(x, cos), tf.mul(tf.concat([tf.neg(x2), x1], 2), sin));
}

/** Additive causal mask [T, T]: 0 on and below the diagonal, −1e9 above. */
export function causalMask(seqLen: number): Float32Array {
  const m = new Float32Array(seqLen * seqLen);
  for (let i = 0; i < seqLen; i++) for (let j = i + 1; j < seqLen; j++) m[i * seqLen + j] = -1e9;
  return m;
}
