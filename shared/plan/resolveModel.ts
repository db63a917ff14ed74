/**
 * Builds a ModelSpec from model.* facts (Megatron flags, nanotron model_config, an HF config.json), filling
 * the architecture defaults of the family the facts came from, each recorded as a source.
 */
import type { Fact } from './facts';
import type { AttnBias, InputSource, LinearAttentionSpec, MlaSpec, ModelSpec, MoeSpec, NormKind, PositionKind } from './types';
import { MLA_CONFIG_KEYS, validMla } from '../model/mla';
import { listPresets, type ModelPreset } from '../model/presets';
import type { PlanPath } from './paths';
import { routerGroups } from '../model/hfConfig';

type Facts = Readonly<Partial<Record<PlanPath, Fact>>>;

const num = (f: Facts, p: PlanPath): number | undefined => {
  const v = f[p]?.value;
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
};
const str = (f: Facts, p: PlanPath): string | undefined => {
  const v = f[p]?.value;
  return typeof v === 'string' ? v : undefined;
};
const bool = (f: Facts, p: PlanPath): boolean | undefined => {
  const v = f[p]?.value;
  return typeof v === 'boolean' ? v : undefined;
};

/** Why an inline model without a vocabulary size gets 32,000 (the assumption the verdict lists). */
export const ASSUMED_VOCAB_DETAIL = 'no vocabulary size in the files and no tokenizer whose size is known: assumed 32,000 tokens (Llama 2\'s); write --vocab-size (vocab_size, padded_vocab_size) or name the tokenizer';

/** True when the facts describe a model inline (layers, hidden size and heads all present). */
export function hasInlineModel(f: Facts): boolean {
  return (['model.layers', 'model.hiddenSize', 'model.heads'] as const).every((p) => (num(f, p) ?? 0) > 0);
}

