/**
 * How much of a step-level collective compute hides: per-layer ZeRO-3/FSDP traffic prefetched behind the layers, and
 * the gradient sync behind the last backward's buckets and Megatron's interleaved cooldown (docs/time-model.md §2).
 * Plain arithmetic: shared/time/stageComm.ts applies it per stage.
 */
import { exposedBehind } from './layerCost';

/**
 * Exposed seconds of the per-layer ZeRO-3/FSDP traffic of one pass: one collective per layer of `one` seconds (the
 * stage's volume split per layer, each paying NCCL's per-collective latency), the first layer's exposed, every later
 * one prefetched behind the previous layer's compute: t₁ + (n − 1)·[max(0, t₁ − c) + overlapCost·min(t₁, c)], c = pass/n
 * (Zhao et al. 2023 FSDP §3.3 prefetching; DeepSpeed stage3 prefetch).
 */
export function perLayerExposed(one: number, layers: number, pass: number, overlap: boolean, cost: number): number {
  const n = Math.max(1, layers);
  if (!overlap) return n * one;
  return one + (n - 1) * exposedBehind(one, pass / n, true, cost);
}

/**
 * Exposed seconds of FSDP's hybrid reduce behind a backward pass: each layer group's reduce-scatter (t_rs, within the
 * shard group) followed by the all-reduce of its shard across the replicas (t_ar), two streams in a pipeline (torch
 * FSDP2 `foreach_reduce`: the all-reduce stream waits for the reduce-scatter stream, the next group's reduce-scatter
 * does not wait for the all-reduce). The slower of the two sets the pace behind the pass, the faster one is left after
 * the last group: perLayerExposed(max(t_rs, t_ar)) + min(t_rs, t_ar).
 */
export function hybridReduceExposed(rsLayer: number, arLayer: number, layers: number, pass: number, overlap: boolean, cost: number): number {
  if (!overlap) return Math.max(1, layers) * (rsLayer + arLayer);
  return perLayerExposed(Math.max(rsLayer, arLayer), layers, pass, overlap, cost) + Math.min(rsLayer, arLayer);
}

/**
 * Gradient sync that Megatron's interleaved schedule hides in its cooldown, beyond the last backward's bucket window w:
 * with v virtual stages each model chunk launches its own reduce as soon as its last micro-batch's backward is done
 * (megatron/core/pipeline_parallel/schedules.py `forward_backward_pipelining_with_interleaving`,
 * `config.grad_sync_func[model_chunk_id]`), and the backwards run in groups of p micro-batches per chunk in reverse
 * chunk order, so chunk c's last backward ends c·Δ before the lane does, Δ = p·b with b one chunk's backward. The v
 * reduces of d = t/v queue on one stream: chunk 1's ends at q = (d − Δ) + (v − 2)·max(0, d − Δ) from the end, chunk 0's
 * (launched w before the end) at e = max(0, d + max(q, −w)). Hidden beyond the window: t − w − e (≥ 0). 0 without
 * interleaving.
 */
export function interleavedSyncHidden(sync: number, v: number, p: number, chunkBackward: number, window: number): number {
  if (v <= 1 || !(sync > 0) || !(chunkBackward > 0)) return 0;
  const d = sync / v;
  const gap = Math.max(1, p) * chunkBackward;
  const q = d - gap + (v - 2) * Math.max(0, d - gap);
  const w = Math.min(Math.max(0, window), sync);
  const exposed = Math.max(0, d + Math.max(q, -w));
  return Math.max(0, sync - w - exposed);
}

/** Gradient sync left exposed after the window: max(0, t − window) + overlapCost·min(t, window). */
export function gradSyncExposed(sync: number, window: number, cost: number): number {
  return Math.max(0, sync - window) + cost * Math.min(sync, window);
}
