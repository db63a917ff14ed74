/**
 * Exact parameter counts per component of a decoder transformer (docs/formulas.md#parameters).
 * Counts are trainable parameters as the framework creates them; buffers (rotary inv_freq, GPT-2 causal masks) are not parameters.
 */
import { gatedDeltaNetOther, gatedDeltaNetWeights, linearAttentionFraction } from './linearAttention';
import type { ParameterCounts } from '../plan/result';
import type { LoraSpec, ModelSpec } from '../plan/types';
import { mlaLoraShapes, mlaNormParams, mlaWeights } from './mla';
import { mtpModules, mtpOwnParams } from './mtp';

/** Parameters of one layer, split by how tensor parallelism treats them. */
export interface LayerParams {
  /** q, k, v, o weight matrices (TP-sharded; k/v may be replicated when tp > kv heads). */
  readonly attnWeights: number;
  /** k and v weights alone (part of attnWeights), for the KV-replication rule. */
  readonly kvWeights: number;
  /** Attention biases and q/k norms. */
  readonly attnOther: number;
  /**
   * Attention parameters every TP rank holds whole (part of attnWeights + attnOther): MLA's down projections and latent
   * norms (shared/model/mla.ts); 0 otherwise.
   */
  readonly attnReplicated: number;
  /** Dense MLP matrices and biases (dense layers only). */
  readonly denseMlp: number;
  /** The per-layer norms, two (four with Gemma 2/3's sandwich norms), replicated across TP. */
  readonly norms: number;
  /** Routed experts of one MoE layer (EP/ETP-sharded). */
  readonly experts: number;
  /** Router (gate) of one MoE layer (replicated). */
  readonly router: number;
  /** Shared experts (and their gate) of one MoE layer (TP-sharded like a dense MLP). */
  readonly sharedExperts: number;
  /** Inactive routed-expert parameters per MoE layer: (E − k) experts. */
  readonly inactiveExperts: number;
}

/** Every component of the model's parameter count. */
export interface ParamBreakdown extends ParameterCounts {
  /** Padded vocabulary rows actually allocated. */
  readonly paddedVocab: number;
  readonly embedding: number;
  readonly positions: number;
  readonly perLayer: LayerParams;
  readonly denseLayers: number;
  readonly moeLayers: number;
  readonly finalNorm: number;
  /** Separate output projection (0 when tied). */
  readonly lmHead: number;
  /** The multi-token prediction modules: their transformer layers, projections and norms (0 without; shared/model/mtp.ts). */
  readonly mtp: number;
  /** LoRA adapter parameters (0 without LoRA). */
  readonly lora: number;
}

/** Megatron vocabulary padding: ceil(V / (mult·tp))·mult·tp (megatron/training/tokenizer `_vocab_size_with_padding`). */
export function paddedVocabSize(vocab: number, padMultiple: number | undefined, tp = 1): number {
  if (!padMultiple || padMultiple <= 0) return vocab;
  const m = padMultiple * Math.max(1, tp);
  return Math.ceil(vocab / m) * m;
}

/** Parameters of one MLP with intermediate size f: gated 3·h·f (+ 2f + h biases), plain 2·h·f (+ f + h biases). */
export function mlpParams(model: ModelSpec, f: number): number {
  const h = model.hiddenSize;
  const weights = (model.gatedMlp ? 3 : 2) * h * f;
  const bias = model.mlpBias ? (model.gatedMlp ? 2 * f : f) + h : 0;
  return weights + bias;
}

/** Parameters of one normalisation layer: RMSNorm h, LayerNorm 2h (weight and bias; h without the bias, MPT's no_bias). */
export function normParams(model: ModelSpec): number {
  return model.norm === 'layernorm' && model.normBias !== false ? 2 * model.hiddenSize : model.hiddenSize;
}

/**
 * The phase of the MoE layers on their frequency f: layer i is MoE when (i − phase) is a multiple of f. The Qwen-MoE
 * rule ((i + 1) % f = 0, decoder_sparse_step) is phase f − 1, the default; Megatron's integer --moe-layer-freq
 * (i % f = 0) is phase 0 (MoeSpec.firstLayerMoe); sources in docs/framework-facts.md#moe-layer-frequency.
 */
