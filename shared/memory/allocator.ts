/**
 * PyTorch's CUDA caching allocator as the estimate applies it: the bytes `torch.cuda.max_memory_reserved` holds beyond
 * the live tensors at each moment of the step (docs/engine-memory.md#the-caching-allocator). The rules are those of
 * `DeviceCachingAllocator` in c10/cuda/CUDACachingAllocator.cpp (torch 2.x), the same the oracle's replay simulates
 * (probe/oracle/allocator.py):
 *
 * - cached blocks are kept per stream (`BlockComparatorSize` orders by stream first; `get_free_block` only returns a
 *   block of the request's stream), so a pool that an engine fills on its own stream stays reserved for that stream;
 * - a request takes the smallest cached block at least as large (best fit), so a freed block smaller than every
 *   later request stays cached and unused until the allocator runs out of device memory;
 * - reserved memory is only given back when a cudaMalloc fails (`release_cached_blocks`) or on `empty_cache`, so the
 *   peak reserved is the largest need over the step's moments.
 *
 * The terms below are those big enough to matter for training steps; block rounding (512 B, and at most 1 MiB left
 * unsplit in a large block) is below 0.1 % of a training step's tensors and is left out. Every function is plain
 * arithmetic: the planner's fast path calls them per moment without allocating.
 */
import type { LossImpl } from './loss';
import type { MomentInputs, MomentTerms } from './moments';
import type { ShardingStyle } from '../plan/types';

const MiB = 2 ** 20;
/** kMinBlockSize: every request is rounded up to a multiple of 512 bytes. */
export const MIN_BLOCK = 512;
/** kSmallSize: requests up to 1 MiB go to the small pool. */
export const SMALL_SIZE = MiB;
/** kSmallBuffer: small-pool segments are 2 MiB. */
export const SMALL_BUFFER = 2 * MiB;
/** kLargeBuffer: requests between 1 and 10 MiB get 20 MiB segments (also expandable segments' large page). */
export const LARGE_BUFFER = 20 * MiB;
/** kMinLargeAlloc: from 10 MiB on a request gets a segment of its own size, rounded up to kRoundLarge. */
export const MIN_LARGE_ALLOC = 10 * MiB;
/** kRoundLarge: large segments are multiples of 2 MiB. */
export const ROUND_LARGE = 2 * MiB;

/** `round_size` (default `roundup_power2_divisions`): the block a request of `bytes` occupies, ⌈bytes / 512⌉ · 512. */
export function blockBytes(bytes: number): number {
  return Math.max(MIN_BLOCK, Math.ceil(bytes / MIN_BLOCK) * MIN_BLOCK);
}

/**
 * `get_allocation_size`: the segment cudaMalloc is asked for when no cached block fits a request of `bytes`: 2 MiB up
 * to 1 MiB, 20 MiB below 10 MiB, else the block rounded up to 2 MiB.
 */
export function segmentBytes(bytes: number): number {
  const b = blockBytes(bytes);
  if (b <= SMALL_SIZE) return SMALL_BUFFER;
  if (b < MIN_LARGE_ALLOC) return LARGE_BUFFER;
  return Math.ceil(b / ROUND_LARGE) * ROUND_LARGE;
}

/**
 * FSDP2's all-gather pool: `foreach_all_gather` (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py) allocates a
 * group's all-gather input (the rank's shard) and output on the all-gather copy-in stream, and FSDP2 keeps the last
 * result until the next all-gather's copy-in (`FSDPCommContext.all_gather_state`): the root's buffers and the first
 * block's coexist. Reserved for that stream: (max(B_root, B_unit) + B_unit) · (1 + 1/N), B = gathered bytes per rank.
 */
export function allGatherPoolBytes(rootBytes: number, unitBytes: number, shardRanks: number): number {
  return (Math.max(rootBytes, unitBytes) + unitBytes) * (1 + 1 / Math.max(1, shardRanks));
}

