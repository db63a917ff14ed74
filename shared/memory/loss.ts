/**
 * The output layer and the loss as each engine computes them: which copies of the logits coexist in the loss's
 * forward, which stay saved for backward, and which coexist in its backward. n = logit elements on one rank for one
 * micro-batch = b · s/cp · V/t (the vocabulary is split over TP by Megatron's vocab-parallel loss and torchtitan's
 * loss_parallel; TP-replicated otherwise). Sources and the engines' code paths: docs/engine-memory.md#the-loss.
 */
import type { LossFusion, ModelImpl } from '../plan/types';

/**
 * How the logits become a loss: 'upcast' — bf16 logits, an fp32 copy, log_softmax and nll_loss as separate kernels
 * (torchtitan `cross_entropy(pred.flatten(0, 1).float(), …)`, transformers ForCausalLMLoss); 'compiled' — the same
 * graph fused by torch.compile (torchtitan's compiled loss); 'megatron' — vocab_parallel_cross_entropy (an fp32 copy
 * turned into the softmax in place, the gradient formed in place); 'parallel' — torchtitan's loss_parallel with TP, the
 * DTensor log_softmax written as separate ops (torch/distributed/tensor/parallel/loss.py `_log_softmax`:
 * shifted = x − max, exp, log-sum-exp, result); 'native' / 'te' — Megatron's fused cross-entropy
 * (`--cross-entropy-loss-fusion`), which never materialises fp32 logits; 'chunked' — the compiled loss run over C
 * chunks of the tokens (torchtune's chunked losses under compile: the backward frees each chunk's saved logits as it
 * makes that chunk's gradient); 'chunked-eager' — the same chunks without compile, each upcast to fp32 with its
 * log_softmax output saved (torchtune/modules/loss/ce_chunked_output_loss.py); 'liger' — Liger-Kernel's fused linear
 * cross-entropy, which runs the output layer and the loss together chunk by chunk and never keeps the logits
 * (`ligerLossBytes`); 'cce' — Apple's Cut Cross-Entropy, which forms the logits block by block in on-chip memory in both
 * passes (`cceLossBytes`); the three functions below give these two nothing of their own.
 */
export type LossImpl = 'upcast' | 'parallel' | 'compiled' | 'megatron' | 'native' | 'te' | 'chunked' | 'chunked-eager' | 'liger' | 'cce';

/** Chunks of torchtune's chunked losses (num_output_chunks, torchtune/modules/loss: 8 by default). */
export const LOSS_CHUNKS = 8;

/** The loss implementation of a plan: the stated fusion, else the model implementation's. */
export function lossImplOf(impl: ModelImpl, fusion: LossFusion | undefined, tp: number): LossImpl {
  if (fusion === 'native' || fusion === 'te' || fusion === 'compiled' || fusion === 'chunked' || fusion === 'chunked-eager' || fusion === 'liger' || fusion === 'cce') return fusion;
  if (impl === 'megatron') return 'megatron';
  return impl === 'torchtitan' && tp > 1 ? 'parallel' : 'upcast';
}

/**
 * Loss forward, all copies live at once: upcast (2 + 4 + 4)·n — the model's logits, the fp32 copy and
 * log_softmax's output (aten log_softmax; with fp32 logits the copy is the logits: 4 + 4); parallel
 * (2 + 4·3)·n — the fp32 copy, x − max and exp(x − max) before its sum (then the result replaces the exp); compiled 2n + the
 * per-token logsumexp; megatron (2 + 4)·n (the fp32 copy is reused in place for max, exp and the division,
 * megatron/core/tensor_parallel/cross_entropy.py); native/te the logits only, 2n; chunked-eager 2n + 4n + 4n/C — the
 * model's logits, the chunks done so far saved as fp32 log_softmax outputs, the last chunk's fp32 copy.
 */
export function lossForwardBytes(impl: LossImpl, n: number, tokens: number, actBytes: number): number {
  // Bytes per logit of the logits the model emits: 2 in 16-bit training, 4 in fp32.
  const b = actBytes;
  switch (impl) {
    case 'upcast': return (b === 4 ? 8 : b + 8) * n;
    case 'parallel': return (b === 4 ? 12 : b + 12) * n;
    case 'compiled': case 'chunked': return b * n + 4 * tokens;
    case 'megatron': return (b === 4 ? 4 : b + 4) * n;
    case 'native': case 'te': return b * n + 4 * tokens;
    case 'chunked-eager': return b * n + 4 * n + (4 * n) / LOSS_CHUNKS;
    case 'liger': case 'cce': return 0;
  }
}

/**
 * Loss tensors saved between forward and backward: upcast and parallel 4n (log_softmax's output; the fp32 copy and the model's
 * logits are freed when the loss returns: torchtitan `del pred`); compiled 2n (the logits) + logsumexp; megatron 4n
 * (the fp32 softmax); native/te 2n (the logits, whose buffer receives the gradient).
 */
export function lossSavedBytes(impl: LossImpl, n: number, tokens: number, actBytes: number): number {
  const b = actBytes;
  switch (impl) {
    case 'upcast': case 'parallel': case 'chunked-eager': return 4 * n;
    case 'compiled': case 'chunked': return b * n + 4 * tokens;
    case 'megatron': return 4 * n;
    case 'native': case 'te': return b * n + 4 * tokens;
    case 'liger': case 'cce': return 0;
  }
}

