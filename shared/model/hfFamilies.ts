/**
 * What a config.json leaves to its model family's configuration class or modelling code (transformers), shared by the
 * two config.json readers (shared/model/hfConfig.ts, formats/hf-config/reader.ts): the class defaults of widths a
 * file may omit (google/gemma-3-4b-it's text_config names no heads, KV heads, head_dim or vocabulary), and where
 * attention slides over a window, which ShardLens does not model.
 */
import { own } from '../lookup';
import type { LinearAttentionSpec } from '../plan/types';

/** The widths a configuration class falls back to when config.json omits them. */
export interface FamilyDefaults {
  readonly vocab: number;
  readonly hidden: number;
  readonly ffn: number;
  readonly layers: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly maxPositions: number;
  readonly tied: boolean;
  /** The configuration class, as a source ("transformers Gemma2Config"). */
  readonly source: string;
}

/** transformers models/gemma3/configuration_gemma3.py Gemma3TextConfig (also the text_config of a multimodal Gemma3Config). */
const GEMMA3_TEXT: FamilyDefaults = {
  vocab: 262208, hidden: 2304, ffn: 9216, layers: 26, heads: 8, kvHeads: 4, headDim: 256, maxPositions: 131072, tied: true, source: 'transformers Gemma3TextConfig',
};

/**
 * Configuration-class defaults by model_type: transformers models/gemma/configuration_gemma.py GemmaConfig,
 * models/gemma2/configuration_gemma2.py Gemma2Config, Gemma3TextConfig, models/gpt_oss/configuration_gpt_oss.py
 * GptOssConfig. The Gemma classes tie the output layer to the embedding (tie_word_embeddings=True); gpt-oss does not.
 */
const FAMILIES: Readonly<Record<string, FamilyDefaults>> = {
  gemma: { vocab: 256000, hidden: 3072, ffn: 24576, layers: 28, heads: 16, kvHeads: 16, headDim: 256, maxPositions: 8192, tied: true, source: 'transformers GemmaConfig' },
  gemma2: { vocab: 256000, hidden: 2304, ffn: 9216, layers: 26, heads: 8, kvHeads: 4, headDim: 256, maxPositions: 8192, tied: true, source: 'transformers Gemma2Config' },
  gemma3: GEMMA3_TEXT,
  gemma3_text: GEMMA3_TEXT,
  gpt_oss: { vocab: 201088, hidden: 2880, ffn: 2880, layers: 36, heads: 64, kvHeads: 8, headDim: 64, maxPositions: 131072, tied: false, source: 'transformers GptOssConfig' },
};

/** The configuration-class defaults of a model_type, if ShardLens knows them. */
export function familyDefaults(modelType: string): FamilyDefaults | undefined {
  return own(FAMILIES, modelType);
}

/** Gemma 3 has per-head q/k RMSNorms (transformers modeling_gemma3.py Gemma3Attention q_norm, k_norm). */
export const isGemma3 = (modelType: string): boolean => modelType === 'gemma3' || modelType === 'gemma3_text';

/**
 * gpt-oss gives every expert biases on both projections and its attention projections biases (transformers
 * modeling_gpt_oss.py GptOssExperts gate_up_proj_bias, down_proj_bias; GptOssConfig attention_bias=True).
 */
export const isGptOss = (modelType: string): boolean => modelType === 'gpt_oss';

/**
 * Qwen (1), model_type "qwen", remote code modeling_qwen.py: QWenMLP's w1, w2 and c_proj are intermediate_size / 2
 * wide; c_attn (q, k, v) always has a bias, c_proj and the MLP only when no_bias is false (QWenConfig default true).
 */
export const isQwen1 = (modelType: string): boolean => modelType === 'qwen';

/** Gemma 2 and 3 norm each block four times (post_attention_layernorm and post_feedforward_layernorm too). */
export const gemmaSandwichNorms = (modelType: string): boolean => modelType === 'gemma2' || isGemma3(modelType);