function moePhase(moe: NonNullable<ModelSpec['moe']>, f: number): number {
  return moe.firstLayerMoe ? 0 : f - 1;
}

/**
 * Whether layer i (zero-based) is an MoE layer: past the dense-first layers and on the layer frequency and phase.
 * Indices from `model.layers` on are the multi-token-prediction layers, of the last decoder layer's kind (shared/model/mtp.ts).
 */
export function isMoeLayer(model: ModelSpec, i: number): boolean {
  const moe = model.moe;
  if (!moe || moe.experts <= 0) return false;
  if (i >= model.layers && model.layers > 0) i = model.layers - 1;
  if (i < moe.denseFirstLayers) return false;
  const f = Math.max(1, moe.layerFrequency);
  return (((i - moePhase(moe, f)) % f) + f) % f === 0;
}

/** Number of MoE layers among layers [from, to); those from `model.layers` on are MTP layers of the last layer's kind. */
export function moeLayersIn(model: ModelSpec, from: number, to: number): number {
  const moe = model.moe;
  if (!moe || moe.experts <= 0 || to <= from) return 0;
  const L = model.layers;
  if (to > L && L > 0) return moeLayersIn(model, from, L) + (to - Math.max(from, L)) * (isMoeLayer(model, L - 1) ? 1 : 0);
  const f = Math.max(1, moe.layerFrequency);
  const start = Math.max(from, moe.denseFirstLayers);
  if (to <= start) return 0;
  // Count i in [start, to) with (i − phase) % f = 0: multiples of f in [start − phase, to − 1 − phase].
  const ph = moePhase(moe, f);
  return Math.floor((to - 1 - ph) / f) - Math.floor((start - 1 - ph) / f);
}

/**
 * Per-layer parameter groups: attention (q: h·H·d, k/v: h·KV·d each, o: H·d·h; MLA: its five projections and two
 * latent norms, shared/model/mla.ts), MLP, norms, MoE parts.
 */
export function layerParams(model: ModelSpec): LayerParams {
  const h = model.hiddenSize;
  const H = model.heads;
  const KV = model.kvHeads;
  const d = model.headDim;
  const mla = model.mla;
  const w = mla ? mlaWeights(mla, h, H) : undefined;
  // MLA has no per-head K/V weights to replicate: keys and values come from one latent (kvWeights 0).
  const kvFull = w ? 0 : 2 * h * KV * d;
  // An output gate makes the query projection 2·a·d wide (Qwen3-Next, Qwen3.5).
  const gate = model.attentionOutputGate ? h * H * d : 0;
  const attnFull = w ? w.split + w.replicated : 2 * h * H * d + kvFull + gate;
  let otherFull = 0;
  if (!mla && (model.attnBias === 'qkv' || model.attnBias === 'all')) otherFull += H * d + 2 * KV * d;
  if (model.attnBias === 'all') otherFull += h;
  // Per-head q/k norms hold d weights each; OLMo 2's span the projections, heads·d and kv-heads·d.
  if (model.qkNorm) otherFull += model.qkNormWidth === 'projection' ? (H + KV) * d : 2 * d;
  // A learned sink logit per head (gpt-oss: transformers GptOssAttention `sinks`, one per head and layer).
  if (model.attentionSinks === true) otherFull += H;
  const attnReplicated = mla && w ? w.replicated + mlaNormParams(mla) : 0;
  otherFull += mla ? mlaNormParams(mla) : 0;
  // Gated DeltaNet layers (Qwen3-Next, Qwen3.5) hold their own token mixer: the per-layer figures are the mean over the
  // layers, so L times them is the model's exact count (shared/model/linearAttention.ts).
  const la = model.linearAttention;
  const f = linearAttentionFraction(model);
  const kvWeights = (1 - f) * kvFull;
  const attnWeights = (1 - f) * attnFull + (la ? f * gatedDeltaNetWeights(la, h) : 0);
  const attnOther = (1 - f) * otherFull + (la ? f * gatedDeltaNetOther(la) : 0);
  const moe = model.moe;
  const expertOne = moe ? mlpParams(model, moe.expertFfnSize) : 0;
  return {
    attnWeights,
    kvWeights,
    attnOther,
    attnReplicated,
    denseMlp: mlpParams(model, model.ffnSize),
    norms: (model.sandwichNorms ? 4 : 2) * normParams(model),
    experts: moe ? moe.experts * expertOne : 0,
    // The router's weights; a model with MLP biases biases its router too (gpt-oss: GptOssTopKRouter `bias`).
    router: moe ? h * moe.experts + (model.mlpBias ? moe.experts : 0) : 0,
    sharedExperts: moe ? moe.sharedExperts * mlpParams(model, moe.sharedExpertFfnSize) + (moe.sharedExpertGate ? h : 0) : 0,
    inactiveExperts: moe ? Math.max(0, moe.experts - moe.topK) * expertOne : 0,
  };
}

