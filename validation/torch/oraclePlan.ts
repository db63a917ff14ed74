/**
 * Exports a resolved Plan as the oracle's plan: the engine's regime, model implementation and checkpointing policy
 * (shared/memory/engine.ts), the layout as torch meshes, optionally at reduced depth (`layers`, ShardLens then estimates
 * the same reduced model: memory is linear in layers). Bad input becomes an ExportProblem, never an exception.
 */
import { modelImplOf, optimizerImplOf, precisionRegimeOf, recomputeEveryOf, recomputePolicyOf } from '../../shared/memory/engine';
import type { ModelSpec, Plan } from '../../shared/plan/types';
import type { ExportProblem } from './exportPlan';
import type { OracleAcMode, OraclePlan } from './oracleTypes';

export interface OracleExportOptions {
  /** Build this many layers instead of the model's (≥ pp·vpp); the comparison estimates the same depth. */
  readonly layers?: number;
  /** A transformers config.json for impl 'hf' (else one is written from the ModelSpec). */
  readonly hfConfig?: Readonly<Record<string, unknown>>;
}

export interface ExportedOraclePlan {
  readonly oraclePlan: OraclePlan;
  /** The plan to estimate for comparison (the same depth as the oracle builds). */
  readonly comparablePlan: Plan;
  readonly notes: readonly string[];
}

/** The plan with `layers` layers (uneven stage splits dropped) — what ShardLens estimates next to the oracle. */
export function withLayers(plan: Plan, layers: number): Plan {
  if (layers === plan.model.layers) return plan;
  const { stageLayers: _dropped, ...parallel } = plan.parallel;
  return { ...plan, model: { ...plan.model, layers }, parallel };
}

/** The activation-checkpointing policy the oracle applies for the plan's recompute setting. */
export function oracleAc(plan: Plan): { mode: OracleAcMode; every?: number } {
  const t = plan.training;
  if (t.recompute === 'none') return { mode: 'none' };
  const policy = recomputePolicyOf(plan);
  if (t.recompute === 'selective') {
    if (policy === 'torchtitan-op') return { mode: 'selective-op' };
    if (policy === 'torchtitan-layer') return { mode: 'selective-layer', every: recomputeEveryOf(plan) };
    if (policy === 'megatron') return { mode: 'megatron-selective' };
  }
  return { mode: policy === 'hf' ? 'hf' : 'full' };
}

/**
 * A transformers config.json for a Llama-family ModelSpec (mixtral for MoE, qwen3 for q/k norms, qwen2 for qkv bias);
 * deepseek_v3 for multi-head latent attention, every layer dense (first_k_dense_replace = layers; the MoE layers' routing
 * is data-dependent and not built on fake tensors), q_lora_rank null when queries are projected directly.
 */
