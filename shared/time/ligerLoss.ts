/**
 * The output layer and loss under Liger-Kernel's fused linear cross-entropy (liger_kernel/ops/
 * fused_linear_cross_entropy.py at 0.8.2; docs/time-model.md#the-lm-head-and-the-loss): the forward runs, chunk by chunk
 * of c token rows (shared/memory/loss.ts `ligerChunkRows`), the head's GEMM, the cross-entropy kernel that overwrites
 * the chunk's logits with their gradient, and both gradient GEMMs; the backward only hands those gradients on.
 */
import type { Plan } from '../plan/types';
import { headWeightTrains } from '../model/params';
import { ligerChunkRows } from '../memory/loss';
import { autocastCasts, autocastsWeights, autocastWeightCastBytes } from './kernels/elementwise';
import type { KernelTimers } from './layerCost';
import { emptyParts, type Parts } from './parts';

/**
 * HBM bytes per logit of Liger's cross-entropy kernel: one pass reads the 16-bit logits for the online max and sum, a
 * second reads them again and writes the gradient in place (liger_kernel/ops/cross_entropy.py
 * `liger_cross_entropy_kernel`), 3 × 2 bytes; the loss's backward reads no logits.
 */
export const LIGER_CE_BYTES_PER_LOGIT = 6;

/**
 * HBM bytes per weight element of one chunk's weight-gradient accumulation beyond the GEMM's own 16-bit output: a
 * 16-bit grad_weight is updated as `grad_weight += torch.mm(…).float()` (read the 16-bit product, write and read its
 * fp32 copy, read and write grad_weight: 2 + 4 + 4 + 2 + 2 = 14); an fp32 grad_weight is accumulated by the GEMM itself
 * (addmm, out_dtype float32, beta 1: it reads and writes 4-byte outputs instead of writing 2: 6 more).
 */
export function ligerAccumulateBytesPerWeight(fp32GradWeight: boolean): number {
  return fp32GradWeight ? 6 : 14;
}

/**
 * Forward and backward kernels of the fused head and loss for `tokens` rows on one rank (vocabulary V per rank, width
 * h). Forward, per chunk of c rows: the logits GEMM (c × V × h), the input-gradient GEMM (c × h × V), and for a head
 * that trains the weight-gradient GEMM (V × h × c) with its accumulation; the cross-entropy kernel over c·V logits;
 * under autocast each chunk's two GEMMs with the fp32 weight cast it again (the weight reaches them as `weight.t()`, a
 * view, which autocast's cache skips). Backward: nothing timed (the loss's gradient is 1; two in-place scalings
 * otherwise). Launches: six kernels per chunk and the three buffers' zero fills.
 */
export function ligerHeadParts(plan: Plan, tokens: number, V: number, h: number, t: KernelTimers): { fwd: Parts; bwd: Parts } {
  const fwd = emptyParts();
  const bwd = emptyParts();
  const trains = headWeightTrains(plan.model, plan.lora);
  const c = ligerChunkRows(tokens, V, h);
  const full = Math.floor(tokens / c);
  const rest = tokens - full * c;
  const chunkGemms = (rows: number) => t.gemm16(rows, V, h) + t.gemm16(rows, h, V) + (trains ? t.gemm16(V, h, rows) : 0);
  fwd.gemm = full * chunkGemms(c) + (rest > 0 ? chunkGemms(rest) : 0);
  const chunks = full + (rest > 0 ? 1 : 0);
  const fp32Weight = autocastsWeights(plan);
  const accumulate = trains ? chunks * V * h * ligerAccumulateBytesPerWeight(fp32Weight) : 0;
  const casts = autocastCasts(plan, trains).fwd ? chunks * 2 * autocastWeightCastBytes(V * h) : 0;
  fwd.elementwise = t.hbm(tokens * V * LIGER_CE_BYTES_PER_LOGIT + accumulate + casts);
  fwd.launch = (6 * chunks + 3) * t.params.kernelGap;
  return { fwd, bwd };
}
