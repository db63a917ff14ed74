/**
 * Activation terms (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models", §4 and
 * Table 2), generalised to GQA (k/v of KV·d columns), gated MLPs, flash attention, context parallelism and fp32.
 * All functions return bytes for ONE micro-batch on one rank unless stated otherwise.
 */
import type { LoraSaves } from './loraSaves';
import type { LinearAttentionSpec, MlaSpec, ModelImpl, PipelineSchedule, RecomputeKind, RecomputePolicy } from '../plan/types';
import { blockInputBytes, hfBlockBytes, hfNormSavedBytes, titanBlockBytes, titanOpSelectiveBytes } from './blocks';
import { layerPolicyCheckpointedBlocks } from './engine';
import { megatronMlaAttentionBytes, megatronMlaLatentBytes } from './mlaSaves';
import { megatronGatedDeltaNetSavedBytesPerToken } from './gatedDeltaNetSaves';
import { megatronAttentionRecomputedBytes, megatronGatedDeltaNetRecomputedBytes, megatronMlpRecomputedBytes } from './megatronRecompute';
import { moduleBit } from '../plan/recomputeModules';
import { linearAttentionFraction } from '../model/linearAttention';
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
  /** The code that builds the block (what its autograd graph saves, shared/memory/blocks.ts); absent: Megatron-core's counts. */
  readonly impl?: ModelImpl;
  /** Bytes of the residual stream when it differs from the compute dtype (4: transformers with fp32 weights under autocast). */
  readonly streamBytes?: number;
  /** Bytes of the 16-bit weight copies one layer keeps under autocast (its weight cache), per rank; 0 without autocast. */
  readonly autocastWeightBytes?: number;
  /** Bytes of the LM head's 16-bit weight copy under autocast (saved by the head until its backward), per rank. */
  readonly autocastHeadBytes?: number;
  /** Per-head RMSNorm of q and k (Qwen3, OLMo 2). */
  readonly qkNorm?: boolean;
  /** Gated DeltaNet layers among the model's (Qwen3-Next, Qwen3.5): their mixers save their own tensors (gatedDeltaNetSaves.ts). */
  readonly linearAttention?: LinearAttentionSpec;
  /** Layers of the model, for the share of Gated DeltaNet layers. */
  readonly layers?: number;
  /** Softmax attention's output gate (Qwen3-Next, Qwen3.5): sigmoid(gate) × the attention output feeds o_proj. */
  readonly outputGate?: boolean;
  /** The block norms run and save in the 16-bit compute dtype (MPT low_precision_layernorm). */
  readonly lowPrecisionNorm?: boolean;
  /** Four norms a block (Gemma 2/3: ModelSpec.sandwichNorms). */
  readonly sandwichNorms?: boolean;
  /** The norms keep an fp32 input and an fp32 normalised output (GemmaRMSNorm: ModelSpec.normFp32). */
  readonly normFp32?: boolean;
  /** Liger's RMSNorm replaces transformers' (TrainingSpec.ligerKernels `rms_norm`): it keeps its input and an fp32 rstd. */
  readonly ligerNorm?: boolean;
  /** Liger's SwiGLU/GeGLU replaces the gated MLP's activation and product (`swiglu`): it keeps the gate and up outputs. */
  readonly ligerGlu?: boolean;
  /** Attention scores soft-capped with tanh (Gemma 2: ModelSpec.attnLogitSoftcap); eager attention keeps tanh's output. */
  readonly attnSoftcap?: boolean;
  /** Share of the layers whose SDPA call carries transformers' sliding-window mask (shared/memory/engine.ts maskedSlidingShare). */
  readonly maskedSliding?: number;
  /** Which blocks recompute and what they keep (shared/memory/engine.ts recomputePolicyOf), and every how many blocks. */
  readonly acPolicy?: RecomputePolicy;
  /**
   * torchtitan blocks compiled by torch.compile: AOTAutograd's min-cut partitioner recomputes silu's output in the
   * backward instead of saving it (shared/memory/blocks.ts titanBlockBytes).
   */
  readonly compiled?: boolean;
  /**
   * Eager torchtitan-graph blocks whose RMSNorms upcast explicitly (torchtune): each norm saves its fp32 input, its
   * rsqrt and its unscaled 16-bit output (the scale's multiply), instead of the fused norm's input and rstd.
   */
  readonly normUpcast?: boolean;
  readonly acEvery?: number;
  /** Multi-head latent attention: its latents and head widths replace q/k/v of heads·headDim (shared/memory/mlaSaves.ts). */
  readonly mla?: MlaSpec;
  /** LoRA: the frozen base linears' inputs and the adapters' saved tensors (shared/memory/loraSaves.ts). */
  readonly loraSaves?: LoraSaves;
  /**
   * Megatron's selective recomputation modules as a bit mask (shared/plan/recomputeModules.ts recomputeModuleMask);
   * undefined: its default, core attention.
   */
  readonly recomputeMask?: number;
  /** A MoE layer's shared-expert width (shared experts × their FFN size), part of its MLP width. */
  readonly sharedFfn?: number;
}

