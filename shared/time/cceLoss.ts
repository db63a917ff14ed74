/**
 * The output layer and loss under Apple's Cut Cross-Entropy (apple/ml-cross-entropy cut_cross_entropy/cce.py at d42911f;
 * docs/time-model.md#gemms-kernelsgemmts): the logits are formed block by block in on-chip memory, never in HBM.
 */
import type { Plan } from '../plan/types';
import { headWeightTrains } from '../model/params';
import { autocastsWeights } from './kernels/elementwise';
import type { KernelTimers } from './layerCost';
import { emptyParts, type Parts } from './parts';

/**
 * Forward: one pass over every block of logits (the head's GEMM, T × V × h, with the log-sum-exp in its epilogue) and
 * the target logits' dot products. Backward: the logits formed again and both gradients, T × V × h, T × h × V and, for
 * a head that trains, V × h × T, timed at full size: CCE skips the blocks whose softmax is below its filter (bf16's
 * resolution), so the backward shown is an upper bound. Memory-bound work: under autocast the 16-bit casts of the
 * fp32 input and weight (4 + 2 bytes each) and the gradients cast back (2 + 4); the zero fills of de and dc.
 */
export function cceHeadParts(plan: Plan, tokens: number, V: number, h: number, t: KernelTimers): { fwd: Parts; bwd: Parts } {
  const fwd = emptyParts();
  const bwd = emptyParts();
  const trains = headWeightTrains(plan.model, plan.lora);
  fwd.gemm = t.gemm16(tokens, V, h);
  bwd.gemm = t.gemm16(tokens, V, h) + t.gemm16(tokens, h, V) + (trains ? t.gemm16(V, h, tokens) : 0);
  const amp = autocastsWeights(plan);
  const weights = trains ? V * h : 0;
  fwd.elementwise = t.hbm(amp ? 6 * (tokens * h + V * h) : 0);
  bwd.elementwise = t.hbm(2 * (tokens * h + weights) + (amp ? 6 * (tokens * h + weights) : 0));
  fwd.launch = 4 * t.params.kernelGap;
  bwd.launch = 5 * t.params.kernelGap;
  return { fwd, bwd };
}
