/**
 * Seconds of a layer's core attention on one rank for one micro-batch (docs/time-model.md): eager attention as its
 * batched GEMMs and memory-bound softmax and dropout; a fused kernel on its curve — under CP the load-balanced ring's
 * causal diagonal block and its unmasked off-diagonal blocks, packed samples at their own length, sliding-window layers
 * at the window's length. The backward runs 2.5× the forward's FLOPs (docs/time-model.md, five matmuls against two).
 */
import type { Plan } from '../plan/types';
import { localShare, packedSamples, slidingFraction, windowSkipsBlocks } from './kernels/attention';
import type { ringAttentionBlocks } from './kernels/ring';
import type { KernelTimers, LayerShape } from './layerCost';

/** Core attention's forward and backward seconds, the forward that selective recomputation reruns, and the ring's first block. */
export interface CoreAttention {
  fwd: number; bwd: number;
  /** Eager attention's forward (GEMMs and softmax), which selective recomputation reruns; 0 for fused kernels. */
  selective: number;
  /** The ring's first (causal) block, forward and backward: what PyTorch's K/V all-gather hides behind (0 without CP). */
  firstBlockF: number; firstBlockB: number;
}

/** Core attention of `attnF` forward FLOPs (kernels/attention.ts attentionKernelFlops) with query/key width dqk and value width dv. */
export function coreAttentionSeconds(
  plan: Plan, s: LayerShape, t: KernelTimers, attnF: number, ring: ReturnType<typeof ringAttentionBlocks>, dqk: number, dv: number,
): CoreAttention {
  const mod = plan.model;
  const T = s.tokens;
  if (t.impl === 'eager') {
    // Batched GEMMs (one strided-batched kernel over b·a/t heads): timed as one GEMM with the heads stacked along M.
    const bh = s.b * s.qHeads;
    const sq = T / s.b;
    const qk = t.gemm16(bh * sq, s.seq, dqk);
    const av = t.gemm16(bh * sq, dv, s.seq);
    // Fused scale-mask-softmax reads and writes the scores (2B per element), dropout reads, writes and keeps a 1-byte
    // mask (2B + 1); backward reads probabilities and gradient and writes one (3B), dropout's backward 2B + 1.
    const scores = T * s.seq * s.qHeads;
    const drop = mod.dropout !== false ? 2 * s.actBytes + 1 : 0;
    const softmaxF = t.hbm(scores * (2 * s.actBytes + drop));
    const softmaxB = t.hbm(scores * (3 * s.actBytes + drop));
    return { fwd: qk + av + softmaxF, bwd: 2 * (qk + av) + softmaxB, selective: qk + av + softmaxF, firstBlockF: 0, firstBlockB: 0 };
  }
  if (s.cp > 1) {
    const diag = ring.diagonalShare * attnF;
    const firstBlockF = t.attention('fwd', diag, ring.diagonalSeq, true);
    const firstBlockB = t.attention('bwd', 2.5 * diag, ring.diagonalSeq, true);
    return {
      fwd: firstBlockF + t.attention('fwd', attnF - diag, ring.offSeq, false),
      bwd: firstBlockB + t.attention('bwd', 2.5 * (attnF - diag), ring.offSeq, false),
      selective: 0, firstBlockF, firstBlockB,
    };
  }
  // Packed samples of a stated mean length attend within themselves: l²/2 scores each, (S/l)·l²/2 a sequence, on the
  // kernel's curve at length l (kernels/attention.ts packedSamples).
  const packed = packedSamples(plan.training, s.seq);
  const seq = packed ? packed.seq : s.seq;
  const F = packed ? attnF * packed.share : attnF;
  if (windowSkipsBlocks(plan) && mod.slidingWindow) {
    // The sliding layers' share of the layers runs the windowed kernel (its FLOPs on the causal curve at the window's
    // length), the others full causal attention: one layer's cost is their mix.
    const sw = mod.slidingWindow;
    const f = slidingFraction(mod);
    const wF = F * localShare(seq, sw);
    const wSeq = Math.min(seq, sw.window);
    return {
      fwd: (1 - f) * t.attention('fwd', F, seq, true) + f * t.attention('fwd', wF, wSeq, true),
      bwd: (1 - f) * t.attention('bwd', 2.5 * F, seq, true) + f * t.attention('bwd', 2.5 * wF, wSeq, true),
      selective: 0, firstBlockF: 0, firstBlockB: 0,
    };
  }
  return { fwd: t.attention('fwd', F, seq, true), bwd: t.attention('bwd', 2.5 * F, seq, true), selective: 0, firstBlockF: 0, firstBlockB: 0 };
}