/** Gemma 1–3's RMSNorm scales in fp32 and casts after (GemmaRMSNorm: `output * (1.0 + self.weight.float())`, then type_as). */
export const gemmaNorm = (modelType: string): boolean => modelType === 'gemma' || gemmaSandwichNorms(modelType);

/**
 * Whether a logit soft-cap is on: the key's number (> 0), none when it is null, else the family's default (Gemma2Config:
 * attn_logit_softcapping 50.0, final_logit_softcapping 30.0; Gemma 3 and others none).
 */
export function softcapOn(modelType: string, c: Record<string, unknown>, key: 'attn_logit_softcapping' | 'final_logit_softcapping'): boolean {
  const v = c[key];
  if (v === null) return false;
  if (typeof v === 'number') return v > 0;
  return modelType === 'gemma2';
}

/**
 * Families whose `attention_bias` puts a bias on q, k and v only: their o_proj is built with bias=False whatever the
 * config says (transformers 5.24 modeling_glm.py, modeling_glm4.py, modeling_glm4_moe.py GlmAttention/Glm4MoeAttention).
 */
export const qkvOnlyBias = (modelType: string): boolean => modelType === 'glm' || modelType === 'glm4' || modelType === 'glm4_moe';

/**
 * Families that normalise the whole query and key projections rather than each head: q_norm over heads·d and k_norm over
 * kv-heads·d (transformers 5.24 modeling_olmo2.py and modeling_olmo3.py Olmo2Attention, modeling_olmoe.py OlmoeAttention).
 */
export const projectionQkNorm = (modelType: string): boolean => modelType === 'olmo2' || modelType === 'olmo3' || modelType === 'olmoe';

/**
 * Whether a family's attention has q/k norms: always for Qwen3, Qwen3-Next, Qwen3.5, Gemma 3 (per head) and OLMo 2/3,
 * OLMoE (per projection); GLM-4.5 (glm4_moe) per head when `use_qk_norm` is true (Glm4MoeConfig default false). A
 * `use_qk_norm` written in the file decides.
 */
export function qkNormOf(modelType: string, c: Record<string, unknown>): boolean {
  if (typeof c.use_qk_norm === 'boolean') return c.use_qk_norm;
  return projectionQkNorm(modelType) || modelType.startsWith('qwen3') || isGemma3(modelType);
}

/**
 * A sliding-window attention found in a config: the key that says so, the window, which layers use it (in words) and
 * how many of the model's `layers` that is.
 */
export interface SlidingWindow {
  readonly key: string;
  readonly window?: number;
  readonly layers: string;
  readonly slidingLayers: number;
  /** Attention within chunks of `window` tokens (Llama 4) rather than over the last `window` keys. */
  readonly chunked?: boolean;
}

type Family = { layers: (c: Record<string, unknown>) => string; count: (c: Record<string, unknown>, L: number) => number; window: number };

/** Families whose classes slide in some layers by default: which layers, how many of L, and the class's default window. */
const SLIDING_FAMILIES: Readonly<Record<string, Family>> = {
  // Gemma2Config and GptOssConfig: layer_types alternate sliding_attention and full_attention, starting with sliding
  // (Gemma2 `is_sliding = not bool(layer_idx % 2)`; GptOssConfig layer_types), so ⌈L/2⌉ layers slide.
  gemma2: { layers: () => 'every other layer', count: (_c, L) => Math.ceil(L / 2), window: 4096 },
  gpt_oss: { layers: () => 'every other layer', count: (_c, L) => Math.ceil(L / 2), window: 128 },
  // Gemma3TextConfig sliding_window_pattern 6: five sliding layers, then one global (layer i global when (i+1) % 6 = 0).
  gemma3: { layers: gemma3Layers, count: gemma3Count, window: 4096 },
  gemma3_text: { layers: gemma3Layers, count: gemma3Count, window: 4096 },
};