/**
 * The [in, out] widths of the projections each LoRA target name adapts in one layer: q, k, v, o, gate, up, down of a
 * standard layer; under MLA, q_a/q_b (or q_proj), kv_a_proj_with_mqa, kv_b_proj and o_proj (shared/model/mla.ts
 * mlaLoraShapes). The adapter parameters and the adapter FLOPs both read it.
 */
export function loraShapes(model: ModelSpec): Readonly<Record<string, readonly (readonly [number, number])[]>> {
  const h = model.hiddenSize;
  const q = model.heads * model.headDim;
  const kv = model.kvHeads * model.headDim;
  const f = model.ffnSize;
  // An output gate makes q_proj 2·a·d wide (Qwen3-Next, Qwen3.5). Every layer is counted with attention's projections
  // (a Gated DeltaNet layer's in_proj_* and out_proj are about as many adapter parameters as q, k, v and o).
  const qOut = model.attentionOutputGate ? 2 * q : q;
  return {
    q: [[h, qOut]], k: [[h, kv]], v: [[h, kv]], o: [[q, h]], gate: [[h, f]], up: [[h, f]], down: [[f, h]],
    ...(model.mla ? mlaLoraShapes(model.mla, h, model.heads) : {}),
  };
}

/**
 * LoRA adapter parameters of one layer: r·(in + out) per adapted projection (under MLA, per MLA projection), and under
 * DoRA a magnitude per output of each (PEFT lora_magnitude_vector, one value per row of the weight).
 */
export function loraLayerParams(model: ModelSpec, lora: LoraSpec): number {
  const shapes = loraShapes(model);
  let sum = 0;
  for (const t of new Set(lora.targets)) {
    for (const [i, o] of shapes[t] ?? []) sum += lora.rank * (i + o) + (lora.dora ? o : 0);
  }
  return sum;
}

/** bitsandbytes' paged optimizers keep the states of tensors under this many elements in GPU memory (optim/optimizer.py). */
export const PAGED_MIN_ELEMENTS = 1e5;

/**
 * Adapter parameters of one layer in tensors under 10⁵ elements, whose states a paged optimizer keeps in ordinary GPU
 * memory (bitsandbytes optim/optimizer.py get_state_buffer, 0.42.0 to 0.50: `if not self.is_paged or p.numel() < 1e5:
 * return torch.zeros_like(p)`). Each adapter is A (r × in) and B (out × r), and under DoRA a magnitude of `out`;
 * LitGPT's fused q/k/v adapter (lora.fusedQkv, litgpt/lora.py LoRAQKVLinear) is one A of (r·n) × h for its n adapted
 * projections and one B of their summed outputs × r.
 */
export function loraUnpagedParams(model: ModelSpec, lora: LoraSpec): number {
  const shapes = loraShapes(model);
  const small = (n: number) => (n < PAGED_MIN_ELEMENTS ? n : 0);
  const targets = new Set(lora.targets);
  const fused = lora.fusedQkv === true && !model.mla ? (['q', 'k', 'v'] as const).filter((t) => targets.has(t)) : [];
  let sum = 0;
  if (fused.length) {
    const outs = fused.reduce((a, t) => a + (shapes[t]?.[0]?.[1] ?? 0), 0);
    sum += small(lora.rank * fused.length * model.hiddenSize) + small(outs * lora.rank);
  }
  for (const t of targets) {
    if (fused.includes(t as never)) continue;
    for (const [i, o] of shapes[t] ?? []) sum += small(lora.rank * i) + small(o * lora.rank) + (lora.dora ? small(o) : 0);
  }
  return sum;
}

