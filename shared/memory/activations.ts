/**
 * Activation terms (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models", §4 and
 * Table 2), generalised to GQA (k/v of KV·d columns), gated MLPs, flash attention, context parallelism and fp32.
 * All functions return bytes for ONE micro-batch on one rank unless stated otherwise.
 */
import type { PipelineSchedule, RecomputeKind } from '../plan/types';
import { inFlightChunkPasses } from './pipeline';

/** The dimensions the activation formulas need. */
export interface ActivationShape {
  /** Tokens per sequence on this rank (s / cp). */
  readonly sLocal: number;
  /** Micro batch (b). */
  readonly b: number;
  readonly h: number;
  /** Query heads (a). */
  readonly heads: number;
  /** KV heads held by this rank before the /t split (replicated heads counted as t·per-rank). */
  readonly kvHeadsEff: number;
  readonly headDim: number;
  readonly ffn: number;
  readonly gated: boolean;
  readonly tp: number;
  readonly sp: boolean;
  readonly flash: boolean;
  /** Bytes per activation element (2 in 16-bit training). */
  readonly actBytes: number;
  /** Keys each query attends to on this rank (s with all-gathered KV under CP). */
  readonly sKeys: number;
  /** Dropout active: 1-byte masks are kept (Korthikanti's counts assume it). */
  readonly dropout: boolean;
  /** GEMM inputs are saved as their 1-byte fp8 casts (Transformer Engine FP8: Megatron, NeMo). */
  readonly fp8Inputs?: boolean;
}

/**
 * Tensors replicated across TP unless sequence parallel: two LayerNorm inputs, QKV input, MLP input (B·sbh each)
 * and two dropout masks (sbh): (4B + 2)·sbh = 10sbh for B = 2 (Korthikanti Eq.2, the "10" term; ÷t with SP, Eq.4).
 * Without dropout the masks do not exist: 4B·sbh.
 */
export function replicatedLayerActivationBytes(x: ActivationShape): number {
  const sbh = x.sLocal * x.b * x.h;
  // Under TE FP8 the QKV and MLP inputs (two of the four) are kept as 1-byte casts.
  const gemmInputs = x.fp8Inputs ? 2 * (x.actBytes - 1) : 0;
  return ((4 * x.actBytes - gemmInputs + (x.dropout ? 2 : 0)) * sbh) / (x.sp ? x.tp : 1);
}

/**
 * TP-sharded tensors: Q, K, V and the projection input, B·sb(2·a·d + 2·KV·d), plus the MLP: plain 2B·sb·f (GeLU and
 * fc2 inputs), gated 3B·sb·f (fc1 gate/up outputs and fc2 input); = 24sbh/t for MHA, f = 4h, B = 2 (Korthikanti Eq.2).
 * `ffn` overrides the MLP width (MoE layers: top-k · expert size + shared experts, tokens spread evenly over experts).
 */
export function shardedLayerActivationBytes(x: ActivationShape, ffn = x.ffn): number {
  const sb = x.sLocal * x.b;
  const attn = x.actBytes * sb * (2 * x.heads * x.headDim + 2 * x.kvHeadsEff * x.headDim);
  const mlp = (x.gated ? 3 : 2) * x.actBytes * sb * ffn;
  // Under TE FP8 the projection input (a·d) and the fc2 input (f) are kept as 1-byte casts.
  const gemmInputs = x.fp8Inputs ? (x.actBytes - 1) * sb * (x.heads * x.headDim + ffn) : 0;
  return (attn + mlp - gemmInputs) / x.tp;
}

/**
 * Attention scores: softmax output, its dropout mask and dropout output, (2B + 1)·a·s²·b/t = 5as²b/t (Korthikanti Eq.2);
 * without dropout only the softmax output, B·a·s²·b/t.
 * Flash attention keeps only the fp32 log-sum-exp, 4·a·s·b/t (Dao et al. 2022). Selective recomputation drops it (Eq.6).
 */
