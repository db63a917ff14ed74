/**
 * Adam on flat fp32 tensors (a full unit or one rank's shard). Written here rather than with tf.train.adam so that
 * the optimizer state is exactly two fp32 tensors the size of what the rank owns: 8 bytes per owned parameter
 * (Kingma & Ba 2015, Algorithm 1). The step count is a JavaScript number, so no scalar tensors stay alive.
 */
import type { Tensor, TF } from '../model/ops';

export interface AdamConfig {
  readonly lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
}

export const ADAM_DEFAULTS: AdamConfig = { lr: 3e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8 };

export interface AdamState { m: Tensor; v: Tensor }

/** Zero first and second moments for `size` parameters. */
export function adamState(tf: TF, size: number): AdamState {
  return { m: tf.zeros([size]), v: tf.zeros([size]) };
}

/**
 * One Adam update at step t (1-based): m ← β1·m + (1−β1)·g; v ← β2·v + (1−β2)·g²;
 * θ ← θ − lr·(m/(1−β1ᵗ)) / (√(v/(1−β2ᵗ)) + ε). Disposes the old θ, m and v; returns the new θ.
 */
export function adamStep(tf: TF, c: AdamConfig, t: number, param: Tensor, grad: Tensor, s: AdamState): Tensor {
  const [p, m, v] = tf.tidy(() => {
    const m1 = tf.add(tf.mul(s.m, c.beta1), tf.mul(grad, 1 - c.beta1));
    const v1 = tf.add(tf.mul(s.v, c.beta2), tf.mul(tf.square(grad), 1 - c.beta2));
    const mHat = tf.mul(m1, c.lr / (1 - Math.pow(c.beta1, t)));
    const denom = tf.add(tf.sqrt(tf.mul(v1, 1 / (1 - Math.pow(c.beta2, t)))), c.eps);
    return [tf.sub(param, tf.div(mHat, denom)), m1, v1];
  });
  param.dispose();
  s.m.dispose();
  s.v.dispose();
  s.m = m;
  s.v = v;
  return p;
}
