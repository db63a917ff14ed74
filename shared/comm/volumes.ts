/**
 * Message sizes (bytes per rank per occurrence, the S of nccl-tests) and occurrences per step of every collective.
 * One function per term; the wire volume follows from the busFactor of shared/comm/links.ts.
 */

/** DP gradient all-reduce message: S = Ψ_rank·bytes_grad; wire volume 2(N−1)/N·S (ZeRO paper §7; PyTorch DDP). */
export function dpGradAllReduceBytes(params: number, gradBytes: number): number {
  return params * gradBytes;
}

/**
 * Megatron's embedding-group all-reduce: where the word embedding is duplicated across pipeline stages (a tied output
 * layer on the last stage, or the copy multi-token prediction builds there), finalize_model_grads all-reduces its
 * main_grad, V'·h/t elements, between the first and the last stage once per step (megatron/core/distributed/
 * finalize_model_grads.py `_allreduce_word_embedding_grads`; parallel_state.py `default_embedding_ranks`).
 * S = V'·h/t · bytes_grad; wire 2(N−1)/N·S with N = 2.
 */
export function embeddingGroupGradBytes(paddedVocab: number, hidden: number, tp: number, gradBytes: number): number {
  return (paddedVocab * hidden / Math.max(1, tp)) * gradBytes;
}

/** ZeRO-1/2 and distributed-optimizer gradient reduce-scatter: S = Ψ·bytes_grad, wire (N−1)/N·S (Rajbhandari et al. 2020 §7.2.1). */
export function zeroGradReduceScatterBytes(params: number, gradBytes: number): number {
  return params * gradBytes;
}

/** ZeRO all-gather of updated (1/2) or needed (3) parameters: S = Ψ·bytes_param, wire (N−1)/N·S (Rajbhandari et al. 2020 §7.2). */
export function zeroParamAllGatherBytes(params: number, paramBytes: number): number {
  return params * paramBytes;
}

/**
 * ZeRO-3/FSDP parameter all-gathers per micro-batch: forward and again in backward (2), or 1 when parameters are not
 * resharded after forward (FSDP SHARD_GRAD_OP / FSDP2 reshard_after_forward=False, Llama 3 §3.3.2): 3Ψ vs 2Ψ per step.
 */
export function zero3AllGathersPerMicrobatch(reshardAfterForward: boolean): number {
  return reshardAfterForward ? 2 : 1;
}

/**
 * The ZeRO stage a plan gathers its parameters at: FSDP at stage 2 (SHARD_GRAD_OP, FSDP2 reshard_after_forward=False)
 * shards the parameters and gathers them in every forward, keeping them for the backward, as ZeRO-3 without
 * resharding does (torch FSDP ShardingStrategy.SHARD_GRAD_OP; fully_shard's reshard_after_forward); DeepSpeed's and
 * Megatron's stage 2 keep whole parameters and gather the updated ones after the step.
 */
export function gatherStage(style: string, stage: number): number {
  return (style === 'fsdp' || style === 'fsdp2') && stage === 2 ? 3 : stage;
}

/**
 * Ranks DeepSpeed ZeRO++ hpZ partitions its secondary copy of the weights over (Wang et al. 2023 §4.2): the stated
 * `zero_hpz_partition_size` at ZeRO-3 under DeepSpeed, at most the sharded ranks; 1 (no secondary copy) otherwise.
 */
export function hpzRanks(s: { readonly style: string; readonly stage: number; readonly hpzPartition?: number }, shardRanks: number): number {
  return s.style === 'deepspeed' && s.stage >= 3 && (s.hpzPartition ?? 1) > 1 ? Math.min(s.hpzPartition!, Math.max(1, shardRanks)) : 1;
}

/** Whether the gathered parameters are freed after the forward (so gathered again for the backward): never at FSDP stage 2. */
export function gatherReshards(style: string, stage: number, reshardAfterForward: boolean): boolean {
  return gatherStage(style, stage) !== stage ? false : reshardAfterForward;
}

/**
 * Whether ZeRO-2/3 and FSDP reduce-scatter the gradients in every micro-batch of a step. They do, except where every
 * micro-batch but the last runs under FSDP's `no_sync` (FSDP1 `FullyShardedDataParallel.no_sync`, FSDP2
 * `set_requires_gradient_sync(False)`; the Hugging Face Trainer and Accelerate's `accumulate`): the gradients then stay
 * unsharded and are reduce-scattered once, in the last micro-batch's backward. DeepSpeed's engine reduces its ZeRO-2/3
 * partitions in every micro-batch whatever the trainer does (the Trainer does not call `no_sync` on it).
 */
export function zeroGradReduceEveryMicrobatch(style: string, syncEveryMicroBatch: boolean | undefined): boolean {
  return !(syncEveryMicroBatch === false && (style === 'fsdp' || style === 'fsdp2'));
}

/**
 * Whether a replicated (DDP) stage all-reduces its gradients in every micro-batch: torch's composable `replicate`
 * (torchtitan's DDP, FSDP2-style at ZeRO stage 0 here) syncs in every backward unless told not to, and torchtitan does
 * not. The other replicated engines reduce once per step: DDP under `no_sync` (the Hugging Face Trainer, Lightning,
 * LitGPT), Megatron's DDP (its `no_sync_func` for all but the last micro-batch), DeepSpeed at the accumulation boundary.
 */
