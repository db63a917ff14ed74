/**
 * What the engine a file is written for does with memory, when the file does not say: the precision regime, the model
 * implementation (what it saves for backward), the recomputation policy and the optimizer implementation.
 * Facts and sources: docs/engine-memory.md.
 */
import type { ModelImpl, OptimizerImpl, ParallelSpec, Plan, PrecisionRegime, RecomputePolicy } from '../plan/types';

/**
 * The precision regime: explicit, else fp32 and pure bf16 as written, else the engine's mixed precision
 * (Megatron/nanotron main grads and fp32 master; DeepSpeed fp32 partitions; FSDP2 MixedPrecisionPolicy; DDP autocast).
 */
export function precisionRegimeOf(plan: Pick<Plan, 'engine' | 'training'>): PrecisionRegime {
  const t = plan.training;
  if (t.regime) return t.regime;
  if (t.precision === 'fp32') return 'fp32';
  if (t.precision === 'bf16') return 'bf16-true';
  switch (plan.engine) {
    case 'megatron': case 'nanotron': return 'megatron';
    case 'deepspeed': return 'deepspeed';
    case 'fsdp1': case 'fsdp2': return 'fsdp2';
    default: return 'amp';
  }
}

/** The model implementation: explicit (readers set it per format), else Megatron for Megatron/nanotron, torchtitan for FSDP2, transformers otherwise. */
export function modelImplOf(plan: Pick<Plan, 'engine' | 'training'>): ModelImpl {
  if (plan.training.modelImpl) return plan.training.modelImpl;
  if (plan.engine === 'megatron' || plan.engine === 'nanotron') return 'megatron';
  return plan.engine === 'fsdp2' ? 'torchtitan' : 'hf';
}

/**
 * Whether the plan's attention kernel skips the blocks outside a sliding window: Transformer Engine's fused attention
 * under Megatron (`window_size`), torchtitan's FlexAttention block masks, and FlashAttention-2 where the config asks
 * for it (the HF trainers' `flash_attention_2`; a flash-attention setting stated in the file). PyTorch SDPA with the
 * sliding mask transformers builds and eager attention compute every block, so do ring attention's blocks under CP
 * (not modelled with a window).
 */
export function windowSkipsBlocks(plan: Plan): boolean {
  if (!plan.model.slidingWindow || !plan.training.flashAttention || Math.max(1, Math.floor(plan.parallel.cp) || 1) > 1) return false;
  if (modelImplOf(plan) !== 'hf') return true;
  return plan.sources['training.flashAttention']?.kind === 'explicit';
}

/**
 * The share of a transformers model's layers whose SDPA call carries transformers' sliding-window mask: its sliding
 * layers when attention is SDPA (not a stated FlashAttention-2, windowSkipsBlocks) and the sequence reaches the window
 * (masking_utils `_ignore_causal_mask_sdpa` drops the mask only while the keys are fewer than the window). On a GPU
 * FlashAttention takes no mask, so those layers run the memory-efficient kernel (shared/memory/blocks.ts
 * maskedSdpaBytes). 0 otherwise.
 */
export function maskedSlidingShare(plan: Plan): number {
  const sw = plan.model.slidingWindow;
  if (!sw || sw.chunked || modelImplOf(plan) !== 'hf' || !plan.training.flashAttention || windowSkipsBlocks(plan)) return 0;
  if (Math.max(1, Math.floor(plan.parallel.cp) || 1) > 1 || plan.training.seqLen < sw.window) return 0;
  return Math.min(1, sw.slidingLayers / Math.max(1, plan.model.layers));
}

/**
 * The recomputation policy: explicit, else Megatron's for Megatron models, HF gradient checkpointing for transformers
 * models, and for torchtitan full → every block, selective → per layer every 2nd block (torchtitan's default
 * selective_ac_option "2", torchtitan/config/job_config.py).
 */
