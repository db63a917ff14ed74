/**
 * Core attention (softmax(QKᵀ)V) seconds: fused kernels (FlashAttention-2/3, cuDNN) from published efficiency curves by
 * sequence length, head dim and causal mask (data/time/kernels.json: Shah et al. 2024 Figs. 5–6, Dao 2023 §4.1), or
 * eager attention as two batched GEMMs plus a memory-bound softmax.
 */
import kernels from '../../../data/time/kernels.json';
import type { ModelSpec, Plan, TrainingSpec } from '../../plan/types';

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
 * Width in tokens of the tiles that straddle the causal diagonal in FlashAttention-2 at head dim 128: the forward's
 * query block kBlockM = 128 and the backward's key block kBlockN = 128 (Dao-AILab/flash-attention
 * csrc/flash_attn/src/flash_fwd_launch_template.h and flash_bwd_launch_template.h, `run_mha_fwd_hdim128`,
 * `run_mha_bwd_hdim128` on sm80/sm90).
 */
export const FA2_DIAGONAL_TILE = 128;

/**
 * Share of a causal FlashAttention-2 kernel's computed tiles that is useful work: the tiles on the diagonal are
 * computed whole and masked, so over S tokens the kernel computes S²/2 + S·b/2 score elements for S²/2 useful ones,
 * S / (S + b) with b = FA2_DIAGONAL_TILE (first principles: tiling of the lower triangle).
 */
export function causalDiagonalShare(seq: number, tile: number = FA2_DIAGONAL_TILE): number {
  return seq > 0 ? seq / (seq + tile) : 0;
}

/**
 * FlashAttention-2's causal backward, as a fraction of its unmasked backward at the same length: the forward curves'
 * causal/full ratio without the forward's scheduling tail, min(1, r(S) / (r(S_max) / diag(S_max))), r the forward
 * causal/full ratio of the curve, S_max its longest length, diag = causalDiagonalShare.
 *
 * Why: the forward launches its query row blocks in order, lightest first (grid (⌈S/kBlockM⌉, b, h), row block
 * m = blockIdx.x visits the m + 1 key blocks up to the diagonal, flash_fwd_launch_template.h `run_flash_fwd`), so its
 * heaviest blocks start last and the kernel ends on a tail; at S_max = 16k the diagonal tiles cost 0.8 % (diag) but
 * Shah et al. 2024 Fig. 5 shows FA2's causal forward at 0.905 of the unmasked one, the rest being that tail. The
 * backward launches its key column blocks in order too, but column block n visits the query blocks from the diagonal
 * down (m_block_min = n·kBlockN/kBlockM under the causal mask, flash_bwd_kernel.h), so the heaviest start first (longest
 * processing time first) and the tail is one light block: what remains is the diagonal and, at short lengths, what
 * the forward ratio shows beyond its tail. Other kernels (cuDNN, FA3) schedule otherwise and keep the forward ratio.
 */
export function fa2CausalBackwardRatio(ratio: (seq: number) => number, seq: number, longest: number): number {
  const tail = ratio(longest) / causalDiagonalShare(longest);
  return Math.min(1, ratio(seq) / tail);
}

/**
 * The head dim a kernel is compiled for and runs a head of `headDim` at: FlashAttention-2 rounds it up to a multiple
 * of 32 up to 192, else 256 (flash-attention csrc/flash_attn/flash_api.cpp `head_size_rounded`, whose copy PyTorch's
 * SDPA flash backend runs; the Triton kernels round to the next power of two, the same for the head dims models
 * use), FlashAttention-3 to 64, 96, 128, 192 or 256 (hopper/flash_api.cpp `round_up_headdim`); cuDNN runs multiples
 * of 8 as they are.
 */
export function kernelHeadDim(kernel: Exclude<AttentionImpl, 'eager'>, headDim: number): number {
  const d = Math.max(1, Math.ceil(headDim));
  if (kernel === 'cudnn') return Math.ceil(d / 8) * 8;
  if (kernel === 'fa3') return [64, 96, 128, 192, 256].find((k) => d <= k) ?? d;
  return d <= 192 ? Math.ceil(d / 32) * 32 : Math.max(256, d);
}

/**
 * Achieved fraction of the dense bf16 peak of a fused attention kernel: the curve of the GPU's architecture and
 * kernel (FA2 where the kernel has no curve there) at the head dim the kernel runs (kernelHeadDim), interpolated
 * between head dims 64 and 128, times the share of it the model's heads use (a head of 112 runs the 128 kernel, 7/8 of
 * its work useful); backward causal = the backward full curve × the forward causal/full ratio (the paper shows
 * backward without mask), for FlashAttention-2 without the forward's scheduling tail (fa2CausalBackwardRatio).
 */