/** ModelSpec from facts; `sources` receives "model.<field>" entries. Undefined when the core sizes are missing. */
export function modelFromFacts(f: Facts, sources: Partial<Record<PlanPath, InputSource>>, seqLen?: number): ModelSpec | undefined {
  if (!hasInlineModel(f)) return undefined;
  const take = <T>(path: PlanPath, v: T | undefined, fallback: T, why: string): T => {
    const fact = f[path];
    if (v !== undefined && fact) { sources[path] = fact.source; return v; }
    sources[path] = { kind: 'default', detail: why };
    return fallback;
  };
  const L = num(f, 'model.layers')!;
  const h = num(f, 'model.hiddenSize')!;
  const heads = num(f, 'model.heads')!;
  const gpt2 = str(f, 'model.type') === 'gpt2';
  const kv = take('model.kvHeads', num(f, 'model.kvHeads'), heads, 'KV heads = attention heads (MHA)');
  const headDim = take('model.headDim', num(f, 'model.headDim'), Math.max(1, Math.round(h / heads)), 'head_dim = hidden / heads');
  const gated = take('model.gatedMlp', bool(f, 'model.gatedMlp'), !gpt2, gpt2 ? 'GPT-2: plain MLP' : 'HF decoder (Llama-style): gated SwiGLU MLP');
  const ffn = take('model.ffnSize', num(f, 'model.ffnSize'), 4 * h, 'FFN = 4·hidden');
  const vocab = take('model.vocabSize', num(f, 'model.vocabSize'), 32000, 'vocabulary 32000 (LlamaConfig default); set --vocab-size or vocab_size');
  // Megatron, NeMo and GPT-NeoX size the embedding from their tokenizer, so a file that names none that ShardLens knows
  // (formats/common/tokenizerVocab.ts) leaves the vocabulary unknown: 32,000 is a guess, and the verdict says it rests on it.
  if (!f['model.vocabSize']) sources['model.vocabSize'] = { kind: 'assumed', detail: ASSUMED_VOCAB_DETAIL };
  const maxPos = take('model.maxPositions', num(f, 'model.maxPositions'), seqLen ?? 2048, 'max positions = sequence length');
  const model: ModelSpec = {
    name: str(f, 'model.name') ?? str(f, 'model.preset') ?? inlineName(L, h, heads, kv > 0 ? kv : heads, ffn, vocab),
    layers: L,
    hiddenSize: h,
    heads,
    kvHeads: kv > 0 ? kv : heads,
    headDim,
    ffnSize: ffn,
    gatedMlp: gated,
    attnBias: take('model.attnBias', str(f, 'model.attnBias') as AttnBias | undefined, gpt2 ? 'all' : 'none', 'no attention bias'),
    mlpBias: take('model.mlpBias', bool(f, 'model.mlpBias'), gpt2, 'no MLP bias'),
    tiedEmbeddings: take('model.tiedEmbeddings', bool(f, 'model.tiedEmbeddings'), gpt2, 'untied output layer'),
    positions: take('model.positions', str(f, 'model.positions') as PositionKind | undefined, gpt2 ? 'learned' : 'rotary', 'rotary positions'),
    maxPositions: maxPos,
    norm: take('model.norm', str(f, 'model.norm') as NormKind | undefined, gpt2 ? 'layernorm' : 'rmsnorm', 'RMSNorm'),
    qkNorm: take('model.qkNorm', bool(f, 'model.qkNorm'), false, 'no q/k norm'),
    ...(bool(f, 'model.normBias') === false ? { normBias: take('model.normBias', false as const, false as const, '') } : {}),
    ...(bool(f, 'model.sandwichNorms') ? { sandwichNorms: take('model.sandwichNorms', true, true, '') } : {}),
    ...(bool(f, 'model.normFp32') ? { normFp32: take('model.normFp32', true, true, '') } : {}),
    ...(bool(f, 'model.attnLogitSoftcap') ? { attnLogitSoftcap: take('model.attnLogitSoftcap', true, true, '') } : {}),
    ...(bool(f, 'model.finalLogitSoftcap') ? { finalLogitSoftcap: take('model.finalLogitSoftcap', true, true, '') } : {}),
    ...(bool(f, 'model.noSdpa') ? { noSdpa: take('model.noSdpa', true, true, '') } : {}),
    ...(str(f, 'model.qkNormWidth') === 'projection' ? { qkNormWidth: take('model.qkNormWidth', 'projection' as const, 'projection' as const, '') } : {}),
    ...(bool(f, 'model.lowPrecisionNorm') ? { lowPrecisionNorm: true } : {}),
    ...(bool(f, 'model.attentionSinks') ? { attentionSinks: true } : {}),
    ...(bool(f, 'model.attentionOutputGate') ? { attentionOutputGate: take('model.attentionOutputGate', true, false, '') } : {}),
    ...((num(f, 'model.mtpLayers') ?? 0) > 0 ? { mtpLayers: take('model.mtpLayers', Math.floor(num(f, 'model.mtpLayers')!), 0, '') } : {}),
    vocabSize: vocab,
    ...(num(f, 'model.vocabPadMultiple') !== undefined ? { vocabPadMultiple: take('model.vocabPadMultiple', num(f, 'model.vocabPadMultiple'), 0, '') } : {}),
  };
  const window = num(f, 'model.slidingWindow.window'), sliding = num(f, 'model.slidingWindow.slidingLayers');
  if (window && sliding) {
    for (const p of ['model.slidingWindow.window', 'model.slidingWindow.slidingLayers'] as const) sources[p] = f[p]!.source;
  }
  const chunked = bool(f, 'model.slidingWindow.chunked') === true;
  const windowed: ModelSpec = window && sliding ? { ...model, slidingWindow: { window, slidingLayers: Math.min(L, sliding), ...(chunked ? { chunked } : {}) } } : model;
  const withMla = linearAttentionFromFacts(f, sources, mlaFromFacts(f, sources, windowed));
  const experts = num(f, 'model.moe.experts') ?? 0;
  if (experts > 1) {
    const expertFfnSize = take('model.moe.expertFfnSize', num(f, 'model.moe.expertFfnSize'), ffn, 'expert FFN = FFN size');
    const sharedExperts = take('model.moe.sharedExperts', num(f, 'model.moe.sharedExperts'), num(f, 'model.moe.sharedExpertFfnSize') ? 1 : 0, 'shared experts from the shared FFN size');
    const moe: MoeSpec = {
      experts,
      topK: take('model.moe.topK', num(f, 'model.moe.topK'), 2, 'top-2 routing'),
      expertFfnSize,
      sharedExperts,
      // DeepSeek gives only n_shared_experts: each shared expert is as wide as a routed one (moe_intermediate_size;
      // transformers modeling_deepseek_v3.py DeepseekV3MoE builds them as one MLP of moe_intermediate_size × n_shared).
      sharedExpertFfnSize: take('model.moe.sharedExpertFfnSize', num(f, 'model.moe.sharedExpertFfnSize'), sharedExperts > 0 ? expertFfnSize : 0,
        sharedExperts > 0 ? 'each shared expert as wide as a routed one' : 'no shared expert'),
      denseFirstLayers: take('model.moe.denseFirstLayers', num(f, 'model.moe.denseFirstLayers'), 0, 'every layer is MoE'),
      layerFrequency: take('model.moe.layerFrequency', num(f, 'model.moe.layerFrequency'), 1, 'every layer is MoE'),
      sharedExpertGate: take('model.moe.sharedExpertGate', bool(f, 'model.moe.sharedExpertGate'), false, 'no shared-expert gate'),
      ...(bool(f, 'model.moe.firstLayerMoe') && (num(f, 'model.moe.layerFrequency') ?? 1) > 1 ? { firstLayerMoe: take('model.moe.firstLayerMoe', true, false, '') } : {}),
      ...routerGroups(num(f, 'model.moe.routerGroups'), num(f, 'model.moe.routerGroupTopK')),
      ...paddedCapacity(num(f, 'model.moe.capacityFactor')),
    };
    for (const p of ['model.moe.routerGroups', 'model.moe.routerGroupTopK'] as const) if (moe.routerGroups && f[p]) sources[p] = f[p]!.source;
    if (moe.capacityFactor && f['model.moe.capacityFactor']) sources['model.moe.capacityFactor'] = f['model.moe.capacityFactor'].source;
    return { ...withMla, moe };
  }
  return withMla;
}