/**
 * Tensors replicated across TP unless sequence parallel: two LayerNorm inputs, QKV input, MLP input (B·sbh each)
 * and two dropout masks (sbh): (4B + 2)·sbh = 10sbh for B = 2 (Korthikanti Eq.2, the "10" term; ÷t with SP, Eq.4).
 * Without dropout the masks do not exist: 4B·sbh. Under MLA the latents' norm inputs and outputs are added
 * (shared/memory/mlaSaves.ts megatronMlaLatentBytes).
 */
export function replicatedLayerActivationBytes(x: ActivationShape): number {
  const sbh = x.sLocal * x.b * x.h;
  // Under TE FP8 the QKV and MLP inputs (two of the four) are kept as 1-byte casts.
  const gemmInputs = x.fp8Inputs ? 2 * (x.actBytes - 1) : 0;
  // MLA's latents (their norms' inputs and outputs) are held like the block's norms: whole per rank, ÷t with SP.
  return ((4 * x.actBytes - gemmInputs + (x.dropout ? 2 : 0)) * sbh) / (x.sp ? x.tp : 1) + (x.mla ? megatronMlaLatentBytes(x, x.mla) : 0);
}

/**
 * TP-sharded tensors: Q, K, V and the projection input, B·sb(2·a·d + 2·KV·d), plus the MLP: plain 2B·sb·f (GeLU and
 * fc2 inputs), gated 3B·sb·f (fc1 gate/up outputs and fc2 input); = 24sbh/t for MHA, f = 4h, B = 2 (Korthikanti Eq.2).
 * `ffn` overrides the MLP width (MoE layers: top-k · expert size + shared experts, tokens spread evenly over experts).
 * Under MLA: B·sb·(2·a·qk + 2·a·d_v)/t for the attention (shared/memory/mlaSaves.ts megatronMlaAttentionBytes).
 */
