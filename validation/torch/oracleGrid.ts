/**
 * The oracle grid (issue 13 §4): configurations across engines and layouts, each estimated by ShardLens and measured
 * by the fake-tensor oracle (probe/oracle) at reduced depth — memory is linear in layers and ShardLens estimates the
 * same reduced model. Used by `npm run bench` (the table) and test/probe/oracleGrid.test.ts (the checks).
 */
import { makePlan } from '../../shared/plan/defaults';
import type { PlanInput } from '../../shared/plan/derive';
import type { ModelSpec, Plan } from '../../shared/plan/types';
import { compareAllocator, type AllocatorComparison } from './oracleAllocator';
import { compareOracle, totalBesideActivations, type OracleComparison } from './oracleCompare';
import { exportOraclePlan, hfConfigOf } from './oraclePlan';
import { isOracleFailure, runOracle } from './oracleRun';
import type { OracleReport } from './oracleTypes';
import { findPreset } from '../../shared/model/presets';
import gemma3Config from '../../data/models/gemma-3-1b.json';
import gemma2Config from '../../data/models/gemma-2-2b.json';
import gemma34bConfig from '../../data/models/gemma-3-4b.json';

/** Llama-3-8B's widths (GQA 32/8, SwiGLU 14,336, vocabulary 128,256) at 2 layers. */
const LLAMA: ModelSpec = {
  name: 'Llama-3-8B (2 layers)', layers: 2, hiddenSize: 4096, heads: 32, kvHeads: 8, headDim: 128, ffnSize: 14336, gatedMlp: true,
  attnBias: 'none', mlpBias: false, tiedEmbeddings: false, positions: 'rotary', maxPositions: 8192, norm: 'rmsnorm',
  qkNorm: false, vocabSize: 128256, dropout: false,
};
/** A Qwen2-style small model: q/k/v bias, tied embeddings, MHA-like GQA 16/16. */
const QWEN: ModelSpec = {
  ...LLAMA, name: 'Qwen2-style 1.5B width (2 layers)', hiddenSize: 1536, heads: 12, kvHeads: 2, headDim: 128, ffnSize: 8960,
  attnBias: 'qkv', tiedEmbeddings: true, vocabSize: 151936,
};

/**
 * DeepSeek-V3's attention widths (multi-head latent attention: q_lora_rank 1536, kv_lora_rank 512, q/k heads 128 + 64,
 * values 128; 128 heads; huggingface.co/deepseek-ai/DeepSeek-V3 config.json) with its dense layers' MLP (18,432), at 2
 * layers, both dense (the MoE layers are Mixtral's rows').
 */
const DSV3: ModelSpec = {
  ...LLAMA, name: 'DeepSeek-V3 width, dense (2 layers)', hiddenSize: 7168, heads: 128, kvHeads: 128, headDim: 192, ffnSize: 18432,
  vocabSize: 129280, maxPositions: 4096, mla: { qLoraRank: 1536, kvLoraRank: 512, qkNopeHeadDim: 128, qkRopeHeadDim: 64, vHeadDim: 128 },
};
/**
 * Mixtral-8x7B's widths (8 experts of FFN 14,336, top 2; huggingface.co/mistralai/Mixtral-8x7B-v0.1 config.json) at 2
 * layers, vocabulary 32,000: transformers 5 routes with static shapes (grouped GEMMs over T·k sorted copies), so the
 * oracle builds the MoE layers on fake tensors.
 */