/** A drop-and-pad capacity factor as the MoE spec holds it: a positive finite factor, else dropless (absent). */
function paddedCapacity(c: number | undefined): { capacityFactor?: number } {
  return c !== undefined && Number.isFinite(c) && c > 0 && c <= 1000 ? { capacityFactor: c } : {};
}

/**
 * Multi-head latent attention from model.mla.* facts (Megatron's --multi-latent-attention widths; the reader fills
 * its defaults): the model with `mla` when the widths make one (shared/model/mla.ts validMla), else unchanged.
 */
function mlaFromFacts(f: Facts, sources: Partial<Record<PlanPath, InputSource>>, model: ModelSpec): ModelSpec {
  if (f['model.mla.kvLoraRank'] === undefined) return model;
  const widths: Partial<Record<keyof MlaSpec, number>> = {};
  for (const [field] of MLA_CONFIG_KEYS) widths[field] = num(f, `model.mla.${field}`);
  const mla = validMla({ ...widths, qLoraRank: widths.qLoraRank ?? 0 });
  if (!mla) return model;
  for (const [field] of MLA_CONFIG_KEYS) if (f[`model.mla.${field}`]) sources[`model.mla.${field}`] = f[`model.mla.${field}`]!.source;
  return { ...model, mla };
}

/**
 * The bundled dense preset with an inline architecture's layers, widths, heads and vocabulary, if any. A base model names
 * the shape before a distilled copy of it (DeepSeek-R1-Distill-Llama-8B has Llama 3.1 8B's widths).
 */
export function sameShapePreset(layers: number, hidden: number, heads: number, kvHeads: number, ffn: number, vocab: number): ModelPreset | undefined {
  const matches = listPresets().filter((p) => {
    const m = p.model;
    return m.layers === layers && m.hiddenSize === hidden && m.heads === heads && m.kvHeads === kvHeads && m.ffnSize === ffn && m.vocabSize === vocab && !m.moe;
  });
  return matches.find((p) => !/distill/i.test(p.name)) ?? matches[0];
}

/** A readable name for an inline architecture, naming the bundled preset with the same shape when there is one. */
function inlineName(layers: number, hidden: number, heads: number, kvHeads: number, ffn: number, vocab: number): string {
  const same = sameShapePreset(layers, hidden, heads, kvHeads, ffn, vocab);
  const shape = `${layers} layers × ${hidden} hidden`;
  return same ? `${shape} (${same.name} shape)` : shape;
}

/**
 * Gated DeltaNet layers from model.linearAttention.* facts (the config.json reader's Qwen3-Next / Qwen3.5 layers): the
 * model with `linearAttention` when every width is a positive whole number and some layer is linear, else unchanged.
 */
function linearAttentionFromFacts(f: Facts, sources: Partial<Record<PlanPath, InputSource>>, model: ModelSpec): ModelSpec {
  const fields = ['layers', 'keyHeads', 'valueHeads', 'keyHeadDim', 'valueHeadDim', 'convKernel'] as const;
  const v: Partial<Record<(typeof fields)[number], number>> = {};
  for (const k of fields) {
    const n = num(f, `model.linearAttention.${k}`);
    if (n === undefined || !Number.isInteger(n) || n <= 0) return model;
    v[k] = n;
  }
  for (const k of fields) sources[`model.linearAttention.${k}`] = f[`model.linearAttention.${k}`]!.source;
  const la: LinearAttentionSpec = {
    layers: Math.min(model.layers, v.layers!), keyHeads: v.keyHeads!, valueHeads: v.valueHeads!, keyHeadDim: v.keyHeadDim!,
    valueHeadDim: v.valueHeadDim!, convKernel: v.convKernel!,
  };
  return { ...model, linearAttention: la };
}