function gemma3Period(c: Record<string, unknown>): number {
  return typeof c.sliding_window_pattern === 'number' && c.sliding_window_pattern > 1 ? Math.floor(c.sliding_window_pattern) : 6;
}

function gemma3Layers(c: Record<string, unknown>): string {
  const p = gemma3Period(c);
  return `${p - 1} of every ${p} layers`;
}

function gemma3Count(c: Record<string, unknown>, L: number): number {
  return L - Math.floor(L / gemma3Period(c));
}

/**
 * Where attention slides over a window: `layer_types` naming sliding_attention (what transformers writes for Gemma 2
 * and 3, gpt-oss, Qwen2/3), the Gemma 2/3 and gpt-oss classes' defaults unless sliding_window is null, or a
 * sliding_window shorter than the context that use_sliding_window does not switch off (Mistral v0.1, Phi-3; Qwen2 and
 * Qwen3 slide only with use_sliding_window true, Qwen2Config's default being false).
 */
export function slidingWindow(c: Record<string, unknown>, modelType: string, L = 0): SlidingWindow | undefined {
  // Llama 4 (Llama4TextConfig): the layers with rotary positions attend within chunks of attention_chunk_size; every
  // no_rope_layer_interval-th layer (default 4) is global (no_rope_layers, 1 = rotary and chunked, when given).
  // Llama4TextConfig's attention_chunk_size defaults to 8192 (null turns chunking off); layer_types, when written,
  // names the chunked layers.
  const chunk = c.attention_chunk_size === undefined ? 8192 : c.attention_chunk_size;
  const llama4 = modelType === 'llama4' || modelType === 'llama4_text';
  if (llama4 && typeof chunk === 'number' && chunk > 0 && Array.isArray(c.layer_types)) {
    const n = c.layer_types.filter((t) => t === 'chunked_attention').length;
    return n > 0 ? { key: 'layer_types', window: chunk, layers: `${n} of ${c.layer_types.length} layers`, slidingLayers: Math.min(n, L || n), chunked: true } : undefined;
  }
  if (llama4 && typeof chunk === 'number' && chunk > 0) {
    const list = Array.isArray(c.no_rope_layers) && c.no_rope_layers.length ? c.no_rope_layers : undefined;
    const every = typeof c.no_rope_layer_interval === 'number' && c.no_rope_layer_interval >= 1 ? Math.floor(c.no_rope_layer_interval) : 4;
    const n = list ? list.slice(0, L || list.length).filter((x) => x === 1 || x === true).length : L - Math.floor(L / every);
    return n > 0 ? { key: c.attention_chunk_size === undefined ? 'model_type' : 'attention_chunk_size', window: chunk, layers: `${n} of ${L} layers`, slidingLayers: n, chunked: true } : undefined;
  }
  const sw = c.sliding_window;
  const window = typeof sw === 'number' && sw > 0 ? sw : undefined;
  if (Array.isArray(c.layer_types)) {
    const n = c.layer_types.filter((t) => t === 'sliding_attention').length;
    return n > 0 ? { key: 'layer_types', window, layers: `${n} of ${c.layer_types.length} layers`, slidingLayers: Math.min(n, L || n) } : undefined;
  }
  if (sw === null) return undefined;
  const fam = own(SLIDING_FAMILIES, modelType);
  if (fam) return { key: window ? 'sliding_window' : 'model_type', window: window ?? fam.window, layers: fam.layers(c), slidingLayers: fam.count(c, L) };
  if (!window) return undefined;
  const qwen = modelType.startsWith('qwen');
  if (c.use_sliding_window === false || (qwen && c.use_sliding_window !== true)) return undefined;
  if (typeof c.max_position_embeddings === 'number' && window >= c.max_position_embeddings) return undefined;
  // Qwen2Config / Qwen3Config: layers from max_window_layers on slide (default 28).
  const from = typeof c.max_window_layers === 'number' && c.max_window_layers >= 0 ? Math.floor(c.max_window_layers) : 28;
  return { key: 'sliding_window', window, layers: qwen ? 'the layers from max_window_layers on' : 'every layer', slidingLayers: qwen ? Math.max(0, L - from) : L };
}

