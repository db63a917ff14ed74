/**
 * Context-parallel ring attention on one rank (load-balanced causal ring: the rank holds two chunks of s/(2·cp)
 * tokens): how its attention work splits into kernels, and the memory-bound traffic of merging each step's partial
 * result. Two implementations differ: PyTorch's experimental context parallelism (torchtitan, FSDP2 engines) merges and
 * accumulates in eager fp32 ops; Megatron/Transformer Engine corrects the output in fused kernels.
 */
import type { Plan } from '../../plan/types';
import { modelImplOf } from '../../memory/engine';

/**
 * The load-balanced ring's kernels: step 0 is the causal block of the rank's two chunks (T queries against its own T
 * keys, 1/cp of the rank's causal work, read on the causal curve at T tokens); each of the cp − 1 later steps is an
 * unmasked block of half the queries or half the keys (the rest, read on the full curve at T/2 = s/(2·cp) tokens).
 * PyTorch torch/distributed/tensor/experimental/_attention.py `_templated_ring_attention` (Note "Context parallelism
 * load balance algorithm for causal masking"); Transformer Engine's context-parallel attention splits the same way.
 */
export function ringAttentionBlocks(seq: number, cp: number): { readonly diagonalShare: number; readonly diagonalSeq: number; readonly offSeq: number } {
  const c = Math.max(1, cp);
  return { diagonalShare: 1 / c, diagonalSeq: seq / c, offSeq: seq / (2 * c) };
}

/** Whether the plan's engine runs PyTorch's context parallelism (torchtitan and other FSDP2 trainers) rather than TE's. */
export function torchRing(plan: Plan): boolean {
  return plan.engine !== 'megatron' && plan.engine !== 'nanotron';
}

/**
 * Heads of K and V the ring moves per rank: torchtitan's attention repeats K and V to the query heads before SDPA
 * (torchtitan models/llama/model.py `repeat_kv` at 9dec370 and models/llama3/model/model.py since), so its ring carries
 * a/t heads; Transformer Engine and other models pass the g/t grouped heads.
 */
export function ringKvHeads(plan: Plan, qHeads: number, kvHeads: number): number {
  return torchRing(plan) && modelImplOf(plan) === 'torchtitan' ? qHeads : kvHeads;
}

/**
 * Bytes of PyTorch's K/V all-gather per layer and pass, the size of the gathered buffer: cp · 2·kv·B, kv = T·heads·d
 * elements of K (as many of V) on each rank. PyTorch's default rotation (`_cp_options.rotate_method` ALL_GATHER;
 * torchtitan `context_parallel_rotate_method = "allgather"`) gathers every rank's K and V once, issued before the
 * first block and waited for before the second (`_AllGatherRotater.exchange_buffers` / `next_buffer`,
 * torch/distributed/tensor/experimental/_attention.py), so it hides only behind the first (causal) block; backward
 * gathers K and V again the same way.
 */
export function torchRingGatherBytes(cp: number, kv: number, B: number): number {
  return cp > 1 ? cp * 2 * kv * B : 0;
}

/**
 * Bytes of one backward ring step's dK/dV rotation per rank: 2·kv·4, the fp32 accumulators sent to the next rank at
 * every step (the backward's `dkv_rotater` is always the all-to-all permutation, same file
 * `_templated_ring_attention_backward`), each behind one attention step.
 */
export function torchRingGradBytes(kv: number): number {
  return 2 * kv * 4;
}

/**
 * HBM bytes of the ring's merges on one rank per layer, forward and backward, for `steps` = cp − 1 received blocks;
 * q = T·a·d query (and output) elements, kv = T·g·d elements of K (as many of V), B bytes per activation element.
 *
 * PyTorch (same file, `_SDPAMerger` with convert_to_f32 and `_templated_ring_attention_backward`): forward, per step the
 * block output is converted to fp32 (B + 4) and merged by out − sigmoid(lse_b − lse)·(out − out_b), three fp32
 * elementwise passes (read 8, write 4; read 4, write 4; read 8, write 4): B + 36 per query element, and K and V are
 * concatenated for the next send (2B per kv element, K and V). Backward, per step dQ accumulates in fp32 (read 4 + B,
 * write 4), dK and dV accumulate (read 4 + B, write 4) and are concatenated for the rotation (read 4, write 4), and K, V
 * are concatenated again (2B).
 *
 * Transformer Engine (fused correction kernels): forward reads the B-byte partial and reads and writes the fp32
 * accumulator (B + 8 per query element); backward accumulates dQ, dK and dV in fp32 (read and write, 8 per element).
 */
export function ringMergeBytes(torch: boolean, steps: number, q: number, kv: number, B: number): { readonly fwd: number; readonly bwd: number } {
  if (!(steps > 0)) return { fwd: 0, bwd: 0 };
  if (!torch) return { fwd: steps * q * (B + 8), bwd: steps * (q + 2 * kv) * 8 };
  return {
    fwd: steps * (q * (B + 36) + 2 * kv * 2 * B),
    bwd: steps * (q * (8 + B) + 2 * kv * (8 + B + 8) + 2 * kv * 2 * B),
  };
}

/**
 * Bytes a rank sends per ring step and layer: K and V (2·kv·B) forward; backward K and V again plus dK and dV, which
 * PyTorch rotates in fp32 (4 bytes, `dkv_rotater` over the fp32 accumulators) and Transformer Engine in B bytes.
 */
export function ringStepBytes(torch: boolean, kv: number, B: number): { readonly fwd: number; readonly bwd: number } {
  const kvBytes = 2 * kv * B;
  return { fwd: kvBytes, bwd: kvBytes + (torch ? torchRingGradBytes(kv) : kvBytes) };
}