export function attentionScoreBytes(x: ActivationShape, recompute: RecomputeKind): number {
  if (recompute === 'selective') return 0;
  if (x.flash) return (4 * x.heads * x.sLocal * x.b) / x.tp;
  return ((x.dropout ? 2 * x.actBytes + 1 : x.actBytes) * x.heads * x.sLocal * x.sKeys * x.b) / x.tp;
}

/** One transformer layer without full recomputation: replicated + sharded + scores (Korthikanti Table 2 rows 1–5). */
export function layerActivationBytes(x: ActivationShape, recompute: RecomputeKind, ffn = x.ffn): number {
  return replicatedLayerActivationBytes(x) + shardedLayerActivationBytes(x, ffn) + attentionScoreBytes(x, recompute === 'full' ? 'none' : recompute);
}

/** A fully recomputed layer keeps only its input: B·sbh (= 2sbh, Korthikanti Table 2 last row), ÷t with SP. */
export function checkpointedLayerBytes(x: ActivationShape): number {
  return (x.actBytes * x.sLocal * x.b * x.h) / (x.sp ? x.tp : 1);
}

/**
 * Activations one micro-batch leaves on a stage of `layers` layers: full recompute keeps inputs of the recomputed
 * `recomputed` layers and everything of the others (Megatron `--recompute-num-layers`).
 */
export function stageLayerActivationBytes(x: ActivationShape, layers: number, recompute: RecomputeKind, recomputed: number, ffn = x.ffn): number {
  if (recompute !== 'full') return layers * layerActivationBytes(x, recompute, ffn);
  const r = Math.min(layers, Math.max(0, recomputed));
  return r * checkpointedLayerBytes(x) + (layers - r) * layerActivationBytes(x, 'none', ffn);
}

/** Working set while recomputing one layer in the backward: one layer's full activations, held once (not per micro-batch). */
export function recomputeWorkingBytes(x: ActivationShape, recompute: RecomputeKind, layers: number, ffn = x.ffn): number {
  return recompute === 'full' && layers > 0 ? layerActivationBytes(x, 'none', ffn) : 0;
}

/**
 * First stage: token ids (int64, 8sb) and the embedding dropout mask (sbh, ÷t with SP; none without dropout)
 * (Korthikanti §4.2.3 "sbhp/t"; Megatron theoretical_memory_usage "8*s*b*p").
 */
export function embeddingActivationBytes(x: ActivationShape): number {
  return 8 * x.sLocal * x.b + (x.dropout ? x.sLocal * x.b * x.h : 0) / (x.sp ? x.tp : 1);
}

/**
 * Last stage, once: the final-norm input and the output-projection input, B·sbh each, both ÷t with SP when the head
 * re-gathers its sequence-parallel input in backward (Megatron, Korthikanti §4.2.3: the 4sbh/t term of
 * 4sbh/t·(1 + v/h)); a DTensor ColwiseParallel head (torchtitan) saves the all-gathered input, B·sbh whole.
 * The logits and the loss: shared/memory/loss.ts.
 */
export function outputLayerInputBytes(x: ActivationShape, headSavesGathered = false): number {
  const sbh = x.actBytes * x.sLocal * x.b * x.h;
  const split = x.sp ? x.tp : 1;
  return sbh / split + (headSavesGathered ? sbh : sbh / split);
}

/**
 * Micro-batches whose activations a stage holds at its peak with Megatron's schedules, in units of the stage's layers:
 * GPipe m; 1F1B and ZB-H1 min(m, p − i) (Narayanan et al. 2021 §2.2.1, the first stage holds p); interleaved
 * min(m·v, 2(p − i − 1) + (v − 1)p + 1)/v chunk micro-batches (for i = 0 this is p·(1 + (p − 1)/(p·v)), Korthikanti
 * §4.2.3). Each engine's count: inFlightChunkPasses (shared/memory/pipeline.ts). No pipeline: 1.
 */
export function inFlightMicrobatchCount(schedule: PipelineSchedule, p: number, v: number, m: number, stage: number): number {
  return inFlightChunkPasses('megatron', schedule, p, v, m, stage) / (schedule === 'interleaved' && v > 1 && p > 1 ? v : 1);
}