const MIXTRAL: ModelSpec = {
  ...LLAMA, name: 'Mixtral-8x7B width (2 layers)', vocabSize: 32000,
  moe: { experts: 8, topK: 2, expertFfnSize: 14336, sharedExperts: 0, sharedExpertFfnSize: 0, denseFirstLayers: 0, layerFrequency: 1, sharedExpertGate: false, routerWeightsFp32: true },
};
/** DeepSeek-V2-Lite's widths (queries projected directly: q_lora_rank null; 16 heads; dense MLP 10,944). */
const DSV2_LITE: ModelSpec = {
  ...DSV3, name: 'DeepSeek-V2-Lite width, dense (2 layers)', hiddenSize: 2048, heads: 16, kvHeads: 16, ffnSize: 10944, vocabSize: 102400,
  mla: { qLoraRank: 0, kvLoraRank: 512, qkNopeHeadDim: 128, qkRopeHeadDim: 64, vHeadDim: 128 },
};
/** transformers' DeepSeek-V2 implementation (complex rotary tables) for the V2-Lite cases. */
const DSV2_CONFIG = { ...hfConfigOf(DSV2_LITE), model_type: 'deepseek_v2' };

/**
 * Gemma presets (their config.json) at 2 layers. Every layer full attention (Gemma 3 1B, Gemma 2 2B): four
 * GemmaRMSNorms a block that keep fp32 normalised outputs, per-head q/k norms (Gemma 3), Gemma 2's capped attention
 * scores and logits. Every layer sliding (Gemma 3 4B's language model: 8 query and 4 KV heads, a 1,024-token window),
 * for a sequence longer than the window: transformers passes SDPA the window's mask, the memory-efficient kernel keeps
 * it and the K/V transformers repeated to the query heads (shared/memory/blocks.ts maskedSdpaBytes).
 */
function gemma(id: string, raw: Record<string, unknown>, sliding = false): { model: ModelSpec; hfConfig: Record<string, unknown> } {
  const { slidingWindow, ...model } = findPreset(id)!.model;
  const { _shardlens: _s, ...cfg } = raw;
  const kind = sliding ? 'sliding_attention' : 'full_attention';
  return {
    model: { ...model, layers: 2, ...(sliding ? { slidingWindow: { window: slidingWindow!.window, slidingLayers: 2 } } : {}) },
    hfConfig: { ...cfg, num_hidden_layers: 2, layer_types: [kind, kind] },
  };
}
const GEMMA3 = gemma('gemma-3-1b', gemma3Config);
const GEMMA2 = gemma('gemma-2-2b', gemma2Config);
const GEMMA3_SLIDING = gemma('gemma-3-4b', { ...gemma34bConfig.text_config, model_type: 'gemma3_text' }, true);

/** `stages`: the pipeline stages the oracle measures (default: all); `hfConfig`: the config.json the oracle builds (impl 'hf'). */
export interface GridCase {
  readonly name: string; readonly plan: Plan; readonly layers?: number; readonly stages?: readonly number[];
  readonly hfConfig?: Readonly<Record<string, unknown>>;
}

type T = NonNullable<PlanInput['training']>;
type Par = NonNullable<PlanInput['parallel']>;
const tr = (x: Partial<T> = {}): T => ({ microBatch: 1, seqLen: 2048, precision: 'bf16-mixed', optimizer: 'adamw', flashAttention: true, recompute: 'none', ...x } as T);
const cl = (world: number) => ({ gpusPerNode: Math.min(8, world), nodes: Math.max(1, Math.ceil(world / 8)) });

function c(name: string, engine: Plan['engine'], training: Partial<T>, parallel: Par, model: ModelSpec = LLAMA, layers?: number, stages?: readonly number[], hfConfig?: GridCase['hfConfig']): GridCase {
  const world = (parallel.dp ?? 1) * (parallel.tp ?? 1) * (parallel.pp ?? 1) * (parallel.cp ?? 1);
  const m = layers ? { ...model, layers } : model;
  return { name, plan: makePlan({ engine, model: m, training: tr(training), parallel, cluster: cl(world) } as PlanInput), layers, ...(stages ? { stages } : {}), ...(hfConfig ? { hfConfig } : {}) };
}