export function recomputePolicyOf(plan: Pick<Plan, 'engine' | 'training'>): RecomputePolicy {
  const t = plan.training;
  if (t.recomputePolicy) return t.recomputePolicy;
  const impl = modelImplOf(plan);
  if (impl === 'megatron') return 'megatron';
  if (impl === 'hf') return 'hf';
  return t.recompute === 'selective' ? 'torchtitan-layer' : 'block';
}

/**
 * Blocks among `layers` that torchtitan's per-layer selective policy checkpoints whole (`_apply_layer_sac`: a running
 * count, checkpointed when count % N == 0): ⌊layers / N⌋. The memory's saved inputs and the time's reruns both count it.
 */
export function layerPolicyCheckpointedBlocks(layers: number, every: number): number {
  return Math.floor(layers / Math.max(1, every));
}

/**
 * Blocks between checkpointed blocks of the torchtitan per-layer policy (default 2); a fraction where a memory budget
 * checkpoints 1/n of the blocks (torchtitan memory_budget, formats/torchtitan/reader.ts).
 */
export function recomputeEveryOf(plan: Pick<Plan, 'training'>): number {
  const n = plan.training.recomputeEvery;
  return n !== undefined && Number.isFinite(n) && n >= 1 ? n : 2;
}

/**
 * The optimizer implementation: explicit, else fused (Megatron/DeepSpeed FusedAdam, torchtitan's default
 * "fused", transformers' default adamw_torch_fused on torch ≥ 2.8).
 */
export function optimizerImplOf(plan: Pick<Plan, 'training'>): OptimizerImpl {
  return plan.training.optimizerImpl ?? 'fused';
}

/**
 * Whether the pipeline is DeepSpeed's PipelineEngine (Megatron-DeepSpeed with --deepspeed, GPT-NeoX): DeepSpeed
 * sharding with more than one stage. Its TrainSchedule runs each micro-batch as RecvActivation, ForwardPass,
 * SendActivation, RecvGrad, BackwardPass, SendGrad instructions in order, and its p2p send and recv are blocking calls
 * (deepspeed/runtime/pipe/engine.py `_exec_send_activations`, `_exec_recv_grads`; deepspeed/runtime/pipe/p2p.py `send`
 * and `recv` without async_op), so no transfer overlaps the stage's compute (shared/time/deepspeedPipe.ts). It refuses
 * ZeRO-2 and ZeRO-3 (PipelineEngine.__init__ asserts the stage is below 2).
 */
export function deepspeedPipeline(plan: { readonly parallel: Pick<ParallelSpec, 'sharding' | 'pp'> }): boolean {
  return plan.parallel.sharding.style === 'deepspeed' && plan.parallel.pp > 1;
}

/**
 * DeepSpeed's pipeline engine without ZeRO in bf16 runs BF16_Optimizer: with ZeRO off, `_do_optimizer_sanity_check`
 * returns the BFLOAT16 wrapper for bf16 weights under pipeline parallelism (deepspeed/runtime/engine.py, DeepSpeed
 * 0.19.8; the 2022 releases BigScience's BLOOM ran did the same). It partitions the fp32 master weights and Adam states
 * over data parallel, keeps one gradient buffer for every parameter in its accumulation dtype, all-reduces the
 * gradients and all-gathers the updated 16-bit weights after its step (deepspeed/runtime/bf16_optimizer.py) — ZeRO-1
 * with the ZeRO stage read as 0. Without a pipeline DeepSpeed 0.19.8 takes DDP_BFLOAT16 instead (an unpartitioned
 * fp32 master copy and fp32 gradient casts at the step: shared/memory/deepspeed.ts, kind 4).
 */
export function deepspeedBf16Optimizer(plan: Pick<Plan, 'engine' | 'training' | 'parallel'>): boolean {
  return deepspeedPipeline(plan) && plan.parallel.sharding.stage === 0 && plan.training.precision === 'bf16-mixed'
    && precisionRegimeOf(plan) === 'deepspeed';
}