/**
 * FSDP2's reduce-scatter pool: `foreach_reduce` allocates the reduce-scatter output on the reduce-scatter stream and
 * assigns views of it as the sharded gradients, which `zero_grad(set_to_none=True)` frees after the step; their blocks
 * stay cached for that stream. Reserved for it: every sharded gradient, Ψ · b_grad / N (the gradients term).
 */
export function reduceScatterPoolBytes(shardedGradientBytes: number): number {
  return shardedGradientBytes;
}

/**
 * The model's 16-bit logits at the loss's backward (upcast and loss-parallel losses, docs/engine-memory.md#the-loss):
 * freed after the forward, while the backward's requests are the fp32 copies, twice as large; best fit cannot place
 * them in the logits' block, which stays reserved: n · b_act.
 */
export function strandedLogitsBytes(logitBytes: number): number {
  return logitBytes;
}

/**
 * The first step's loss (docs/engine-memory.md#the-caching-allocator): what the forward freed — FSDP2's root parameters,
 * copied out of the all-gather on the default stream, and one checkpointed block's forward transients — is cached in
 * blocks smaller than every vocabulary-sized request of the loss, which get segments of their own. The optimizer
 * states do not exist in that step (torch optimizers make them at the first `step()`); from the second step on they sit
 * in blocks the first step's loss freed, so the steady step's tensors already count them. Reserved beyond the steady
 * step's need: max(0, forward cache − lazily made optimizer states).
 */
export function firstStepLossCacheBytes(forwardCacheBytes: number, lazyOptimizerStateBytes: number): number {
  return Math.max(0, forwardCacheBytes - lazyOptimizerStateBytes);
}

/** The explicit override (`shardlens.overhead.fragmentation` > 0): reserved − allocated = f · tensors. */
export function flatFragmentationBytes(tensorBytes: number, fraction: number): number {
  return tensorBytes * fraction;
}

/** What the allocator terms read from the memory context. */
export interface AllocatorInputs {
  style: ShardingStyle; zstage: number; nd: number; loss: LossImpl;
  /** `shardlens.overhead.fragmentation`: 0 models the allocator, > 0 is the flat override. */
  frag: number;
}

/** Bytes the estimate already counts as live in FSDP2's all-gather pool at a moment (an all-gather output in flight). */
function allGatherLive(m: MomentTerms, x: MomentInputs, shardRanks: number): number {
  const scale = 1 + 1 / Math.max(1, shardRanks);
  if (m.name === 'head backward') return x.rootBytes * scale;
  if (m.name === 'forward' || m.name === 'layers backward') return x.unitBytes * scale;
  return 0;
}

/**
 * Reserved − allocated at one moment: the flat override, else FSDP2's side-stream pools minus what of them is live,
 * the stranded logits at the loss backward and the first step's forward cache at the loss. Plain arithmetic (the fast path calls it per moment).
 */
export function allocatorCachedBytes(c: AllocatorInputs, m: MomentTerms, x: MomentInputs, tensorBytes: number): number {
  if (c.frag > 0) return flatFragmentationBytes(tensorBytes, c.frag);
  let bytes = 0;
  if (c.style === 'fsdp2' && (x.rootBytes > 0 || x.unitBytes > 0)) {
    bytes += Math.max(0, allGatherPoolBytes(x.rootBytes, x.unitBytes, c.nd) - allGatherLive(m, x, c.nd));
  }
  // Sharded gradients live in the reduce-scatter pool from the backward on; before it the pool is cached.
  if (c.style === 'fsdp2' && c.zstage >= 2 && m.gradients === 0) bytes += reduceScatterPoolBytes(x.gradients);
  if (x.last && m.name === 'loss backward' && (c.loss === 'upcast' || c.loss === 'parallel')) bytes += strandedLogitsBytes(x.logits);
  if (x.lossForwardCache > 0 && (m.name === 'loss forward' || m.name === 'loss backward')) {
    bytes += firstStepLossCacheBytes(x.lossForwardCache, c.style === 'deepspeed' ? 0 : x.optimizerStates);
  }
  return bytes;
}