const fsdp = (dp: number, x: Partial<Par> = {}): Par => ({ dp, ...x, sharding: { style: 'fsdp2', stage: 3, ...(x.sharding ?? {}) } } as Par);
/** torchtitan with PP: FSDP2 keeps every group gathered between micro-batches (fsdp_reshard_after_forward "default"). */
const titanPP = (dp: number, x: Partial<Par>): Par => fsdp(dp, { ...x, sharding: { style: 'fsdp2', stage: 3, reshardAfterForward: false } } as Partial<Par>);
const titan = { modelImpl: 'torchtitan' } as const;
/** torchtitan's PP runs: full AC (a layer keeps its input), 4 micro-batches, gradients reduced in fp32 (torchtitan's default `mixed_precision_reduce = "float32"`). */
const titanPPTraining = { ...titan, recompute: 'full', gradAccum: 4, gradDtype: 'fp32' } as const;
const hf = { modelImpl: 'hf' } as const;

/** The grid: 79 configurations. */
export const ORACLE_GRID: readonly GridCase[] = [
  // torchtitan on FSDP2: activation checkpointing policies, batch shapes, TP/SP, CP, HSDP, PP, resharding.
  c('titan FSDP8, no AC', 'fsdp2', { ...titan }, fsdp(8)),
  c('titan FSDP8, full AC', 'fsdp2', { ...titan, recompute: 'full' }, fsdp(8)),
  c('titan FSDP8, selective op AC', 'fsdp2', { ...titan, recompute: 'selective', recomputePolicy: 'torchtitan-op' }, fsdp(8)),
  c('titan FSDP8, selective layer AC (every 2nd)', 'fsdp2', { ...titan, recompute: 'selective', recomputePolicy: 'torchtitan-layer' }, fsdp(8)),
  c('titan FSDP8, micro batch 2 × 1024', 'fsdp2', { ...titan, microBatch: 2, seqLen: 1024 }, fsdp(8)),
  c('titan FSDP4, full AC, seq 4096', 'fsdp2', { ...titan, recompute: 'full', seqLen: 4096 }, fsdp(4)),
  c('titan FSDP8, full AC, seq 8192', 'fsdp2', { ...titan, recompute: 'full', seqLen: 8192 }, fsdp(8)),
  c('titan FSDP4 × TP2 (SP), no AC', 'fsdp2', { ...titan }, fsdp(4, { tp: 2, sp: true })),
  c('titan FSDP4 × TP2 (SP), full AC', 'fsdp2', { ...titan, recompute: 'full' }, fsdp(4, { tp: 2, sp: true })),
  c('titan FSDP2 × TP4 (SP), full AC', 'fsdp2', { ...titan, recompute: 'full' }, fsdp(2, { tp: 4, sp: true })),
  // torchtitan without FSDP (data_parallel_shard_degree 1) trains in fp32 under TP (maybe_enable_amp).
  c('titan TP2 (SP) only, fp32', 'fsdp2', { ...titan, precision: 'fp32' }, { dp: 1, tp: 2, sp: true, sharding: { style: 'fsdp2', stage: 0 } } as Par),
  c('titan FSDP4 × CP2, full AC', 'fsdp2', { ...titan, recompute: 'full', seqLen: 4096 }, fsdp(4, { cp: 2 })),
  c('titan FSDP2 × CP4, full AC', 'fsdp2', { ...titan, recompute: 'full', seqLen: 8192 }, fsdp(2, { cp: 4 })),
  c('titan HSDP 2 × 4, full AC', 'fsdp2', { ...titan, recompute: 'full' }, fsdp(8, { dpReplicate: 2, sharding: { style: 'fsdp2', stage: 3, shardGroupSize: 4 } } as Partial<Par>)),
  c('titan FSDP8, no reshard after forward', 'fsdp2', { ...titan }, fsdp(8, { sharding: { style: 'fsdp2', stage: 2, reshardAfterForward: false } } as Partial<Par>)),
  c('titan FSDP8, eager attention, seq 1024', 'fsdp2', { ...titan, flashAttention: false, seqLen: 1024 }, fsdp(8)),
  c('titan FSDP4, bf16-true', 'fsdp2', { ...titan, precision: 'bf16' }, fsdp(4)),
  c('titan PP2 1F1B × FSDP4, 4 micro-batches', 'fsdp2', { ...titanPPTraining }, titanPP(4, { pp: 2, schedule: '1f1b' })),
  c('titan PP2 GPipe × FSDP4, 4 micro-batches', 'fsdp2', { ...titanPPTraining }, titanPP(4, { pp: 2, schedule: 'gpipe' })),
  c('titan PP2 interleaved v2 × FSDP4, 4 layers', 'fsdp2', { ...titanPPTraining }, titanPP(4, { pp: 2, vpp: 2, schedule: 'interleaved' }), LLAMA, 4),
  c('titan PP4 1F1B × FSDP2, 8 micro-batches, 4 layers (a middle stage)', 'fsdp2', { ...titanPPTraining, gradAccum: 8 }, titanPP(2, { pp: 4, schedule: '1f1b' }), LLAMA, 4, [1]),
  c('titan PP2 interleaved v2 × FSDP2, 8 micro-batches, 4 layers', 'fsdp2', { ...titanPPTraining, gradAccum: 8 }, titanPP(2, { pp: 2, vpp: 2, schedule: 'interleaved' }), LLAMA, 4),
  // torchtitan turns mixed precision off with PP but no FSDP (torchtitan/distributed/utils.py maybe_enable_amp): fp32.
  c('titan PP2 1F1B without FSDP (fp32), 4 micro-batches, seq 1024', 'ddp', { ...titan, precision: 'fp32', recompute: 'full', gradAccum: 4, seqLen: 1024 }, { dp: 1, pp: 2, schedule: '1f1b', sharding: { style: 'ddp', stage: 0 } } as Par),
  // Gradient accumulation: the second micro-batch runs beside the first one's gradients (sharded under FSDP2).
  c('titan FSDP8, 2 micro-batches', 'fsdp2', { ...titan, gradAccum: 2 }, fsdp(8)),
  c('titan FSDP4, full AC, 2 micro-batches', 'fsdp2', { ...titan, recompute: 'full', gradAccum: 2 }, fsdp(4)),
  c('titan PP2 1F1B without FSDP (fp32), 4 micro-batches, seq 1024, foreach AdamW', 'ddp', { ...titan, precision: 'fp32', recompute: 'full', gradAccum: 4, seqLen: 1024, optimizerImpl: 'foreach' }, { dp: 1, pp: 2, schedule: '1f1b', sharding: { style: 'ddp', stage: 0 } } as Par),
  c('titan FSDP8, Qwen2-style tied, no AC', 'fsdp2', { ...titan }, fsdp(8), QWEN),
  c('titan FSDP8, Qwen2-style tied, full AC', 'fsdp2', { ...titan, recompute: 'full' }, fsdp(8), QWEN),
  // Hugging Face transformers models: DDP with autocast (HF Trainer, Accelerate), FSDP2, bf16-true, fp32.
  c('HF DDP4 autocast, sdpa', 'ddp', { ...hf }, { dp: 4, sharding: { style: 'ddp', stage: 0 } } as Par),
  c('HF DDP4 autocast, gradient checkpointing', 'ddp', { ...hf, recompute: 'full' }, { dp: 4, sharding: { style: 'ddp', stage: 0 } } as Par),
  c('HF DDP4 autocast, eager attention, seq 1024', 'ddp', { ...hf, flashAttention: false, seqLen: 1024 }, { dp: 4, sharding: { style: 'ddp', stage: 0 } } as Par),
  c('HF DDP2 autocast, micro batch 2, checkpointing', 'ddp', { ...hf, microBatch: 2, seqLen: 1024, recompute: 'full' }, { dp: 2, sharding: { style: 'ddp', stage: 0 } } as Par),
  c('HF FSDP2 × 8 (Accelerate fsdp_version 2)', 'fsdp2', { ...hf }, fsdp(8)),
  c('HF FSDP2 × 8, gradient checkpointing', 'fsdp2', { ...hf, recompute: 'full' }, fsdp(8)),
  c('HF FSDP2 × 8, gradient checkpointing, 2 micro-batches', 'fsdp2', { ...hf, recompute: 'full', gradAccum: 2 }, fsdp(8)),
  // The HF Trainer's accumulation: the first micro-batch under no_sync, its gradients kept unsharded (fp32 reduce).
  c('HF FSDP2 × 8, gradient checkpointing, 2 micro-batches, no_sync', 'fsdp2', { ...hf, recompute: 'full', gradAccum: 2, syncEveryMicroBatch: false }, fsdp(8)),
  c('HF FSDP2 × 8, bf16 reduce, 2 micro-batches, no_sync', 'fsdp2', { ...hf, gradAccum: 2, gradDtype: 'bf16', syncEveryMicroBatch: false }, fsdp(8)),
  c('HF DDP4 autocast, 2 micro-batches', 'ddp', { ...hf, gradAccum: 2 }, { dp: 4, sharding: { style: 'ddp', stage: 0 } } as Par),
  c('HF DDP2 autocast, gradient checkpointing, 2 micro-batches', 'ddp', { ...hf, recompute: 'full', gradAccum: 2 }, { dp: 2, sharding: { style: 'ddp', stage: 0 } } as Par),
  // torch's foreach AdamW (the default of torch.optim on CUDA): the step makes one state-sized list (exp_avg_sq's sqrt).
  c('HF single GPU bf16-true, foreach AdamW', 'ddp', { ...hf, precision: 'bf16', optimizerImpl: 'foreach' }, { dp: 1, sharding: { style: 'ddp', stage: 0 } } as Par),
  c('HF DDP2 autocast, foreach AdamW, gradient checkpointing', 'ddp', { ...hf, recompute: 'full', optimizerImpl: 'foreach' }, { dp: 2, sharding: { style: 'ddp', stage: 0 } } as Par),
  c('HF FSDP2 × 8, foreach AdamW, gradient checkpointing', 'fsdp2', { ...hf, recompute: 'full', optimizerImpl: 'foreach' }, fsdp(8)),
  c('HF single GPU bf16-true, 2 micro-batches', 'ddp', { ...hf, precision: 'bf16', gradAccum: 2 }, { dp: 1, sharding: { style: 'ddp', stage: 0 } } as Par),
  c('HF DDP2 Qwen2-style, sdpa', 'ddp', { ...hf }, { dp: 2, sharding: { style: 'ddp', stage: 0 } } as Par, QWEN),
  c('HF single GPU bf16-true', 'ddp', { ...hf, precision: 'bf16' }, { dp: 1, sharding: { style: 'ddp', stage: 0 } } as Par),
  c('HF DDP2 fp32, seq 512', 'ddp', { ...hf, precision: 'fp32', seqLen: 512 }, { dp: 2, sharding: { style: 'ddp', stage: 0 } } as Par),
  // Multi-head latent attention (transformers DeepseekV3Attention / DeepseekV2Attention): latents, their norms, q/k of
  // heads·(nope + rope), v and the output of heads·v_head_dim.
  c('HF DDP2 autocast, DeepSeek-V3 MLA, sdpa', 'ddp', { ...hf }, { dp: 2, sharding: { style: 'ddp', stage: 0 } } as Par, DSV3),
  c('HF DDP2 autocast, DeepSeek-V3 MLA, eager attention, seq 1024', 'ddp', { ...hf, flashAttention: false, seqLen: 1024 }, { dp: 2, sharding: { style: 'ddp', stage: 0 } } as Par, DSV3),
  c('HF DDP2 autocast, DeepSeek-V2-Lite MLA (direct queries), sdpa', 'ddp', { ...hf }, { dp: 2, sharding: { style: 'ddp', stage: 0 } } as Par, DSV2_LITE, undefined, undefined, DSV2_CONFIG),
  c('HF single GPU bf16-true, DeepSeek-V3 MLA', 'ddp', { ...hf, precision: 'bf16' }, { dp: 1, sharding: { style: 'ddp', stage: 0 } } as Par, DSV3),
  c('HF DDP2 fp32, DeepSeek-V2-Lite MLA, seq 512', 'ddp', { ...hf, precision: 'fp32', seqLen: 512 }, { dp: 2, sharding: { style: 'ddp', stage: 0 } } as Par, DSV2_LITE, undefined, undefined, DSV2_CONFIG),
  // transformers' MoE layers (Mixtral: grouped-GEMM experts, fp32 router weights), bf16 on one GPU.
  c('HF single GPU bf16-true, Mixtral MoE', 'ddp', { ...hf, precision: 'bf16' }, { dp: 1, sharding: { style: 'ddp', stage: 0 } } as Par, MIXTRAL),
  c('HF single GPU bf16-true, Gemma 3 1B width', 'ddp', { ...hf, precision: 'bf16' }, { dp: 1, sharding: { style: 'ddp', stage: 0 } } as Par, GEMMA3.model, undefined, undefined, GEMMA3.hfConfig),
  c('HF DDP2 autocast, Gemma 3 1B width', 'ddp', { ...hf }, { dp: 2, sharding: { style: 'ddp', stage: 0 } } as Par, GEMMA3.model, undefined, undefined, GEMMA3.hfConfig),
  // SDPA as transformers picks it by default (no FlashAttention-2 stated), over a sequence twice the window.
  c('HF single GPU bf16-true, Gemma 3 4B width, sliding layers under SDPA, seq 2048', 'ddp', { ...hf, precision: 'bf16', flashAttention: undefined }, { dp: 1, sharding: { style: 'ddp', stage: 0 } } as Par, GEMMA3_SLIDING.model, undefined, undefined, GEMMA3_SLIDING.hfConfig),
  // Gemma 2 has no SDPA path in transformers 5.24 (eager or FlashAttention-2): eager, with its capped scores.
  c('HF single GPU bf16-true, Gemma 2 2B width, eager attention, seq 1024', 'ddp', { ...hf, precision: 'bf16', flashAttention: false, seqLen: 1024 }, { dp: 1, sharding: { style: 'ddp', stage: 0 } } as Par, GEMMA2.model, undefined, undefined, GEMMA2.hfConfig),
  c('HF single GPU bf16-true, Mixtral MoE, gradient checkpointing', 'ddp', { ...hf, precision: 'bf16', recompute: 'full' }, { dp: 1, sharding: { style: 'ddp', stage: 0 } } as Par, MIXTRAL),
  // Megatron-style: 16-bit weights, fp32 main_grad and master, the distributed optimizer, TP/SP, PP, dropout.
  c('Megatron DP8, distributed optimizer', 'megatron', { gradDtype: 'fp32' }, { dp: 8, sharding: { style: 'megatron-distopt', stage: 1 } } as Par),
  c('Megatron DP4, no distributed optimizer', 'megatron', { gradDtype: 'fp32' }, { dp: 4, sharding: { style: 'ddp', stage: 0 } } as Par),
  c('Megatron DP4 × TP2 (SP), distributed optimizer', 'megatron', { gradDtype: 'fp32' }, { dp: 4, tp: 2, sp: true, sharding: { style: 'megatron-distopt', stage: 1 } } as Par),
  c('Megatron DP2 × TP4 (SP), full recompute', 'megatron', { gradDtype: 'fp32', recompute: 'full' }, { dp: 2, tp: 4, sp: true, sharding: { style: 'megatron-distopt', stage: 1 } } as Par),
  c('Megatron DP8, selective recompute', 'megatron', { gradDtype: 'fp32', recompute: 'selective', flashAttention: false, seqLen: 1024 }, { dp: 8, sharding: { style: 'megatron-distopt', stage: 1 } } as Par),
  c('Megatron DP8, dropout 0.1', 'megatron', { gradDtype: 'fp32' }, { dp: 8, sharding: { style: 'megatron-distopt', stage: 1 } } as Par, { ...LLAMA, dropout: true }),
  c('Megatron DP8, --grad-reduce-in-bf16', 'megatron', { gradDtype: 'bf16' }, { dp: 8, sharding: { style: 'megatron-distopt', stage: 1 } } as Par),
  c('Megatron PP2 1F1B × DP4, 4 micro-batches', 'megatron', { gradDtype: 'fp32', gradAccum: 4 }, { dp: 4, pp: 2, schedule: '1f1b', sharding: { style: 'megatron-distopt', stage: 1 } } as Par),
  c('Megatron PP2 interleaved v2 × DP4, 4 layers', 'megatron', { gradDtype: 'fp32', gradAccum: 4 }, { dp: 4, pp: 2, vpp: 2, schedule: 'interleaved', sharding: { style: 'megatron-distopt', stage: 1 } } as Par, LLAMA, 4),
  c('Megatron PP2 1F1B × TP2 × DP2, full recompute, 4 layers', 'megatron', { gradDtype: 'fp32', gradAccum: 4, recompute: 'full' }, { dp: 2, tp: 2, sp: false, pp: 2, schedule: '1f1b', sharding: { style: 'megatron-distopt', stage: 1 } } as Par, LLAMA, 4),
  // DeepSpeed's own engine (ZeRO-1/2 DeepSpeedZeroOptimizer, BF16_Optimizer, ZeRO-3) with the settings users vary.
  // Without ZeRO, bf16 weights run DeepSpeed's DDP_BFLOAT16 wrapper (FP16_UnfusedOptimizer around the torch optimizer).
  c('DeepSpeed ZeRO-0 × 8, bf16 (DDP_BFLOAT16)', 'deepspeed', { ...hf }, { dp: 8, sharding: { style: 'deepspeed', stage: 0 } } as Par),
  c('DeepSpeed ZeRO-0 × 8, bf16, FusedAdam from the JSON (FP16_Optimizer)', 'deepspeed', { ...hf }, { dp: 8, sharding: { style: 'deepspeed', stage: 0, dsFusedAdam: true } } as Par),
  c('DeepSpeed ZeRO-0 × 4, Qwen2-style tied', 'deepspeed', { ...hf }, { dp: 4, sharding: { style: 'deepspeed', stage: 0 } } as Par, QWEN),
  c('DeepSpeed ZeRO-0 × 4, Qwen2-style tied, 2 micro-batches', 'deepspeed', { ...hf, gradAccum: 2 }, { dp: 4, sharding: { style: 'deepspeed', stage: 0 } } as Par, QWEN),
  c('DeepSpeed ZeRO-1 × 8', 'deepspeed', { ...hf }, { dp: 8, sharding: { style: 'deepspeed', stage: 1 } } as Par),
  c('DeepSpeed ZeRO-2 × 8, overlap_comm', 'deepspeed', { ...hf }, { dp: 8, sharding: { style: 'deepspeed', stage: 2, overlapComm: true } } as Par),
  c('DeepSpeed ZeRO-2 × 8, no overlap', 'deepspeed', { ...hf }, { dp: 8, sharding: { style: 'deepspeed', stage: 2, overlapComm: false } } as Par),
  c('DeepSpeed ZeRO-3 × 8', 'deepspeed', { ...hf }, { dp: 8, sharding: { style: 'deepspeed', stage: 3 } } as Par),
  // The Hugging Face Trainer's "auto" buckets: reduce_bucket_size h², stage3_prefetch_bucket_size 0.9·h².
  c('DeepSpeed ZeRO-3 × 8, HF auto buckets', 'deepspeed', { ...hf }, { dp: 8, sharding: { style: 'deepspeed', stage: 3, reduceBucketElems: 4096 ** 2, prefetchBucketElems: Math.round(0.9 * 4096 ** 2) } } as Par),
  c('DeepSpeed ZeRO-3 × 8, max_live_parameters 1e8', 'deepspeed', { ...hf }, { dp: 8, sharding: { style: 'deepspeed', stage: 3, maxLiveParams: 1e8 } } as Par),
  c('DeepSpeed ZeRO-2 × 8, HF auto reduce bucket', 'deepspeed', { ...hf }, { dp: 8, sharding: { style: 'deepspeed', stage: 2, overlapComm: true, reduceBucketElems: 4096 ** 2 } } as Par),
  c('DeepSpeed ZeRO-2 × 8, no contiguous_gradients', 'deepspeed', { ...hf }, { dp: 8, sharding: { style: 'deepspeed', stage: 2, contiguousGradients: false } } as Par),
  // data_types.grad_accum_dtype "fp32": an fp32 gradient partition (ZeRO-2); BF16_Optimizer for ZeRO-1.
  c('DeepSpeed ZeRO-2 × 8, fp32 grad accumulation', 'deepspeed', { ...hf, fp32GradAccum: true }, { dp: 8, sharding: { style: 'deepspeed', stage: 2 } } as Par),
  c('DeepSpeed ZeRO-1 × 8, BF16_Optimizer (fp32 accum)', 'deepspeed', { ...hf, fp32GradAccum: true }, { dp: 8, sharding: { style: 'deepspeed', stage: 1 } } as Par),
  c('DeepSpeed ZeRO-1 × 8, overlap_comm, 2 micro-batches', 'deepspeed', { ...hf, gradAccum: 2 }, { dp: 8, sharding: { style: 'deepspeed', stage: 1, overlapComm: true } } as Par),
  c('DeepSpeed ZeRO-2 × 4, Qwen2-style tied, overlap_comm', 'deepspeed', { ...hf }, { dp: 4, sharding: { style: 'deepspeed', stage: 2, overlapComm: true } } as Par, QWEN, 3),
];