export function hfConfigOf(m: ModelSpec): Record<string, unknown> {
  const common = {
    hidden_size: m.hiddenSize, intermediate_size: m.ffnSize, num_hidden_layers: m.layers, num_attention_heads: m.heads,
    num_key_value_heads: m.kvHeads, head_dim: m.headDim, vocab_size: m.vocabSize, tie_word_embeddings: m.tiedEmbeddings,
    max_position_embeddings: Math.max(m.maxPositions || 0, 4096), rms_norm_eps: 1e-5,
  };
  if (m.mla) {
    const { head_dim: _qkWidth, ...rest } = common;
    return {
      ...rest, model_type: 'deepseek_v3', first_k_dense_replace: m.layers, q_lora_rank: m.mla.qLoraRank > 0 ? m.mla.qLoraRank : null,
      kv_lora_rank: m.mla.kvLoraRank, qk_nope_head_dim: m.mla.qkNopeHeadDim, qk_rope_head_dim: m.mla.qkRopeHeadDim, v_head_dim: m.mla.vHeadDim,
    };
  }
  if (m.moe) return { ...common, model_type: 'mixtral', num_local_experts: m.moe.experts, num_experts_per_tok: m.moe.topK, intermediate_size: m.moe.expertFfnSize };
  if (m.qkNorm) return { ...common, model_type: 'qwen3' };
  if (m.attnBias === 'qkv') return { ...common, model_type: 'qwen2' };
  return { ...common, model_type: 'llama', attention_bias: m.attnBias !== 'none', mlp_bias: m.mlpBias };
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 1;

/** Builds the oracle's plan. */
export function exportOraclePlan(plan: Plan, o: OracleExportOptions = {}): ExportedOraclePlan | ExportProblem {
  const p = plan.parallel, t = plan.training, s = p.sharding;
  const layers = o.layers ?? plan.model.layers;
  const chunks = p.pp * (p.schedule === 'interleaved' ? Math.max(1, p.vpp) : 1);
  if (!isCount(layers) || layers < chunks) return { code: 'unsupported-plan', message: `--layers must be a whole number ≥ ${chunks} (pipeline stages × virtual stages); got ${String(o.layers)}` };
  if (p.ep > 1 || p.etp > 1 && plan.model.moe) return { code: 'unsupported-plan', message: 'expert parallelism is not reproduced by the oracle (tensor-free routing of experts across ranks)' };
  if (plan.lora) return { code: 'unsupported-plan', message: 'LoRA adapters are not reproduced by the oracle' };
  if (s.offloadOptimizer !== 'none' || s.offloadParams !== 'none') return { code: 'unsupported-plan', message: 'CPU/NVMe offload is not reproduced by the oracle (it tracks device memory only)' };
  const notes: string[] = [];
  const impl = modelImplOf(plan);
  // The oracle's own torchtitan and Megatron blocks are Llama blocks; transformers builds DeepseekV3Attention itself.
  if (plan.model.mla && impl !== 'hf') return { code: 'unsupported-plan', message: 'multi-head latent attention is reproduced by the oracle only for transformers models (its torchtitan and Megatron blocks are Llama blocks)' };
  const regime = precisionRegimeOf(plan);
  // FSDP that shards runs as fully_shard (a stage-0 FSDP layout is torchtitan without fully_shard, or FSDP1 NO_SHARD:
  // no wrapper gathers); DeepSpeed runs its own engine.
  const fsdp = (s.style === 'fsdp' || s.style === 'fsdp2') && s.stage >= 2;
  const deepspeed = s.style === 'deepspeed' && regime === 'deepspeed';
  if (s.style === 'fsdp' && fsdp) notes.push('FSDP1 is reproduced with FSDP2 (same sharded and gathered bytes; FlatParameter padding differs).');
  if (t.precision === 'fp8-mixed') notes.push('FP8 GEMMs do not run on a CPU: the oracle runs them in bf16; the FP8 bytes in the estimate come from engine source (docs/engine-memory.md).');
  if (t.compile) notes.push('torch.compile is not run by the oracle: it measures eager PyTorch, beside the estimate of the same plan without compile (compile\'s saved tensors are checked on torch\'s partitioner in the test suite).');
  if (p.ep > 1) notes.push('Expert parallelism is not reproduced.');
  const shardGroup = fsdp ? (s.stage === 0 ? 1 : Math.max(1, s.shardGroupSize)) : p.dp;
  const dpReplicate = fsdp && p.dp % shardGroup === 0 ? p.dp / shardGroup : 1;
  const half = t.precision === 'fp32' ? 'fp32' : 'bf16';
  const oraclePlan: OraclePlan = {
    kind: 'shardlens-oracle-plan', schemaVersion: 1, name: plan.model.name, engine: plan.engine, regime, impl,
    attention: t.flashAttention ? 'flash' : 'eager',
    model: {
      layers, hiddenSize: plan.model.hiddenSize, heads: plan.model.heads, kvHeads: plan.model.kvHeads, headDim: plan.model.headDim,
      ffnSize: plan.model.ffnSize, gatedMlp: plan.model.gatedMlp, attnBias: plan.model.attnBias, mlpBias: plan.model.mlpBias,
      tiedEmbeddings: plan.model.tiedEmbeddings, vocabSize: paddedVocab(plan.model, p.tp), norm: plan.model.norm, qkNorm: plan.model.qkNorm,
      ...(plan.model.moe ? { moe: plan.model.moe } : {}),
    },
    ...(impl === 'hf' ? { hfConfig: o.hfConfig ?? hfConfigOf({ ...plan.model, layers }) } : {}),
    training: {
      microBatch: t.microBatch, seqLen: t.seqLen, gradAccum: t.gradAccum, precision: t.precision, optimizer: t.optimizer,
      optimizerImpl: optimizerImplOf(plan), paramDtype: half, reduceDtype: t.gradDtype === 'fp32' ? 'fp32' : half,
      gradReduceInBf16: t.gradDtype !== 'fp32' && !t.fp32GradAccum, distributedOptimizer: s.style === 'megatron-distopt',
      zeroStage: s.stage, reduceBucketElems: s.reduceBucketElems, overlapComm: s.overlapComm, dropout: plan.model.dropout === false ? 0 : 0.1,
      syncEveryMicroBatch: t.syncEveryMicroBatch !== false,
    },
    ...(deepspeed ? { deepspeed: deepspeedConfigOf(plan) } : {}),
    ac: oracleAc(plan),
    parallel: {
      pp: p.pp, vpp: p.schedule === 'interleaved' ? Math.max(1, p.vpp) : 1, schedule: p.schedule === 'zb-h1' ? '1f1b' : p.schedule,
      dpReplicate, dpShard: fsdp ? shardGroup : p.dp, cp: p.cp, tp: p.tp, sp: p.sp,
      // torch DDP under the torch regimes (the HF Trainer wraps fp32 and bf16 runs in DDP too); Megatron and DeepSpeed
      // reduce through their own buffers.
      sharding: fsdp ? 'fsdp2' : deepspeed ? 'deepspeed' : (regime === 'amp' || regime === 'fp32' || regime === 'bf16-true') && p.dp > 1 ? 'ddp' : 'none',
      reshardAfterForward: s.stage >= 3 ? s.reshardAfterForward : false,
    },
  };
  if (p.schedule === 'zb-h1') notes.push('ZB-H1 is run as 1F1B (the same in-flight micro-batches).');
  // The oracle runs eager PyTorch: the comparison estimates the eager plan (compile saves less, shared/memory/blocks.ts).
  const depth = withLayers(plan, layers);
  const comparablePlan = t.compile ? { ...depth, training: { ...depth.training, compile: false } } : depth;
  return { oraclePlan, comparablePlan, notes };
}

/**
 * The DeepSpeed JSON keys the plan states, as DeepSpeed reads them (deepspeed/runtime/zero/config.py; the oracle adds
 * the batch keys and the precision): the ZeRO stage, buckets, ZeRO-3 prefetch limits, the accumulation dtype and an
 * optimizer block when DeepSpeed builds FusedAdam.
 */
export function deepspeedConfigOf(plan: Plan): Record<string, unknown> {
  const s = plan.parallel.sharding;
  const zero: Record<string, unknown> = {
    stage: s.stage, overlap_comm: s.overlapComm, contiguous_gradients: s.contiguousGradients ?? true,
    reduce_bucket_size: s.reduceBucketElems, allgather_bucket_size: s.allgatherBucketElems,
  };
  if (s.stage >= 3) Object.assign(zero, { stage3_prefetch_bucket_size: s.prefetchBucketElems, stage3_max_live_parameters: s.maxLiveParams });
  return {
    zero_optimization: zero, ...(plan.training.fp32GradAccum ? { data_types: { grad_accum_dtype: 'fp32' } } : {}),
    // DeepSpeed's own FusedAdam (the oracle stands a torch AdamW in for it: probe/oracle/ds_engine.py).
    ...(s.dsFusedAdam ? { optimizer: { type: 'AdamW' } } : {}),
  };
}

/** Megatron pads the vocabulary to a multiple of 128·TP; other engines allocate it as written. */
function paddedVocab(m: ModelSpec, tp: number): number {
  const k = (m.vocabPadMultiple ?? 0) * tp;
  return k > 0 ? Math.ceil(m.vocabSize / k) * k : m.vocabSize;
}
