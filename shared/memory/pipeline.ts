/**
 * Pipeline parallelism as each engine runs it: how many micro-batches a stage holds, the tensors the schedule keeps
 * besides the layers' saved activations, and FSDP2's states between micro-batches (docs/engine-memory.md#pipeline).
 * One function per term, bytes per rank. Engines:
 * - 'torch': torch.distributed.pipelining (torchtitan and other torch-native trainers).
 * - 'megatron': megatron-core's schedules (Megatron-LM, NeMo, Megatron-Bridge).
 * - 'other': DeepSpeed's and nanotron's pipeline engines, estimated with Megatron's counts and no schedule tensors.
 */
import type { EngineId, PipelineSchedule } from '../plan/types';

export type PipelineEngine = 'torch' | 'megatron' | 'other';

/** The pipeline runtime of an engine: Megatron-LM's own schedules, torch's pipelining for the torch-native engines. */
export function pipelineEngineOf(engine: EngineId): PipelineEngine {
  if (engine === 'megatron') return 'megatron';
  return engine === 'fsdp2' || engine === 'fsdp1' || engine === 'ddp' ? 'torch' : 'other';
}

/**
 * Micro-batches per chunk group of the interleaved schedule. Megatron: `microbatch_group_size_per_vp_stage`, p by
 * default (megatron/core/model_parallel_config.py). torch: m / rounds with rounds = max(1, ⌊m/p⌋)
 * (schedules.py `ScheduleInterleaved1F1B.microbatches_per_round`, ⌊m/rounds⌋; torch rejects m not divisible by
 * rounds), = p when p divides m.
 */
export function interleavedGroupSize(engine: PipelineEngine, p: number, m: number): number {
  return engine === 'torch' ? Math.max(1, Math.floor(m / Math.max(1, Math.floor(m / p)))) : p;
}

/**
 * Chunk forward passes a stage holds at its peak, before the backward of the oldest one frees it:
 * GPipe m; 1F1B and ZB-H1 min(m, p − i) (torch Schedule1F1B runs min(m, p − i) warm-up forwards and then backward
 * before forward; Megatron runs min(m, p − i − 1) warm-ups and then forward before backward: the same count);
 * interleaved min(m·v, 2(p − i − 1) + (v − 1)·g + 1) with g = interleavedGroupSize (torch `_get_warmup_ops`, Megatron
 * `get_pp_rank_microbatches`: warm-ups, plus the steady state's forward before its backward). No pipeline: 1.
 */
export function inFlightChunkPasses(engine: PipelineEngine, schedule: PipelineSchedule, p: number, v: number, m: number, stage: number): number {
  if (p <= 1) return 1;
  if (schedule === 'gpipe') return m;
  if (schedule === 'interleaved' && v > 1) return Math.min(m * v, 2 * (p - stage - 1) + (v - 1) * interleavedGroupSize(engine, p, m) + 1);
  return Math.max(1, Math.min(m, p - stage));
}

/**
 * The tensor passed between stages for one micro-batch: b · s/cp · h · B, ÷t with sequence parallelism
 * (Megatron `get_tensor_shapes`; torchtitan sends the sequence-sharded local tensor).
 */
export function stageBoundaryBytes(b: number, sLocal: number, h: number, actBytes: number, spTp: number): number {
  return (b * sLocal * h * actBytes) / spTp;
}

/**
 * The gradient a pipeline rank receives for a chunk's output, held through that micro-batch's backward: Megatron
 * receives it into a fresh tensor (p2p_communication.py `_communicate`, `torch.empty(..., requires_grad=True)`) in
 * `send_forward_recv_backward` / `recv_backward` and keeps it as `output_tensor_grad` until `backward_step` returns:
 * one boundary when the rank has a chunk that is not the model's last (v − [last rank] > 0). torch's pipelining
 * receives into its persistent gradient buffers (receiveBufferBytes): 0.
 */
export function receivedGradientBytes(engine: PipelineEngine, v: number, last: boolean, boundary: number): number {
  return engine === 'megatron' && v - (last ? 1 : 0) > 0 ? boundary : 0;
}

/** Chunks of pipeline rank `stage` that receive activations (all but the model's first) and gradients (all but the last). */
function receivingChunks(p: number, v: number, stage: number): number {
  return v - (stage === 0 ? 1 : 0) + v - (stage === p - 1 ? 1 : 0);
}

/**
 * torch: every stage allocates one activation receive buffer and one gradient receive buffer per micro-batch once and
 * keeps them (stage.py `_setup_forward_recv_info`, `_create_grad_recv_info`): m · (chunks receiving) · boundary.
 * Megatron receives into fresh tensors (p2p_communication.py `_communicate`): 0.
 */
export function receiveBufferBytes(engine: PipelineEngine, p: number, v: number, m: number, stage: number, boundary: number): number {
  return engine === 'torch' && p > 1 ? m * receivingChunks(p, v, stage) * boundary : 0;
}