export interface GridResult {
  readonly case: GridCase; readonly comparison?: OracleComparison; readonly report?: OracleReport; readonly error?: string;
  /** Per stage: the total at the peak apart from the activations, oracle vs estimate (oracleCompare.ts). */
  readonly besideActivations?: ReturnType<typeof totalBesideActivations>;
  /** The caching allocator's replay beside the estimate's reserved memory, per stage (validation/torch/oracleAllocator.ts). */
  readonly allocator?: readonly AllocatorComparison[];
}

/** Runs the whole grid through the oracle in one Python process and compares each case with its estimate. */
export async function runOracleGrid(python: string, cases: readonly GridCase[] = ORACLE_GRID, timeoutMs = 900_000): Promise<GridResult[]> {
  const exported = cases.map((g) => exportOraclePlan(g.plan, { ...(g.layers ? { layers: g.layers } : {}), ...(g.hfConfig ? { hfConfig: g.hfConfig } : {}) }));
  const runnable = exported.map((e, i) => ('code' in e ? undefined : { i, e })).filter((x) => x !== undefined);
  const plans = runnable.map((r) => (cases[r.i].stages ? { ...r.e.oraclePlan, stages: cases[r.i].stages } : r.e.oraclePlan));
  const out = await runOracle(plans, { python, timeoutMs });
  return cases.map((g, i): GridResult => {
    const e = exported[i];
    if ('code' in e) return { case: g, error: `${e.code}: ${e.message}` };
    if (isOracleFailure(out)) return { case: g, error: `${out.code}: ${out.message}` };
    const report = out[runnable.findIndex((r) => r.i === i)];
    if (!report?.ok) return { case: g, report, error: `${report?.error?.code}: ${report?.error?.message}` };
    return {
      case: g, report, comparison: compareOracle(report, e.comparablePlan), besideActivations: totalBesideActivations(report, e.comparablePlan),
      allocator: compareAllocator(report, e.comparablePlan),
    };
  });
}