/**
 * The info that attention slides: timed with the window where the kernel skips the blocks outside it (docs/time-model.md
 * § Attention), as full causal attention where it computes them; memory is the same either way.
 */
export function slidingWindowMessage(w: SlidingWindow, prefix = ''): string {
  if (w.chunked) {
    return `config.json ${prefix}${w.key}: attention runs within chunks of ${w.window} tokens in ${w.layers}; the step time counts the chunks where the kernel skips the blocks outside them (FlexAttention under torchtitan, FlashAttention set in the config) and full causal attention under SDPA or eager attention.`;
  }
  const over = w.window ? `a window of ${w.window} tokens` : 'a window';
  const timed = w.window
    ? 'the step time counts the window where the kernel skips the blocks outside it (FlashAttention-2 set in the config, Transformer Engine under Megatron, FlexAttention under torchtitan) and full causal attention under SDPA or eager attention, which compute every block'
    : 'with no window size given, ShardLens times it as full causal attention, so sequences longer than the window are over-estimated';
  return `config.json ${prefix}${w.key}: attention slides over ${over} in ${w.layers}; ${timed}.`;
}

/** Model types whose non-full-attention layers are Gated DeltaNet (transformers qwen3_next, qwen3_5, qwen3_5_moe). */
export function isGatedDeltaNetFamily(modelType: string): boolean {
  return modelType === 'qwen3_next' || /^qwen3_5(_moe)?(_text)?$/.test(modelType);
}

/**
 * The Gated DeltaNet layers of a Qwen3-Next / Qwen3.5 config: `layer_types` naming linear_attention, else every layer
 * but each `full_attention_interval`-th (default 4, transformers configuration_qwen3_next.py and
 * configuration_qwen3_5.py), with the `linear_*` widths (transformers defaults: 16 key and 32 value heads of 128,
 * a 4-tap convolution). Undefined for other families or when no layer is linear.
 */
export function gatedDeltaNetLayers(c: Record<string, unknown>, modelType: string, L: number): LinearAttentionSpec | undefined {
  if (!isGatedDeltaNetFamily(modelType) || !(L > 0)) return undefined;
  const pos = (k: string, d: number) => (positiveWhole(c[k]) ? (c[k] as number) : d);
  let layers: number;
  if (Array.isArray(c.layer_types)) layers = c.layer_types.filter((t) => t === 'linear_attention').length;
  else {
    const every = pos('full_attention_interval', 4);
    layers = L - Math.floor(L / every);
  }
  if (!(layers > 0)) return undefined;
  return {
    layers: Math.min(L, layers), keyHeads: pos('linear_num_key_heads', 16), valueHeads: pos('linear_num_value_heads', 32),
    keyHeadDim: pos('linear_key_head_dim', 128), valueHeadDim: pos('linear_value_head_dim', 128), convKernel: pos('linear_conv_kernel_dim', 4),
    // transformers' Qwen3_5GatedDeltaNet splits the projections (modeling_qwen3_5.py in_proj_qkv, in_proj_z, in_proj_b, in_proj_a).
    ...(modelType.startsWith('qwen3_5') ? { splitProjections: true } : {}),
  };
}

/**
 * What the estimate says of a model's Gated DeltaNet layers, after the setting that makes them (`where`): their saved
 * activations and the code around the kernel are their own under transformers (config.json) and Megatron-LM
 * (shared/memory/gatedDeltaNetSaves.ts, shared/time/kernels/gatedDeltaNet.ts).
 */
