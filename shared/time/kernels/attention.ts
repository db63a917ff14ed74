/**
 * Core attention (softmax(QKᵀ)V) seconds: fused kernels (FlashAttention-2/3, cuDNN) from published efficiency curves by
 * sequence length, head dim and causal mask (data/time/kernels.json: Shah et al. 2024 Figs. 5–6, Dao 2023 §4.1), or
 * eager attention as two batched GEMMs plus a memory-bound softmax.
 */
import kernels from '../../../data/time/kernels.json';
import type { Plan } from '../../plan/types';

export type AttentionImpl = 'eager' | 'fa2' | 'fa3' | 'cudnn';
type Curves = Readonly<Record<string, Readonly<Record<'fwd' | 'bwd', Readonly<Record<string, readonly number[]>>>>>>;
const A = kernels.attention as unknown as { seqLens: readonly number[] } & Readonly<Record<string, Curves>>;

/**
 * The kernel an engine runs: eager without flash attention; Transformer Engine's cuDNN fused attention under
 * Megatron/NeMo on Hopper and Blackwell (TE's default backend there); PyTorch SDPA's FlashAttention-2 otherwise
 * (torchtitan, HF Trainer, DeepSpeed, llm-foundry's flash path).
 */
export function attentionImpl(plan: Plan): AttentionImpl {
  if (!plan.training.flashAttention) return 'eager';
  const arch = plan.cluster.gpu.arch ?? 'hopper';
  if (plan.engine === 'megatron' && (arch === 'hopper' || arch === 'blackwell')) return 'cudnn';
  return 'fa2';
}

/** Linear interpolation of a curve over log2(sequence length), clamped at the ends. */
function onCurve(ys: readonly number[], seq: number): number {
  const xs = A.seqLens;
  const x = Math.log2(Math.max(1, seq));
  if (x <= Math.log2(xs[0])) return ys[0] * Math.max(0.25, seq / xs[0]);
  for (let i = 1; i < xs.length; i++) {
    const hi = Math.log2(xs[i]);
    if (x <= hi) {
      const lo = Math.log2(xs[i - 1]);
      return ys[i - 1] + ((x - lo) / (hi - lo)) * (ys[i] - ys[i - 1]);
    }
  }
  return ys[ys.length - 1];
}

/**
 * Achieved fraction of the dense bf16 peak of a fused attention kernel: the curve of the GPU's architecture and
 * kernel (FA2 where the kernel has no curve there), interpolated between head dims 64 and 128; backward causal = the
 * backward full curve × the forward causal/full ratio (the paper shows backward without mask).
 */
export function flashFraction(arch: string, impl: Exclude<AttentionImpl, 'eager'>, pass: 'fwd' | 'bwd', seq: number, headDim: number, causal: boolean): number {
  const byArch = A[arch] ?? A.hopper;
  const c = byArch[impl] ?? byArch.fa2 ?? A.hopper.fa2;
  const at = (hd: number): number => {
    const full = onCurve(c[pass][`full${hd}`], seq);
    if (!causal) return full;
    if (pass === 'fwd') return onCurve(c.fwd[`causal${hd}`], seq);
    return full * (onCurve(c.fwd[`causal${hd}`], seq) / onCurve(c.fwd[`full${hd}`], seq));
  };
  const lo = at(64);
  const hi = at(128);
  const f = Math.min(1, Math.max(0, (Math.log2(Math.max(64, Math.min(128, headDim))) - 6)));
  return lo + f * (hi - lo);
}

/**
 * Forward FLOPs a fused kernel performs for one rank: 4·T·S·heads·d with T queries of the rank and S keys, halved under
 * a causal mask (the FlashAttention papers' convention; backward is 2.5× forward, five matmuls instead of two).
 */
export function attentionKernelFlops(queries: number, keys: number, heads: number, headDim: number, causal: boolean): number {
  return 4 * queries * keys * heads * headDim * (causal ? 0.5 : 1);
}