export function shardedLayerActivationBytes(x: ActivationShape, ffn = x.ffn): number {
  const sb = x.sLocal * x.b;
  if (x.mla) {
    // MLA: q, k, v and the output at their own widths (megatronMlaAttentionBytes); the projection input is a·d_v wide.
    const fp8Inputs = x.fp8Inputs ? (x.actBytes - 1) * sb * (x.heads * x.mla.vHeadDim + ffn) : 0;
    return megatronMlaAttentionBytes(x, x.mla) + ((x.gated ? 3 : 2) * x.actBytes * sb * ffn - fp8Inputs) / x.tp;
  }
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

/**
 * One transformer layer without full recomputation: Megatron-core keeps Korthikanti's counts (Table 2 rows 1–5:
 * replicated + sharded + scores); eager PyTorch blocks keep what their graph saves (shared/memory/blocks.ts), torchtitan's
 * per-op selective policy its own subset. A model of two layer kinds (transformers' or Megatron-core's Gated DeltaNet and
 * attention layers) gives the mean over its layers, or with `largest` its larger kind (the one layer a recomputation
 * holds at a time).
 */
export function layerActivationBytes(x: ActivationShape, recompute: RecomputeKind, ffn = x.ffn, largest = false, moe = false): number {
  if (x.impl === 'torchtitan') {
    return recompute === 'selective' && x.acPolicy === 'torchtitan-op' ? titanOpSelectiveBytes(x, ffn) : titanBlockBytes(x, ffn);
  }
  if (x.impl === 'hf') return hfBlockBytes(x, ffn, largest);
  // Megatron's selective recomputation reruns the modules of its list (default core attention: its scores go).
  const mask = recompute === 'selective' ? x.recomputeMask ?? moduleBit('core_attn') : 0;
  const scores = attentionScoreBytes(x, (mask & moduleBit('core_attn')) !== 0 ? 'selective' : 'none');
  const attention = shardedLayerActivationBytes(x, 0) + scores + megatronOutputGateBytes(x) - megatronAttentionRecomputedBytes(x, mask);
  const mixer = megatronMixerBytes(x, attention, largest, mask);
  const mlp = shardedLayerActivationBytes(x, ffn) - shardedLayerActivationBytes(x, 0) - megatronMlpRecomputedBytes(x, ffn, moe, mask);
  return replicatedLayerActivationBytes(x) + mlp + mixer;
}

/**
 * Megatron-core's attention output gate (`--attention-output-gate`, Attention._apply_output_gate: x · sigmoid(gate),
 * compiled): the gate is a slice of linear_qkv's output, which the compiled multiply keeps as its input (a view, so the
 * projection's storage stays), and the projection's input is now the product, apart from the attention output the
 * kernel keeps: 2B·T·a·d/t beyond Korthikanti's count.
 */
export function megatronOutputGateBytes(x: ActivationShape): number {
  return x.outputGate ? (2 * x.actBytes * x.sLocal * x.b * x.heads * x.headDim) / x.tp : 0;
}

/**
 * The token mixer of a Megatron-core layer: softmax attention's saves, or over a model with Gated DeltaNet layers the
 * mean over its layers (shared/memory/gatedDeltaNetSaves.ts megatronGatedDeltaNetSavedBytesPerToken for theirs), or
 * the larger kind with `largest` (the one layer a recomputation holds at a time).
 */
function megatronMixerBytes(x: ActivationShape, attention: number, largest: boolean, mask: number): number {
  const la = x.linearAttention;
  const f = linearAttentionFraction({ layers: x.layers ?? 0, linearAttention: la });
  if (!la || f <= 0) return attention;
  const gdn = x.sLocal * x.b * megatronGatedDeltaNetSavedBytesPerToken(la, x.actBytes, x.tp, x.fp8Inputs === true) - megatronGatedDeltaNetRecomputedBytes(x, mask);
  return largest ? Math.max(attention, gdn) : (1 - f) * attention + f * gdn;
}

/**
 * A fully recomputed layer keeps only its input: B·sbh (= 2sbh, Korthikanti Table 2 last row), ÷t with SP; the fp32
 * residual stream for transformers models under autocast (shared/memory/blocks.ts blockInputBytes).
 */
export function checkpointedLayerBytes(x: ActivationShape): number {
  if (x.impl === 'hf' || x.impl === 'torchtitan') return blockInputBytes(x);
  return (x.actBytes * x.sLocal * x.b * x.h) / (x.sp ? x.tp : 1);
}

/**
 * Layers among `layers` that keep only their input: full recomputation keeps the inputs of the `recomputed` layers
 * (Megatron `--recompute-num-layers`); torchtitan's per-layer selective policy checkpoints every N-th block
 * (`_apply_layer_sac`: a running count, checkpointed when count % N == 0), floor(layers / N); none otherwise.
 */
export function checkpointedLayerCount(x: ActivationShape, layers: number, recompute: RecomputeKind, recomputed: number): number {
  if (recompute === 'full') return Math.min(layers, Math.max(0, recomputed));
  if (recompute === 'selective' && x.acPolicy === 'torchtitan-layer') return layerPolicyCheckpointedBlocks(layers, x.acEvery ?? 2);
  return 0;
}

/**
 * Activations one micro-batch leaves on a stage of `layers` layers: the checkpointed layers keep their inputs, the
 * others everything (checkpointedLayerCount).
 */
export function stageLayerActivationBytes(x: ActivationShape, layers: number, recompute: RecomputeKind, recomputed: number, ffn = x.ffn, routing = 0, moe = false): number {
  const r = checkpointedLayerCount(x, layers, recompute, recomputed);
  if (r === 0 && recompute !== 'full') return layers * (layerActivationBytes(x, recompute, ffn, false, moe) + routing);
  return r * checkpointedLayerBytes(x) + (layers - r) * (layerActivationBytes(x, recompute === 'full' ? 'none' : recompute, ffn, false, moe) + routing);
}

/**
 * Working set while recomputing one layer in the backward, held once (not per micro-batch): what the layer saves
 * without recomputation less what it kept (its input; torchtitan's per-op policy: its saved op outputs). Megatron's
 * full recomputation counts the layer's whole set (Korthikanti §5).
 */
export function recomputeWorkingBytes(x: ActivationShape, recompute: RecomputeKind, layers: number, ffn = x.ffn, routing = 0, moe = false): number {
  if (layers <= 0) return 0;
  const eager = x.impl === 'hf' || x.impl === 'torchtitan';
  if (recompute === 'full') return layerActivationBytes(x, 'none', ffn, true) + routing - (eager ? checkpointedLayerBytes(x) : 0);
  if (!eager && recompute === 'selective') {
    // Megatron's modules rebuild one layer's tensors at a time: what the layer kind with the most of them does not keep.
    const dense = layerActivationBytes(x, 'none', x.ffn, true) - layerActivationBytes(x, 'selective', x.ffn, true);
    return moe ? Math.max(dense, layerActivationBytes(x, 'none', ffn, true, true) - layerActivationBytes(x, 'selective', ffn, true, true)) : dense;
  }
  if (!eager || recompute !== 'selective') return 0;
  if (x.acPolicy === 'torchtitan-layer') return layers >= Math.max(1, x.acEvery ?? 2) ? layerActivationBytes(x, 'none', ffn, true) - checkpointedLayerBytes(x) : 0;
  if (x.acPolicy === 'torchtitan-op') return layerActivationBytes(x, 'none', ffn) - layerActivationBytes(x, 'selective', ffn);
  return 0;
}

/**
 * First stage: token ids (int64, 8sb) and the embedding dropout mask (sbh, ÷t with SP; none without dropout)
 * (Korthikanti §4.2.3 "sbhp/t"; Megatron theoretical_memory_usage "8*s*b*p"); transformers models also keep the
 * rotary cos and sin tables of the batch, (b, s, d) each in the residual stream's dtype (LlamaRotaryEmbedding); under
 * MLA d is the rotary head width d_r (DeepseekV3Config sets head_dim = qk_rope_head_dim for DeepseekV3RotaryEmbedding).
 */
export function embeddingActivationBytes(x: ActivationShape): number {
  const width = x.mla ? x.mla.qkRopeHeadDim : x.headDim;
  const rotary = x.impl === 'hf' ? 2 * (x.streamBytes ?? x.actBytes) * x.sLocal * x.b * width : 0;
  return 8 * x.sLocal * x.b + (x.dropout ? x.sLocal * x.b * x.h : 0) / (x.sp ? x.tp : 1) + rotary;
}

/**
 * Last stage, once: the final-norm input and the output-projection input, B·sbh each, both ÷t with SP when the head
 * re-gathers its sequence-parallel input in backward (Megatron, Korthikanti §4.2.3: the 4sbh/t term of
 * 4sbh/t·(1 + v/h)); a DTensor ColwiseParallel head (torchtitan) saves the all-gathered input, B·sbh whole.
 * transformers' eager final norm keeps (4 + S)·sbh (its fp32 input and the normalised tensor) and the head's input
 * (its 16-bit cast under autocast, with the head weight's 16-bit copy). A frozen head (LoRA that trains neither the
 * head nor a copy of it) saves no input: a linear whose weight needs no gradient keeps only what its input gradient
 * needs, the weight (autograd of `F.linear`: grad_input = grad_output · W). The logits and the loss: shared/memory/loss.ts.
 */
export function outputLayerInputBytes(x: ActivationShape, headSavesGathered = false, headTrains = true): number {
  const sbh = x.actBytes * x.sLocal * x.b * x.h;
  const split = x.sp ? x.tp : 1;
  if (x.impl === 'hf') {
    const S = x.streamBytes ?? x.actBytes, tokens = x.sLocal * x.b;
    const headIn = headTrains ? (S > x.actBytes ? sbh : S * tokens * x.h) : 0;
    return hfNormSavedBytes(x, S) * tokens * x.h + 4 * tokens + headIn + (x.autocastHeadBytes ?? 0);
  }
  const headIn = headTrains ? (headSavesGathered ? sbh : sbh / split) : 0;
  // The final norm's saved input: 16-bit for the fused norm; the fp32 copy and the unscaled output for an upcasting one.
  const normIn = x.normUpcast ? 4 * x.sLocal * x.b * x.h + sbh : sbh;
  if (x.impl === 'torchtitan') return normIn / split + (4 * x.sLocal * x.b) / split + headIn;
  return sbh / split + headIn;
}

/**
 * What D multi-token-prediction modules save for the backward beyond their transformer layers, per micro-batch
 * (megatron/core/transformer/multi_token_prediction.py `_concat_embeddings`, `process_mtp_loss`; shared/model/mtp.ts):
 * each module's pass through the output layer keeps its final norm's and the head's inputs and its loss's saved logits
 * (`lossSaved`, as the main loss); its enorm keeps its input, the next tokens' embedding (sbh), and eh_proj its input,
 * the two normalised halves concatenated (2·sbh); the first module's hnorm keeps the decoder's output (sbh), while a
 * later one's input is the previous module's output, which that module's final norm keeps already. Sequence-parallel
 * shards where SP is on: D·(output-layer inputs + lossSaved) + (3·D + 1)·sbh/t_sp.
 */
export function mtpSavedBytes(x: ActivationShape, modules: number, lossSaved: number): number {
  if (modules <= 0) return 0;
  const own = ((3 * modules + 1) * x.actBytes * x.sLocal * x.b * x.h) / (x.sp ? x.tp : 1);
  return modules * (outputLayerInputBytes(x, false, true) + lossSaved) + own;
}

/**
 * Megatron-core's block (TransformerLayer with TE modules) at the end of its forward: the MLP's row-parallel GEMM
 * output — B·sbh before its reduce-scatter under sequence parallelism — and the residual sum `bias_dropout_add` makes
 * next to it (B·sbh/t_sp), before the GEMM output is freed: B·sbh·(1 + 1/t_sp). Without recomputation the rest of the
 * block is saved; on a pipeline stage the last block's output is the stage's until it is sent and freed
 * (deallocate_output_tensor). probe/oracle/megatron.py `Layer.forward` allocates the same.
 */
export function blockOutputTransientBytes(x: ActivationShape): number {
  return x.actBytes * x.sLocal * x.b * x.h * (1 + 1 / (x.sp ? x.tp : 1));
}

/**
 * Megatron's output layer and final norm in the backward (TE `_LayerNormLinear.backward`: the dgrad GEMM, then the
 * norm's `rmsnorm_bwd`/`layernorm_bwd`), next to the logits' gradient: the GEMM's input gradient, B·sbh before its
 * reduce-scatter under sequence parallelism, and the norm's input gradient, B·sbh/t_sp: B·sbh·(1 + 1/t_sp). The weight
 * gradient goes into main_grad (gradient_accumulation_fusion): no tensor.
 */
export function headInputGradientBytes(x: ActivationShape): number {
  return x.actBytes * x.sLocal * x.b * x.h * (1 + 1 / (x.sp ? x.tp : 1));
}

/**
 * Megatron's embedding output gradient while the embedding's weight gradient is made (`embedding_dense_backward` reads
 * it): B·sbh, the whole sequence — under sequence parallelism the scatter to the sequence-parallel region all-gathers
 * it in its backward (megatron/core/tensor_parallel/mappings.py `_ScatterToSequenceParallelRegion.backward`).
 */
export function embeddingOutputGradientBytes(x: ActivationShape): number {
  return x.actBytes * x.sLocal * x.b * x.h;
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