export function flashFraction(arch: string, impl: Exclude<AttentionImpl, 'eager'>, pass: 'fwd' | 'bwd', seq: number, headDim: number, causal: boolean): number {
  const byArch = A[arch] ?? A.hopper;
  const kernel = byArch[impl] ? impl : 'fa2';
  const c = byArch[impl] ?? byArch.fa2 ?? A.hopper.fa2;
  const at = (hd: number): number => {
    const full = onCurve(c[pass][`full${hd}`], seq);
    if (!causal) return full;
    if (pass === 'fwd') return onCurve(c.fwd[`causal${hd}`], seq);
    const ratio = (s: number): number => onCurve(c.fwd[`causal${hd}`], s) / onCurve(c.fwd[`full${hd}`], s);
    if (kernel === 'fa2') return full * fa2CausalBackwardRatio(ratio, seq, A.seqLens[A.seqLens.length - 1]);
    return full * ratio(seq);
  };
  const lo = at(64);
  const hi = at(128);
  const run = kernelHeadDim(impl, headDim);
  const f = Math.min(1, Math.max(0, (Math.log2(Math.max(64, Math.min(128, run))) - 6)));
  return (lo + f * (hi - lo)) * Math.min(1, headDim / run);
}

/**
 * Forward FLOPs a fused kernel performs for one rank: 4·T·S·heads·d with T queries of the rank and S keys, halved under
 * a causal mask (the FlashAttention papers' convention; backward is 2.5× forward, five matmuls instead of two).
 */
export function attentionKernelFlops(queries: number, keys: number, heads: number, headDim: number, causal: boolean): number {
  return 4 * queries * keys * heads * headDim * (causal ? 0.5 : 1);
}

/**
 * Keys one sequence's queries attend to under a causal sliding window of w keys (the query itself included, as
 * FlashAttention-2 `window_size=(w − 1, 0)` and transformers' sliding masks count it): Σᵢ min(i + 1, w) =
 * s(s + 1)/2 when s ≤ w, else w(w + 1)/2 + (s − w)·w; as a share of the causal s²/2 the kernel FLOPs count, at most 1.
 */
export function slidingWindowShare(seq: number, window: number): number {
  const s = Math.max(1, seq), w = Math.max(1, window);
  const keys = s <= w ? (s * (s + 1)) / 2 : (w * (w + 1)) / 2 + (s - w) * w;
  return Math.min(1, keys / ((s * s) / 2));
}

/**
 * Keys one sequence's queries attend to under chunked attention of c tokens (Llama 4): each query sees its own chunk
 * up to itself, k·c(c + 1)/2 + r(r + 1)/2 for k whole chunks and r tokens left; as a share of the causal s²/2, at most 1.
 */
export function chunkedShare(seq: number, chunk: number): number {
  const s = Math.max(1, seq), c = Math.max(1, chunk);
  const k = Math.floor(s / c), r = s - k * c;
  return Math.min(1, ((k * c * (c + 1)) / 2 + (r * (r + 1)) / 2) / ((s * s) / 2));
}

/** The share of the model's layers that slide (or attend within chunks): slidingLayers / layers, 0 without a window. */
export function slidingFraction(m: Pick<ModelSpec, 'layers' | 'slidingWindow'>): number {
  return m.slidingWindow ? Math.min(1, m.slidingWindow.slidingLayers / Math.max(1, m.layers)) : 0;
}

/**
 * Packed samples that attend only within themselves (`training.packing` varlen) with a stated mean length l
 * (`training.sampleTokens`, the setting shardlens.sampleTokens) shorter than the sequence S: the S/l samples of a
 * sequence cost (S/l)·l²/2 scores, a share l/S of one S-token causal sequence, and the kernel runs at length l
 * (FlashAttention's variable-length kernel). Samples of equal length are assumed: a spread of lengths costs more (the
 * mean of l² is at least the square of the mean), which the estimate says. Undefined where nothing of this applies.
 */
export function packedSamples(t: Pick<TrainingSpec, 'packing' | 'sampleTokens' | 'flashAttention'>, seq: number): { share: number; seq: number } | undefined {
  const l = t.sampleTokens;
  if (t.packing !== 'varlen' || !t.flashAttention || l === undefined || !(l > 0) || !(l < seq)) return undefined;
  return { share: l / seq, seq: l };
}

/** The keys a sequence's queries see in a sliding layer, as a share of causal attention: window or chunks. */
export function localShare(seq: number, sw: { readonly window: number; readonly chunked?: boolean }): number {
  return sw.chunked ? chunkedShare(seq, sw.window) : slidingWindowShare(seq, sw.window);
}

/** Whether the kernel skips the blocks a sliding window masks (shared/memory/engine.ts, which the memory model shares). */
export { windowSkipsBlocks } from '../../memory/engine';
