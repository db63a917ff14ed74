/**
 * Transient and runtime terms: gathered ZeRO-3/FSDP parameters, communication buckets, CUDA context, and the host
 * memory offload needs (the caching allocator's terms: allocator.ts).
 */
import type { ShardingStyle } from '../plan/types';
import { dsBucketBytes } from './deepspeed';

/**
 * ZeRO-3 / FSDP gathered parameters and unsharded gradients of the units in flight.
 * FSDP: reshard after forward → 2 units (current + prefetched) of params, else the whole stage stays gathered
 * (Zhao et al. 2023, PyTorch FSDP §3.2: peak ≈ Σψ/F + max ψ); plus one unit's unsharded gradient before reduce-scatter.
 * DeepSpeed: min(max_live, unit + prefetch bucket) params (stage3_prefetch_bucket_size, stage3_max_live_parameters)
 * + one unit's gradient (largest_layer_memory = 4·largest_layer_params with 16-bit params/grads: docs/framework-facts.md#zero-3-live-parameters-and-offload-host-memory).
 */
export function gatheredParameterBytes(
  style: ShardingStyle, unitParams: number, stageParams: number, paramBytes: number, gradBytes: number,
  reshardAfterForward: boolean, prefetchElems: number, maxLiveElems: number,
): number {
  let params: number;
  if (style === 'deepspeed') params = Math.min(stageParams, Math.max(unitParams, Math.min(maxLiveElems, unitParams + prefetchElems)));
  else params = reshardAfterForward ? Math.min(stageParams, 2 * unitParams) : stageParams;
  return params * paramBytes + Math.min(stageParams, unitParams) * gradBytes;
}

/**
 * FSDP2's root module (embedding, final norm and LM head outside the blocks) as one gathered group in the param dtype:
 * gathered for the forward, resharded when it returns, gathered again for the backward and held to its end (the
 * moments that hold it: shared/memory/moments.ts; sources in docs/engine-memory.md#fsdp2). Root parameters per rank:
 * Ψ_root = embedding + final norm + LM head of the stage (a tied head counts once, shared/model/rankParams.ts).
 */
export function fsdp2RootBytes(rootParams: number, gatherBytes: number): number {
  return rootParams * gatherBytes;
}

/**
 * Communication buckets. PyTorch DDP with gradient_as_bucket_view=False (the default) copies every gradient into its
 * all-reduce buckets: Ψ·b_grad ("the saved memory size will be equal to the total gradients size", DDP docs).
 * DeepSpeed: its reduction buckets as the engine allocates them (shared/memory/deepspeed.ts `dsBucketBytes`; DeepSpeed's
 * "overlap_comm uses 4.5× the bucket sizes" rule of thumb is not what 0.19.8 allocates: docs/engine-memory.md#deepspeed).
 * Megatron distributed optimizer and FSDP: buckets are views of the grad/param buffers (0).
 */
export function commBufferBytes(
  style: ShardingStyle, stage: number, stageParams: number, gradBytes: number,
  reduceBucketElems: number, _allgatherBucketElems: number, overlap: boolean, contiguous = true,
): number {
  if (style === 'ddp') return stageParams * gradBytes;
  if (style === 'deepspeed') return dsBucketBytes(reduceBucketElems, overlap, contiguous, gradBytes, stage >= 3);
  return 0;
}

/** CUDA context, cuBLAS/cuDNN workspaces and NCCL communicators: a constant per GPU (docs/formulas.md#runtime-overheads: 1–2 GB). */
export function cudaContextBytes(contextBytes: number): number {
  return contextBytes;
}

/** Host memory per node for offload: Σ over the node's ranks of their offloaded bytes (DeepSpeed ZeRO-Offload: docs/framework-facts.md#zero-3-live-parameters-and-offload-host-memory). */
export function hostOffloadBytesPerNode(offloadedBytesPerRank: number, gpusPerNode: number): number {
  return offloadedBytesPerRank * gpusPerNode;
}