/**
 * Boundary tensors an in-flight chunk pass holds besides its layers' saved activations, summed over `passes` passes.
 * torch keeps every chunk's output in `fwd_cache` until its backward (+boundary on chunks that send), and a receiving
 * chunk's first layer saves the receive buffer counted above (−boundary): passes · boundary · ([first] − [last]) / v.
 * Megatron frees an output's data once sent (`deallocate_output_tensor`) and its received inputs are the first layer's
 * saved inputs: 0.
 */
export function cachedBoundaryBytes(engine: PipelineEngine, p: number, v: number, stage: number, passes: number, boundary: number): number {
  if (engine !== 'torch' || p <= 1) return 0;
  return (passes * boundary * ((stage === 0 ? 1 : 0) - (stage === p - 1 ? 1 : 0))) / v;
}

/**
 * Losses the last stage keeps alive besides the one being computed: torch's GPipe computes each micro-batch's loss
 * right after its forward (schedules.py `_maybe_compute_loss`) and backpropagates them all afterwards: m − 1.
 * 1F1B and interleaved run a loss's backward before the next loss: 0.
 */
export function keptLossCount(engine: PipelineEngine, schedule: PipelineSchedule, m: number): number {
  return engine === 'torch' && schedule === 'gpipe' ? Math.max(0, m - 1) : 0;
}

/** FSDP2 under torch pipelining keeps the stage gathered between micro-batches: Ψ_stage · b_param_dtype. */
export function fsdp2UnshardedBytes(stageParams: number, gatherBytes: number): number {
  return stageParams * gatherBytes;
}

/**
 * FSDP2's unsharded gradients accumulated over the micro-batches before the last one's reduce-scatter
 * (stage.py `backward_maybe_with_nosync` turns gradient sync off, `perform_reduce_grad` reduces after the last):
 * Ψ_stage · b_reduce, in `reduce_dtype` when it differs from the param dtype (FSDPParam.to_accumulated_grad_if_needed),
 * else in the 16-bit `.grad`.
 */
export function fsdp2AccumulatedGradBytes(stageParams: number, reduceBytes: number): number {
  return stageParams * reduceBytes;
}

/**
 * The reduce-scatter of one FSDP2 group after the last micro-batch: its input, a flat copy of the accumulated
 * gradients in the reduce dtype, its output shard and, when the reduce dtype is not the sharded parameters' dtype, the
 * output cast to it (FSDP2 `foreach_reduce`): Ψ_group · (b_reduce · (1 + 1/N) + [b_reduce ≠ b_grad] · b_grad/N).
 */
export function fsdp2ReduceScatterBytes(groupParams: number, reduceBytes: number, shards: number, gradBytes = reduceBytes): number {
  return groupParams * (reduceBytes * (1 + 1 / shards) + (reduceBytes !== gradBytes ? gradBytes / shards : 0));
}

/**
 * Chunks torch's runtime schedules (interleaved) keep unsharded: `_add_unshard_reshard` prefetches the next
 * max_active_stages = 3 stages and reshards the others (schedules.py); single-stage schedules keep their one chunk.
 */
export function unshardedChunks(v: number): number {
  return Math.min(v, 3);
}

/**
 * The runtime schedules' first gathers: every prefetched chunk's all-gathers are issued together, then each group is
 * copied out of its all-gather output, which is freed (FSDPParamGroup.wait_for_unshard outside forward): Ψ_held + the
 * largest group.
 */
export function fsdp2PrefetchGatherPeak(held: number, largestGroup: number): number {
  return held + largestGroup;
}

/**
 * The first forward's gathers of one chunk (single-stage schedules: FSDP2's own pre-forward unshard): a group's all-gather output lives until the next group is copied out
 * (FSDP2 keeps it in `all_gather_state` during forward), so two groups are held twice next to what is gathered so far.
 * Root R (embedding or head) first, then n blocks of B: max(2R + 2B, R + (n + 2)·B) (2R or 2B alone with one group).
 */
export function fsdp2ChunkGatherPeak(root: number, blocks: number, unit: number): number {
  if (blocks <= 0) return 2 * root;
  if (root <= 0) return blocks === 1 ? 2 * unit : (blocks + 2) * unit;
  return Math.max(2 * root + 2 * unit, blocks >= 2 ? root + (blocks + 2) * unit : 0);
}

/**
 * A parameter's fresh gradient, made by its backward next to what the engine accumulates, before the engine folds it
 * in: Megatron's embedding `.grad` until the grad hook adds it to `main_grad` and drops it; FSDP2's 16-bit gradient
 * until the group's upcast into the reduce dtype; autograd's AccumulateGrad new gradient and sum (`.grad + new`) when
 * `.grad` already holds earlier micro-batches: Ψ_param · b (the embedding on the first stage, the head on the last).
 */
export function freshGradBytes(params: number, bytes: number): number {
  return params * bytes;
}
