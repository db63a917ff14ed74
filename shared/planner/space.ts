/**
 * Candidate values per parallel axis, each filtered by the rule that makes it runnable.
 * Rules: Megatron-LM `megatron/core/parallel_state.py` and `arguments.py` (TP divides heads and query groups,
 * world = TP·PP·CP·DP, EP divides experts and DP·CP, sequence divisible by 2·CP, interleaving needs layers
 * divisible by PP·VPP and microbatches a multiple of PP).
 */
import type { ModelSpec, OffloadTarget, RecomputeKind, ShardingStyle } from '../plan/types';
import type { PruneReason, SearchSpace } from './types';
import { layersPerStageFor, torchtitanStageLayers } from '../plan/derived';

/** Positive divisors of n, ascending. */
export function divisors(n: number): number[] {
  const out: number[] = [];
  if (!Number.isInteger(n) || n < 1) return out;
  for (let d = 1; d * d <= n; d++) {
    if (n % d === 0) {
      out.push(d);
      if (d * d !== n) out.push(n / d);
    }
  }
  return out.sort((a, b) => a - b);
}

/** Counts rejected axis values by reason. */
export type PruneCounter = (reason: PruneReason, count?: number) => void;

/** TP degrees: divide heads and KV heads and (by default) the GPUs of a node. */
export function tpCandidates(model: ModelSpec, gpusPerNode: number, gpus: number, space: SearchSpace, prune: PruneCounter): number[] {
  const limit = space.tpAcrossNodes ? gpus : Math.min(gpus, gpusPerNode);
  const raw = space.tp ?? divisors(model.heads).filter((t) => t <= Math.max(limit, 1));
  return raw.filter((t) => {
    if (model.heads % t !== 0 || model.kvHeads % t !== 0) return prune('tp-heads'), false;
    // Gated DeltaNet layers split their key and value heads over TP too (shared/plan/validate.ts).
    const la = model.linearAttention;
    if (la && (la.keyHeads % t !== 0 || la.valueHeads % t !== 0)) return prune('tp-heads'), false;
    if (gpus % t !== 0 || (!space.tpAcrossNodes && gpusPerNode % t !== 0 && t > 1)) return prune('tp-node'), false;
    return true;
  });
}

/** Layers per stage for PP stages: even, or the first and last stage one or more layers short (Megatron `--decoder-first/last-pipeline-num-layers`). */
export function stageSplit(layers: number, pp: number): number[] | undefined | null {
  if (layers % pp === 0) return undefined;
  if (!unevenSplitExists(layers, pp)) return null;
  const middle = Math.ceil(layers / pp);
  const first = unevenFirstStage(layers, pp);
  const last = layers - first - (pp - 2) * middle;
  return Array.from({ length: pp }, (_, i) => (i === 0 ? first : i === pp - 1 ? last : middle));
}

/** Layers of the first stage of stageSplit's uneven split: ⌈L/p⌉ less half the deficit ⌈L/p⌉·p − L, rounded up. */
function unevenFirstStage(layers: number, pp: number): number {
  const middle = Math.ceil(layers / pp);
  return middle - Math.ceil((middle * pp - layers) / 2);
}

/** Whether stageSplit's uneven split exists (p ≥ 3, first and last stage at least one layer), without building it. */
function unevenSplitExists(layers: number, pp: number): boolean {
  if (pp < 3) return false;
  const middle = Math.ceil(layers / pp);
  const first = unevenFirstStage(layers, pp);
  return first >= 1 && layers - first - (pp - 2) * middle >= 1;
}

/** PP degrees up to the layer count (uneven splits allowed unless disabled). */
export function ppCandidates(model: ModelSpec, gpus: number, space: SearchSpace, prune: PruneCounter): number[] {
  const raw = space.pp ?? divisors(gpus).filter((p) => p <= model.layers);
  return raw.filter((p) => {
    if (p < 1 || p > model.layers) return prune('pp-layers'), false;
    if (model.layers % p !== 0 && (space.unevenPipeline === false || !unevenSplitExists(model.layers, p))) return prune('pp-layers'), false;
    return true;
  });
}

/**
 * Virtual pipeline chunks: 1 without PP; divisors of layers/PP (at most 8) for an even split; for an uneven split (first
 * and last stage shorter, Llama 3 §3.3.2 runs 126 layers on PP 16 interleaved this way) any count up to the shortest
 * stage and 8.
 */
export function vppCandidates(layers: number, pp: number, split: readonly number[] | undefined, space: SearchSpace, prune: PruneCounter): number[] {
  if (pp === 1) return [1];
  if (!split) {
    const perStage = layers / pp;
    const raw = space.vpp ?? divisors(perStage).filter((v) => v <= 8);
    return raw.filter((v) => (v >= 1 && perStage % v === 0) || (prune('vpp-layers'), false));
  }
  // Uneven stages are chunked as evenly as their counts allow: any v up to the shortest stage (and 8).
  const shortest = Math.min(...split);
  const raw = space.vpp ?? Array.from({ length: Math.min(8, shortest) }, (_, i) => i + 1);
  return raw.filter((v) => (v >= 1 && v <= shortest) || (prune('vpp-layers'), false));
}

