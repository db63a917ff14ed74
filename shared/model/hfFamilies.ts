/**
 * What a config.json leaves to its model family's configuration class or modelling code (transformers), shared by the
 * two config.json readers (shared/model/hfConfig.ts, formats/hf-config/reader.ts): the class defaults of widths a
 * file may omit (google/gemma-3-4b-it's text_config names no heads, KV heads, head_dim or vocabulary), and where
 * attention slides over a window, which ShardLens does not model.
 */
import { own } from '../lookup';

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

/** A sliding-window attention found in a config: the key that says so, the window and which layers use it. */
export interface SlidingWindow {
  readonly key: string;
  readonly window?: number;
  readonly layers: string;
}

/** Families whose classes slide in some layers by default: which layers, and the class's default window. */
const SLIDING_FAMILIES: Readonly<Record<string, { layers: (c: Record<string, unknown>) => string; window: number }>> = {
  // Gemma2Config and GptOssConfig: layer_types alternate sliding_attention and full_attention.
  gemma2: { layers: () => 'every other layer', window: 4096 },
  gpt_oss: { layers: () => 'every other layer', window: 128 },
  // Gemma3TextConfig sliding_window_pattern 6: five sliding layers, then one global.
  gemma3: { layers: gemma3Layers, window: 4096 },
  gemma3_text: { layers: gemma3Layers, window: 4096 },
};

function gemma3Layers(c: Record<string, unknown>): string {
  const p = typeof c.sliding_window_pattern === 'number' && c.sliding_window_pattern > 1 ? c.sliding_window_pattern : 6;
  return `${p - 1} of every ${p} layers`;
}

/**
 * Where attention slides over a window: `layer_types` naming sliding_attention (what transformers writes for Gemma 2
 * and 3, gpt-oss, Qwen2/3), the Gemma 2/3 and gpt-oss classes' defaults unless sliding_window is null, or a
 * sliding_window shorter than the context that use_sliding_window does not switch off (Mistral v0.1, Phi-3; Qwen2 and
 * Qwen3 slide only with use_sliding_window true, Qwen2Config's default being false).
 */
export function slidingWindow(c: Record<string, unknown>, modelType: string): SlidingWindow | undefined {
  const sw = c.sliding_window;
  const window = typeof sw === 'number' && sw > 0 ? sw : undefined;
  if (Array.isArray(c.layer_types)) {
    const n = c.layer_types.filter((t) => t === 'sliding_attention').length;
    return n > 0 ? { key: 'layer_types', window, layers: `${n} of ${c.layer_types.length} layers` } : undefined;
  }
  if (sw === null) return undefined;
  const fam = own(SLIDING_FAMILIES, modelType);
  if (fam) return { key: window ? 'sliding_window' : 'model_type', window: window ?? fam.window, layers: fam.layers(c) };
  if (!window) return undefined;
  const qwen = modelType.startsWith('qwen');
  if (c.use_sliding_window === false || (qwen && c.use_sliding_window !== true)) return undefined;
  if (typeof c.max_position_embeddings === 'number' && window >= c.max_position_embeddings) return undefined;
  return { key: 'sliding_window', window, layers: qwen ? 'the layers from max_window_layers on' : 'every layer' };
}

/** The info that sliding-window attention is costed as full causal attention. */
export function slidingWindowMessage(w: SlidingWindow, prefix = ''): string {
  const over = w.window ? `a window of ${w.window} tokens` : 'a window';
  return `config.json ${prefix}${w.key}: attention slides over ${over} in ${w.layers}; ShardLens times and sizes it as full causal attention, so sequences longer than the window are over-estimated.`;
}