/**
 * Loss backward, all copies live at once: upcast 12n — the saved log_softmax output, nll_loss's gradient and
 * log_softmax's gradient (aten _log_softmax_backward_data), all fp32; parallel 16n — the saved output and, at most three
 * at once, the DTensor nll_loss's gradient (zeros with the targets scattered in), exp(output) and their sum, then the
 * product (loss.py `_nll_loss_and_log_softmax_backward`, all fp32); compiled 2n + 2n (logits and their gradient in
 * one fused kernel); megatron (4 + 2)·n (the in-place fp32 gradient and its cast to the logits' dtype); native 2n + 2n;
 * te 2n (the gradient is written into the logits); chunked 2n + 2n/C (the chunks' gradients replace their saved logits
 * one chunk at a time); chunked-eager 4n + (8 + 2)·n/C (the saved fp32 outputs, and one chunk's nll_loss and
 * log_softmax gradients in fp32 and their 16-bit cast; the saved output of a chunk is freed once its gradient is made).
 */
export function lossBackwardBytes(impl: LossImpl, n: number, tokens: number, actBytes: number): number {
  const b = actBytes;
  switch (impl) {
    case 'upcast': return 12 * n;
    case 'parallel': return 16 * n;
    case 'compiled': return 2 * b * n + 4 * tokens;
    case 'chunked': return b * n + (b * n) / LOSS_CHUNKS + 4 * tokens;
    case 'chunked-eager': return 4 * n + ((8 + b) * n) / LOSS_CHUNKS;
    case 'megatron': return (b === 4 ? 4 : 4 + b) * n;
    case 'native': return 2 * b * n + 4 * tokens;
    case 'te': return b * n + 4 * tokens;
    case 'liger': case 'cce': return 0;
  }
}

/**
 * Token rows of one chunk of Liger's fused linear cross-entropy: the tokens split so that a chunk's logits are about
 * the size of the head's input, rounded up to a power of two (liger_kernel/ops/fused_linear_cross_entropy.py:
 * inc_factor = ⌈V/h⌉, chunk_size = next_power_of_2(⌈T/inc_factor⌉)).
 */
export function ligerChunkRows(tokens: number, vocab: number, hidden: number): number {
  const rows = Math.ceil(tokens / Math.max(1, Math.ceil(vocab / hidden)));
  return rows <= 1 ? 1 : 2 ** Math.ceil(Math.log2(rows));
}

/** Chunks Liger's fused linear cross-entropy runs over T tokens (⌈T / chunk rows⌉). */
export function ligerChunks(tokens: number, vocab: number, hidden: number): number {
  return Math.ceil(tokens / ligerChunkRows(tokens, vocab, hidden));
}

/**
 * Liger's fused linear cross-entropy (liger_kernel/ops/fused_linear_cross_entropy.py at 0.8.2), per micro-batch on one
 * rank, T tokens, vocabulary V, width h: the forward makes both gradients as it goes, so no logits outlive a chunk and
 * nothing of the head's input is saved.
 * - forward, at a chunk's weight-gradient accumulation (all live): grad_input = zeros_like(input), T·h·S (S the input's
 *   bytes); grad_weight = zeros_like(weight), V·h·w (w the weight's bytes in the forward), absent for a frozen head;
 *   loss_1d, 4T; one chunk's logits, c·V·2 (the 16-bit matmul output, overwritten by its gradient in place); and, with
 *   a 16-bit grad_weight, that chunk's weight gradient as the mm makes it and its fp32 copy, (2 + 4)·V·h
 *   (`grad_weight += torch.mm(…).float()`); an fp32 grad_weight is accumulated in place by addmm(out_dtype=float32).
 * - saved for the backward: grad_input and grad_weight (ctx.save_for_backward), which the backward returns as the
 *   gradients (scaled in place when the loss's gradient is not 1).
 */
export function ligerLossBytes(
  tokens: number, vocab: number, hidden: number, inputBytes: number, weightBytes: number, headTrains: boolean,
): { forward: number; saved: number } {
  const gradInput = tokens * hidden * inputBytes;
  const gradWeight = headTrains ? vocab * hidden * weightBytes : 0;
  const chunkLogits = ligerChunkRows(tokens, vocab, hidden) * vocab * 2;
  const accumulation = headTrains && weightBytes < 4 ? 6 * vocab * hidden : 0;
  return { forward: gradInput + gradWeight + 4 * tokens + chunkLogits + accumulation, saved: gradInput + gradWeight };
}

/**
 * Apple's Cut Cross-Entropy (apple/ml-cross-entropy cut_cross_entropy/cce.py, cce_backward.py at d42911f), per
 * micro-batch on one rank: its forward kernel forms each block of logits on chip and keeps only the log-sum-exp per token;
 * it saves the head's input e and weight c (16-bit casts of fp32 ones under autocast, as the output layer's saved input
 * and autocast's head copy are counted: outputLayerInputBytes) and the log-sum-exp; its backward forms the logits again
 * block by block and accumulates de = zeros_like(e) and dc = zeros_like(c), cast back to the input's and the weight's
 * dtypes where those are fp32.
 * - forward: the log-sum-exp and the target logits, 4T each, and the vocabulary's mean logits for gradient filtering, 4V;
 * - saved: the log-sum-exp and the mean logits;
 * - backward: de, T·h·2, and dc, V·h·2 (none for a frozen head), with their fp32 casts, T·h·4 and V·h·4, where the
 *   input or the weight is fp32.
 */
export function cceLossBytes(
  tokens: number, vocab: number, hidden: number, fp32Input: boolean, fp32Weight: boolean, headTrains: boolean,
): { forward: number; saved: number; backward: number } {
  const saved = 4 * tokens + 4 * vocab;
  const de = tokens * hidden * (2 + (fp32Input ? 4 : 0));
  const dc = headTrains ? vocab * hidden * (2 + (fp32Weight ? 4 : 0)) : 0;
  return { forward: 8 * tokens + 4 * vocab, saved, backward: saved + de + dc };
}