export function gatedDeltaNetMessage(where: string, linear: number, L: number | undefined, engine: 'transformers' | 'megatron'): string {
  const layers = `${where}: the Gated DeltaNet linear-attention layers (${linear} of ${L}) have their own parameter count`;
  const kernel = 'the chunked kernel\'s time is FLA\'s published GB200 time carried to this GPU through FlashAttention-2\'s curve, an assumption';
  if (engine === 'megatron') return `${layers} and their own saved activations and step time (Megatron-LM with flash-linear-attention 0.5.1); ${kernel}, and the code Megatron runs around the kernel is counted from its kernels' inputs and outputs, not measured.`;
  return `${layers} and their own saved activations and step time under transformers (with flash-linear-attention and causal-conv1d) and Megatron-LM (its code around the kernel counted from its kernels' inputs and outputs, not measured); ${kernel}, and under torchtitan their activations and the code around the kernel are counted as attention's.`;
}

/** The Gated DeltaNet keys of a config and transformers' defaults (configuration_qwen3_next.py, configuration_qwen3_5.py). */
const GDN_KEYS: readonly (readonly [string, number])[] = [
  ['full_attention_interval', 4], ['linear_num_key_heads', 16], ['linear_num_value_heads', 32], ['linear_key_head_dim', 128],
  ['linear_value_head_dim', 128], ['linear_conv_kernel_dim', 4],
];

const positiveWhole = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v > 0;

/**
 * The Gated DeltaNet keys a Qwen3-Next / Qwen3.5 config writes with a value that is not a positive whole number, and
 * the default gatedDeltaNetLayers reads instead (the readers say so at the key). Empty for other families.
 */
export function badGatedDeltaNetKeys(c: Record<string, unknown>, modelType: string): { key: string; fallback: number }[] {
  if (!isGatedDeltaNetFamily(modelType)) return [];
  return GDN_KEYS.filter(([k]) => c[k] !== undefined && c[k] !== null && !positiveWhole(c[k])).map(([key, fallback]) => ({ key, fallback }));
}

/**
 * Layers the model has no full term for, found in a config: Qwen3-Next's and Qwen3.5's Gated DeltaNet linear attention
 * (gatedDeltaNetLayers: their parameters are counted, their activations and time are not), `layer_types` other than
 * full, sliding and chunked attention (linear_attention, mamba, …), and the state-space layers of Mamba
 * hybrids (`hybrid_override_pattern` of Nemotron-H, `layers_block_type`, Jamba's `attn_layer_period`). They are read
 * as standard attention layers; the message says how many and what that means. Undefined when there are none.
 */
export function unmodelledLayers(c: Record<string, unknown>, modelType: string, L: number): { key: string; message: string } | undefined {
  const say = (key: string, what: string) => ({
    key,
    message: `config.json ${key}: ${what} are read as standard attention layers, so their parameters, activations and step time are approximate (linear-time layers are over-estimated at long sequences).`,
  });
  // Gated DeltaNet layers have their own parameter count; what they save and how long they take is not modelled.
  const gdn = gatedDeltaNetLayers(c, modelType, L);
  if (gdn) {
    const key = Array.isArray(c.layer_types) ? 'layer_types' : c.full_attention_interval === undefined ? 'model_type' : 'full_attention_interval';
    return { key, message: gatedDeltaNetMessage(`config.json ${key}`, gdn.layers, L, 'transformers') };
  }
  if (Array.isArray(c.layer_types)) {
    const other = new Map<string, number>();
    for (const t of c.layer_types) if (typeof t === 'string' && t !== 'full_attention' && t !== 'sliding_attention' && t !== 'chunked_attention') other.set(t, (other.get(t) ?? 0) + 1);
    if (other.size) return say('layer_types', [...other].map(([t, n]) => `${n} ${t} layer${n === 1 ? '' : 's'}`).join(' and ') + ` of ${c.layer_types.length}`);
  }
  for (const key of ['hybrid_override_pattern', 'layers_block_type', 'attn_layer_period', 'mamba_d_state', 'ssm_state_size']) {
    if (c[key] !== undefined && c[key] !== null) return say(key, 'the state-space (Mamba) layers of this hybrid');
  }
  return undefined;
}