/** Whether LoRA trains the input embedding in full beside its adapters (LoraSpec.fullModules; a tied head is the embedding). */
export function loraTrainsEmbedding(model: Pick<ModelSpec, 'tiedEmbeddings'>, lora: LoraSpec | undefined): boolean {
  const m = lora?.fullModules;
  return !!m && (m.includes('embed') || (model.tiedEmbeddings && m.includes('head')));
}

/** Whether LoRA trains an untied output head in full beside its adapters (LoraSpec.fullModules). */
export function loraTrainsHead(model: Pick<ModelSpec, 'tiedEmbeddings'>, lora: LoraSpec | undefined): boolean {
  return !!lora?.fullModules?.includes('head') && !model.tiedEmbeddings;
}

/** Whether the head's weight gets a gradient: always without LoRA; under LoRA only where it trains in full (tied: the embedding). */
export function headWeightTrains(model: Pick<ModelSpec, 'tiedEmbeddings'>, lora: LoraSpec | undefined): boolean {
  return !lora || loraTrainsHead(model, lora) || (model.tiedEmbeddings && loraTrainsEmbedding(model, lora));
}

/** Whether the embedding's weight gets a gradient: always without LoRA; under LoRA only where it trains in full. */
export function embeddingWeightTrains(model: Pick<ModelSpec, 'tiedEmbeddings'>, lora: LoraSpec | undefined): boolean {
  return !lora || loraTrainsEmbedding(model, lora);
}

/** Counts every component; total = L·layer + embedding + positions + final norm + LM head (§7.2). */
export function countParams(model: ModelSpec, lora?: LoraSpec, tp = 1): ParamBreakdown {
  const h = model.hiddenSize;
  const L = model.layers;
  const paddedVocab = paddedVocabSize(model.vocabSize, model.vocabPadMultiple, tp);
  const per = layerParams(model);
  const moeLayers = moeLayersIn(model, 0, L);
  const denseLayers = L - moeLayers;
  const attn = per.attnWeights + per.attnOther + per.norms;
  const embedding = paddedVocab * h;
  const positions = model.positions === 'learned' ? model.maxPositions * h : 0;
  const finalNorm = normParams(model);
  const lmHead = model.tiedEmbeddings ? 0 : paddedVocab * h;
  // Multi-token prediction: D transformer layers of the last layer's kind, their projections and norms (mtp.ts).
  const D = mtpModules(model);
  const lastMoe = D > 0 && isMoeLayer(model, L - 1);
  const mtp = D > 0 ? D * (attn + (lastMoe ? per.experts + per.router + per.sharedExperts : per.denseMlp)) + mtpOwnParams(model, finalNorm, 1) : 0;
  const parameters =
    L * attn + denseLayers * per.denseMlp + moeLayers * (per.experts + per.router + per.sharedExperts) +
    embedding + positions + finalNorm + lmHead + mtp;
  const loraParams = lora ? L * loraLayerParams(model, lora) : 0;
  // Modules LoRA trains in full (PEFT modules_to_save) count as trainable; the copy PEFT trains beside each frozen
  // original is memory (shared/memory/stage.ts), not a parameter of the model.
  const full = (loraTrainsEmbedding(model, lora) ? embedding : 0) + (loraTrainsHead(model, lora) ? lmHead : 0);
  return {
    parameters: parameters + loraParams,
    trainableParameters: lora ? loraParams + full : parameters,
    activeParameters: parameters + loraParams - (moeLayers + (lastMoe ? D : 0)) * per.inactiveExperts,
    paddedVocab,
    embedding,
    positions,
    perLayer: per,
    denseLayers,
    moeLayers,
    finalNorm,
    lmHead,
    mtp,
    lora: loraParams,
  };
}