export function replicaReduceEveryMicrobatch(style: string, zeroStage: number, syncEveryMicroBatch: boolean | undefined): boolean {
  return style === 'fsdp2' && zeroStage === 0 && syncEveryMicroBatch !== false;
}

/**
 * A pipeline stage of torch.distributed.pipelining sharded by FSDP2 (torchtitan with PP): every backward of the stage
 * but its last runs with `set_requires_gradient_sync(False)` and `set_reshard_after_backward(False)`; after the last,
 * the schedule calls every group's `post_backward` (the reduce-scatter of all the stage's gradients, none of it behind
 * a backward) and the root's final callback, which makes the compute stream wait for it (torch/distributed/pipelining/
 * stage.py `backward_maybe_with_nosync`, `run_post_backward`). With `reshard_after_forward=False` (torchtitan's choice
 * under PP) a group stays gathered from its first forward to that post-backward: one all-gather per step.
 */
export function torchPipelinedFsdp(pp: number, pipelineEngine: string, style: string, zeroStage: number): boolean {
  return pp > 1 && pipelineEngine === 'torch' && style === 'fsdp2' && zeroStage >= 2;
}

/**
 * FSDP2 all-gather copy-out, HBM bytes per gather: split_with_sizes_copy reads the all-gather output and writes every
 * parameter's unsharded tensor on the compute stream, 2·Ψ·B_param (PyTorch torch/distributed/_composable/fsdp/
 * _fsdp_collectives.py `foreach_all_gather_copy_out`).
 */
export function fsdp2CopyOutBytes(params: number, paramBytes: number): number {
  return 2 * params * paramBytes;
}

/**
 * FSDP2 reduce-scatter copy-in, HBM bytes per micro-batch: torch.cat of the unsharded gradients (compute dtype) into the
 * reduce-scatter input (reduce dtype), which the compute stream waits for before it frees them, Ψ·(B_grad + B_reduce)
 * (same file, `foreach_reduce_scatter` and `foreach_reduce_scatter_copy_in`).
 */
export function fsdp2ReduceCopyInBytes(params: number, gradBytes: number, reduceBytes: number): number {
  return params * (gradBytes + reduceBytes);
}

/** TP collective message per layer: S = b·(s/cp)·h·bytes_act (Shoeybi et al. 2019 f/g operators; Korthikanti et al. 2022 §4.2.2 with SP). */
export function tpMessageBytes(tokens: number, hidden: number, actBytes: number): number {
  return tokens * hidden * actBytes;
}

/**
 * TP collectives per layer per micro-batch: 2 in forward + 2 in backward (+2 when full recomputation reruns forward);
 * with SP each all-reduce becomes one all-gather and one reduce-scatter (Narayanan et al. 2021 §3.2).
 */
export function tpCollectivesPerLayer(fullRecompute: boolean): number {
  return fullRecompute ? 6 : 4;
}

/** PP send/recv message: S = b·s·h·bytes, ÷t with SP or scatter/gather over the t adapters (Narayanan et al. 2021 §4.1). */
export function ppMessageBytes(tokens: number, hidden: number, actBytes: number, tpSplit: number): number {
  return (tokens * hidden * actBytes) / Math.max(1, tpSplit);
}

/** PP sends per stage per step: m·v activations forward to the next stage and m·v gradients back, per existing neighbour. */
export function ppSendsPerStep(m: number, v: number, hasNext: boolean, hasPrev: boolean): number {
  return m * v * ((hasNext ? 1 : 0) + (hasPrev ? 1 : 0));
}

/** CP exchanges per layer per micro-batch: K/V forward, K/V + dK/dV backward (+1 with full recomputation). */
export function cpExchangesPerLayer(fullRecompute: boolean): number {
  return fullRecompute ? 4 : 3;
}

/** EP all-to-all message per MoE layer: S = b·(s/cp)·k·h·bytes (tokens routed to top-k experts; Lepikhin et al. 2020 GShard). */
export function epAllToAllBytes(tokens: number, topK: number, hidden: number, actBytes: number): number {
  return tokens * topK * hidden * actBytes;
}

/** EP all-to-alls per MoE layer per micro-batch: dispatch + combine in forward and in backward (+2 with full recomputation). */
export function epAllToAllsPerLayer(fullRecompute: boolean): number {
  return fullRecompute ? 6 : 4;
}

/** Optimizer offload PCIe traffic per step: gradients down (Ψ_shard·bytes_grad) and parameters up (Ψ_shard·2) (Ren et al. 2021 ZeRO-Offload §4). */
export function optimizerOffloadBytes(shardParams: number, gradBytes: number): number {
  return shardParams * (gradBytes + 2);
}

/** Parameter offload PCIe traffic per micro-batch: the rank's shard fetched for forward and backward (Rajbhandari et al. 2021 ZeRO-Infinity). */
export function paramOffloadBytesPerMicrobatch(shardParams: number, paramBytes: number): number {
  return 2 * shardParams * paramBytes;
}

/**
 * Bytes of one gathered parameter element (ZeRO-3/FSDP all-gather, ZeRO-1/2 and distributed-optimizer parameter
 * gather): 4 in fp32 training, 1 when FP8 weights are gathered (Megatron --fp8-param-gather, torchao
 * enable_fsdp_float8_all_gather), else 2.
 */
export function paramCommBytes(precision: string, fp8ParamGather = false): number {
  if (precision === 'fp32') return 4;
  return precision === 'fp8-mixed' && fp8ParamGather ? 1 : 2;
}