/**
 * Virtual stages torchtitan can build for PP degree pp: 1, 2 (its default for multi-stage schedules) and any v up to
 * 8 for which a whole `pipeline_parallel_layers_per_stage` gives ⌈(L + first + last) / it⌉ = pp·v stages, each with
 * a valid split (torchtitan/distributed/pipeline_parallel.py; shared/plan/derived.ts).
 */
export function torchtitanVppCandidates(layers: number, pp: number, first: number, last: number, space: SearchSpace, prune: PruneCounter): number[] {
  if (pp === 1) return [1];
  const raw = space.vpp ?? [1, 2, 3, 4, 5, 6, 7, 8];
  return raw.filter((v) => {
    const named = v >= 1 && (v <= 2 || layersPerStageFor(layers + first + last, pp * v) !== undefined);
    return (named && torchtitanStageLayers(layers, pp, v, first, last).layers !== undefined) || (prune('vpp-layers'), false);
  });
}

/** CP degrees: powers of two with the sequence divisible by 2·CP (load-balanced causal split). */
export function cpCandidates(seqLen: number, gpus: number, space: SearchSpace, prune: PruneCounter): number[] {
  const raw = space.cp ?? [1, 2, 4, 8, 16, 32].filter((c) => c <= gpus);
  return raw.filter((c) => {
    if (c > 1 && seqLen % (2 * c) !== 0) return prune('cp-sequence'), false;
    return c >= 1;
  });
}

/** EP degrees: divide the routed experts (dense models: 1). */
export function epCandidates(model: ModelSpec, space: SearchSpace, prune: PruneCounter): number[] {
  const experts = model.moe?.experts ?? 1;
  const raw = space.ep ?? divisors(experts).filter((e) => e <= 64);
  return raw.filter((e) => {
    if (e < 1 || experts % e !== 0) return prune('ep-experts'), false;
    return true;
  });
}

/** ZeRO-equivalent stages each framework can express. */
export function zeroCandidates(style: ShardingStyle, space: SearchSpace): (0 | 1 | 2 | 3)[] {
  if (space.zero) return [...space.zero];
  if (style === 'deepspeed') return [0, 1, 2, 3];
  if (style === 'fsdp' || style === 'fsdp2') return [0, 2, 3];
  return [0, 1];
}

/** Shard group sizes: all of DP, plus one node (HSDP) for FSDP when DP spans several whole nodes. */
export function shardGroupCandidates(style: ShardingStyle, dp: number, gpusPerNode: number, space: SearchSpace): number[] {
  const fsdp = style === 'fsdp' || style === 'fsdp2';
  if (!fsdp || space.hybridShard === false || gpusPerNode <= 1 || dp <= gpusPerNode || dp % gpusPerNode !== 0) return [dp];
  return [dp, gpusPerNode];
}

/** Offload targets tried for optimizer states (CPU by default; NVMe only when asked). */
export function offloadCandidates(space: SearchSpace): OffloadTarget[] {
  return space.offload ? [...space.offload] : ['none', 'cpu'];
}

export function recomputeCandidates(space: SearchSpace): RecomputeKind[] {
  return space.recompute ? [...space.recompute] : ['none', 'selective', 'full'];
}

/** Micro batches dividing the per-replica batch. */
export function microBatchCandidates(perReplica: number, space: SearchSpace): number[] {
  const all = divisors(perReplica);
  return space.microBatch ? space.microBatch.filter((b) => all.includes(b)) : all;
}

/** The default-space bounds in force (axes the caller set explicitly are not bounded by the planner). */
export function spaceBounds(space: SearchSpace, moe: boolean): string[] {
  const out: string[] = [];
  if (!space.tp) out.push(space.tpAcrossNodes ? 'TP divides heads and KV heads' : 'TP divides heads and KV heads and stays within a node');
  if (!space.pp) out.push(space.unevenPipeline === false ? 'PP divides the layers' : 'PP divides the layers, or first/last stages hold fewer layers');
  if (!space.vpp) out.push('VPP ≤ 8: dividing layers/PP on even splits, at most the shortest stage on uneven ones');
  if (!space.cp) out.push('CP ∈ {1, 2, 4, 8, 16, 32}, sequence divisible by 2·CP');
  if (!space.ep && moe) out.push('EP ≤ 64, dividing the experts and DP·CP');
  if (!space.microBatch) out.push('micro batch: every divisor of the per-replica batch');
  if (!space.offload) out.push('offload: none or CPU (optimizer states)');
  if (space.hybridShard !== false) out.push('FSDP hybrid sharding: one node per shard group');
  return out;
}
