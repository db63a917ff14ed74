/**
 * Reads a Hugging Face `config.json` object into a ModelSpec (docs/formats/hf-config.md). Handles Llama, Mistral,
 * Qwen2 (q/k/v bias hard-coded in the modeling code), Qwen3 (explicit head_dim, q/k norm), Qwen (1) (halved
 * intermediate_size), GPT-2 (n_embd …), MPT, Gemma 1–3 and gpt-oss (their class defaults, hfFamilies.ts), Mixtral,
 * Qwen-MoE, DeepSeek-style and gpt-oss MoE keys, Llama 4 (`intermediate_size_mlp` for dense layers, `intermediate_size`
 * for the experts and the shared expert, `interleave_moe_layer_step`), and nested `text_config`. Sliding-window
 * attention is read as its window and sliding layers, with an info; DeepSeek-V2/V3 multi-head latent attention by its
 * latent and head widths; layers with no term of their own (linear attention, Mamba) with a warning. Never throws:
 * garbage becomes problems.
 */
import type { PlanPath } from '../plan/paths';
import type { AttnBias, InputSource, MlaSpec, ModelSpec, MoeSpec, Problem } from '../plan/types';
import { badGatedDeltaNetKeys, familyDefaults, gatedDeltaNetLayers, isGatedDeltaNetFamily, isGptOss, isQwen1, gemmaNorm, gemmaSandwichNorms, softcapOn, projectionQkNorm, qkNormOf, qkvOnlyBias, slidingWindow, slidingWindowMessage, unmodelledLayers } from './hfFamilies';
import { readMlaWidths, validMla } from './mla';
import { FALCON_DEFAULTS, FALCON_KV_KEYS, falconParallelKey, falconSharesOneKv, isFalcon, PARALLEL_BLOCK_CODE, parallelBlockMessage } from './falcon';

type FieldOf<P> = P extends `model.${infer F}` ? F : never;
/** A ModelSpec field as it follows "model." in a PlanPath (e.g. "layers", "moe.experts"). */
type ModelField = FieldOf<PlanPath>;

export interface HfConfigResult {
  readonly model?: ModelSpec;
  readonly problems: Problem[];
  /** Source of every ModelSpec field, keyed "model.<field>". */
  readonly sources: Partial<Record<PlanPath, InputSource>>;
  /**
   * Multi-token-prediction layers the config declares (`num_nextn_predict_layers`: DeepSeek-V3, GLM-4.5;
   * `mtp_num_hidden_layers`: Qwen3-Next, Qwen3.5). transformers builds none, so they are not in `model`; engines that
   * build the model from the config through Megatron-Bridge's AutoBridge train them (shared/model/mtp.ts).
   */
  readonly mtpLayersInConfig?: number;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Model types written in GPT-2 style (learned positions, LayerNorm, biases, tied head, plain GELU MLP). */
const GPT2_TYPES = new Set(['gpt2', 'gpt_bigcode', 'gpt-2', 'megatron-gpt', 'gpt3']);

/** Model types whose modeling code adds q/k/v biases regardless of config (Qwen2 family). */
const QKV_BIAS_TYPES = new Set(['qwen2', 'qwen2_moe', 'qwen2_vl', 'qwen2_5_vl']);

/** GPT-NeoX / Pythia: LayerNorm with biases, biases everywhere, plain 4h GELU MLP, untied head, rotary positions. */
const NEOX_TYPES = new Set(['gpt_neox']);

/** Model types read exactly; anything else is read as a Llama-style model with an info problem. */
const KNOWN_TYPES = new Set([
  'llama', 'mistral', 'mixtral', 'qwen2', 'qwen2_moe', 'qwen3', 'qwen3_moe', 'deepseek_v2', 'deepseek_v3', 'gemma', 'gemma2',
  'phi3', 'olmo', 'olmo2', 'granite', 'internlm2', 'yi', 'llava', 'mllama', 'llama4', 'llama4_text', 'gemma3', 'gemma3_text',
  'gpt_oss', 'qwen', 'kimi_k2', 'glm', 'glm4_moe', 'olmoe',
]);

/**
 * Llama 4 (transformers models/llama4/configuration_llama4.py, modeling_llama4.py): dense layers use
 * `intermediate_size_mlp`; each MoE layer has `num_local_experts` routed experts and one shared expert, all of
 * `intermediate_size`; every `interleave_moe_layer_step`-th layer is MoE.
 */
export const isLlama4 = (modelType: string): boolean => modelType === 'llama4' || modelType === 'llama4_text';

/** Model types read exactly that also have q/k norms (hfFamilies.ts qkNormOf). */
const QK_NORM_TYPES = new Set(['qwen3', 'qwen3_moe', 'qwen3_next', 'qwen3_5', 'qwen3_5_text', 'qwen3_5_moe', 'qwen3_5_moe_text', 'gemma3', 'gemma3_text']);

/** The code of the info that a config's attention slides over a window (kept with presets and referenced configs). */
export const SLIDING_WINDOW_CODE = 'hf-config-sliding-window';

/** The code of the warning that a config has layers ShardLens reads as attention (linear attention, Mamba). */
export const UNMODELLED_LAYERS_CODE = 'hf-config-unmodelled-layers';

/** What reading a model's config says to every plan that uses it: kept with presets and referenced configs. */
export const MODEL_NOTE_CODES: ReadonlySet<string> = new Set([SLIDING_WINDOW_CODE, UNMODELLED_LAYERS_CODE, PARALLEL_BLOCK_CODE]);

/** Reads a config.json-like object. `name` overrides `_name_or_path` for the display name. */
export function modelFromHfConfig(obj: unknown, name?: string): HfConfigResult {
  const problems: Problem[] = [];
  const sources: Partial<Record<PlanPath, InputSource>> = {};
  if (!isObj(obj)) {
    problems.push({ code: 'hf-config-not-object', severity: 'error', message: 'The model config is not a JSON object.', paths: ['model'] });
    return { problems, sources };
  }
  const base: Obj = isObj(obj.text_config) ? { ...obj, ...obj.text_config } : obj;
  const modelType = typeof base.model_type === 'string' ? base.model_type.toLowerCase() : '';
  const mpt = modelType === 'mpt' || (modelType === '' && base.d_model !== undefined && base.expansion_ratio !== undefined);
  const cfg: Obj = mpt ? mptKeys(base, sources) : base;
  const gpt2 = GPT2_TYPES.has(modelType) || mpt || (modelType === '' && cfg.n_embd !== undefined);
  const neox = NEOX_TYPES.has(modelType);
  const falcon = isFalcon(modelType);
  if (modelType && !gpt2 && !neox && !falcon && !KNOWN_TYPES.has(modelType) && !QKV_BIAS_TYPES.has(modelType) && !QK_NORM_TYPES.has(modelType)) {
    problems.push({ code: 'hf-config-unknown-type', severity: 'info', message: `model_type "${modelType}" is read as a Llama-style decoder (gated MLP, RMSNorm, rotary).`, paths: ['model'] });
  }

  /** Reads the first present key as a number; records its source or the default. */
  const num = (field: ModelField, keys: string[], fallback: number | undefined, why = 'Hugging Face default'): number => {
    for (const k of keys) {
      const v = cfg[k];
      if (v === undefined || v === null) continue;
      if (typeof v === 'number' && Number.isFinite(v) && v > 0 && Number.isInteger(v)) {
        sources[`model.${field}`] = { kind: 'explicit', detail: `config.json: ${k}` };
        return v;
      }
      problems.push({ code: 'hf-config-bad-value', severity: 'error', message: `config.json: ${k} must be a positive integer, got ${JSON.stringify(v)}.`, paths: [`model.${field}`] });
      return NaN;
    }
    if (fallback === undefined) {
      problems.push({ code: 'hf-config-missing-key', severity: 'error', message: `config.json has none of ${keys.join(', ')}.`, paths: [`model.${field}`] });
      return NaN;
    }
    sources[`model.${field}`] = { kind: 'default', detail: why };
    return fallback;
  };
  const bool = (field: ModelField, key: string, fallback: boolean, why: string): boolean => {
    const v = cfg[key];
    if (typeof v === 'boolean') {
      sources[`model.${field}`] = { kind: 'explicit', detail: `config.json: ${key}` };
      return v;
    }
    sources[`model.${field}`] = { kind: 'default', detail: why };
    return fallback;
  };
  // A family's class defaults (Gemma, gpt-oss: hfFamilies.ts), else LlamaConfig's (transformers): vocab 32000, hidden
  // 4096, intermediate 11008, layers 32, heads 32.
  const fam = familyDefaults(modelType);
  const famWhy = fam ? `${fam.source} default` : falcon ? `${FALCON_DEFAULTS.source} default` : undefined;
  const d = falcon ? { h: FALCON_DEFAULTS.hidden, L: FALCON_DEFAULTS.layers, H: FALCON_DEFAULTS.heads, V: FALCON_DEFAULTS.vocab, pos: FALCON_DEFAULTS.maxPositions } : gpt2 ? { h: 768, L: 12, H: 12, V: 50257, pos: 1024 } : fam ? { h: fam.hidden, L: fam.layers, H: fam.heads, V: fam.vocab, pos: fam.maxPositions } : { h: 4096, L: 32, H: 32, V: 32000, pos: 2048 };
  const h = num('hiddenSize', ['hidden_size', 'n_embd', 'n_embed', 'd_model', 'dim'], d.h, famWhy);
  const layers = num('layers', ['num_hidden_layers', 'n_layer', 'num_layers', 'n_layers'], d.L, famWhy);
  const heads = num('heads', ['num_attention_heads', 'n_head', 'n_heads'], d.H, famWhy);
  const kvHeads = falcon ? falconKvHeads(cfg, modelType, heads, num, sources) : gpt2 && !mpt ? heads : num('kvHeads', ['num_key_value_heads', 'num_query_groups', 'n_kv_heads'], fam?.kvHeads ?? heads, famWhy ?? 'num_key_value_heads = None → heads (MHA)');
  const headDimRead = num('headDim', ['head_dim', 'kv_channels'], fam?.headDim ?? (Math.floor(h / heads) || 1), famWhy ?? 'hidden_size / num_attention_heads');
  const ffnRead = falcon
    ? num('ffnSize', ['ffn_hidden_size'], 4 * h, 'FalconConfig ffn_hidden_size = None → 4·hidden_size')
    : gpt2 || neox
    ? num('ffnSize', ['n_inner', 'intermediate_size'], 4 * h, 'GPT-2 n_inner = None → 4·n_embd')
    : num('ffnSize', isLlama4(modelType) ? ['intermediate_size_mlp', 'intermediate_size'] : ['intermediate_size', 'ffn_hidden_size'], fam?.ffn ?? 11008, famWhy ?? 'LlamaConfig default intermediate_size');
  const ffnSize = isQwen1(modelType) ? Math.floor(ffnRead / 2) : ffnRead;
  if (mpt) sources['model.ffnSize'] = { kind: base.expansion_ratio === undefined ? 'default' : 'explicit', detail: 'config.json: expansion_ratio × d_model (MPTConfig default 4)' };
  if (isQwen1(modelType)) sources['model.ffnSize'] = { kind: 'derived', detail: 'config.json: intermediate_size / 2 (Qwen modeling_qwen.py QWenMLP)' };
  const vocabSize = num('vocabSize', ['vocab_size', 'padded_vocab_size'], d.V, famWhy);
  const maxPositions = num('maxPositions', ['max_position_embeddings', 'n_positions', 'n_ctx', 'seq_length'], d.pos, famWhy);
  if (gpt2 && h % heads !== 0) {
    problems.push({ code: 'hf-config-head-dim', severity: 'error', message: `n_embd ${h} is not divisible by n_head ${heads}.`, paths: ['model.hiddenSize', 'model.heads'] });
  }

  let attnBias: AttnBias = 'none';
  // Qwen (1): c_attn always has a bias, c_proj only when no_bias is false.
  const qwen1Bias = isQwen1(modelType) && cfg.no_bias === false;
  if (gpt2 || neox) attnBias = (neox || mpt) && cfg.attention_bias === false ? 'none' : 'all';
  else if (falcon) attnBias = cfg.bias === true ? 'all' : 'none';
  else if (QKV_BIAS_TYPES.has(modelType) || isQwen1(modelType)) attnBias = qwen1Bias ? 'all' : 'qkv';
  else if (cfg.attention_bias === true && qkvOnlyBias(modelType)) attnBias = 'qkv';
  else if (cfg.attention_bias === true || cfg.bias === true || (isGptOss(modelType) && cfg.attention_bias !== false)) attnBias = 'all';
  sources['model.attnBias'] = QKV_BIAS_TYPES.has(modelType) || isQwen1(modelType)
    ? { kind: 'derived', detail: `${modelType} modeling code always adds q/k/v biases` }
    : falcon ? { kind: cfg.bias === undefined ? 'default' : 'explicit', detail: 'config.json: bias (FalconConfig default false), on every linear layer' }
    : { kind: cfg.attention_bias === undefined ? 'default' : 'explicit', detail: `config.json: attention_bias (default ${isGptOss(modelType)})${qkvOnlyBias(modelType) ? ', on q, k and v only (o_proj has none)' : ''}` };
  const tied = gpt2 && !mpt ? true : mpt ? bool('tiedEmbeddings', 'tie_word_embeddings', true, 'llm-foundry MPTConfig: tie_word_embeddings true')
    : falcon ? bool('tiedEmbeddings', 'tie_word_embeddings', true, 'FalconConfig (PretrainedConfig) default tie_word_embeddings = true')
    : bool('tiedEmbeddings', 'tie_word_embeddings', fam?.tied ?? false, fam ? `${fam.source} default tie_word_embeddings = ${fam.tied}` : 'LlamaConfig default tie_word_embeddings = false');
  if (gpt2 && !mpt) sources['model.tiedEmbeddings'] = { kind: 'derived', detail: 'GPT-2 always ties lm_head to wte' };
  const dropKeys = mpt ? ['resid_pdrop', 'attn_pdrop', 'emb_pdrop'] : gpt2 ? ['resid_pdrop', 'attn_pdrop', 'embd_pdrop'] : ['attention_dropout', 'hidden_dropout', 'dropout'];
  const dropVals = dropKeys.map((k) => cfg[k]).filter((v): v is number => typeof v === 'number');
  const dropout = dropVals.length ? dropVals.some((v) => v > 0) : gpt2;
  sources['model.dropout'] = dropVals.length
    ? { kind: 'explicit', detail: `config.json: ${dropKeys.join(' / ')}` }
    : { kind: 'default', detail: gpt2 ? 'GPT-2 default dropout 0.1' : 'LlamaConfig default attention_dropout 0.0' };
  const moe = readMoe(cfg, modelType, ffnSize, problems, sources);
  const sliding = slidingWindow(cfg, modelType, layers);
  if (sliding) problems.push({ code: SLIDING_WINDOW_CODE, severity: 'info', message: slidingWindowMessage(sliding, isObj(obj.text_config) ? 'text_config.' : ''), paths: ['model'] });
  const mla = readMla(cfg, modelType, problems, sources);
  const unmodelled = unmodelledLayers(cfg, modelType, layers);
  for (const { key, fallback } of badGatedDeltaNetKeys(cfg, modelType)) {
    problems.push({ code: 'hf-config-bad-value', severity: 'error', message: `config.json: ${key} must be a positive integer (transformers' default is ${fallback}), got ${JSON.stringify(cfg[key])}.`, paths: ['model.linearAttention'] });
  }
  const linearAttention = gatedDeltaNetLayers(cfg, modelType, layers);
  if (linearAttention) sources['model.linearAttention'] = { kind: 'explicit', detail: 'config.json: layer_types / full_attention_interval and linear_* keys (Gated DeltaNet layers)' };
  const parallelKey = falcon ? falconParallelKey(cfg, modelType) : undefined;
  if (parallelKey) problems.push({ code: PARALLEL_BLOCK_CODE, severity: 'info', message: parallelBlockMessage(parallelKey, isObj(obj.text_config) ? 'text_config.' : ''), paths: ['model'] });
  if (unmodelled) problems.push({ code: UNMODELLED_LAYERS_CODE, severity: 'warning', message: unmodelled.message, paths: ['model'] });
  if (problems.some((p) => p.severity === 'error')) return { problems, sources };

  const display = name ?? (typeof cfg._name_or_path === 'string' && cfg._name_or_path ? cfg._name_or_path : modelType || 'model');
  // Under MLA every head has its own keys and values (from the shared latent) and headDim is the query/key width.
  const headDim = mla ? mla.qkNopeHeadDim + mla.qkRopeHeadDim : headDimRead;
  if (mla) {
    sources['model.headDim'] = { kind: 'derived', detail: 'config.json: qk_nope_head_dim + qk_rope_head_dim (multi-head latent attention)' };
    sources['model.kvHeads'] = { kind: 'derived', detail: 'multi-head latent attention: one key and value per query head' };
  }
  const model: ModelSpec = {
    name: display,
    layers,
    hiddenSize: h,
    heads,
    kvHeads: mla ? heads : kvHeads,
    headDim,
    ffnSize,
    gatedMlp: mpt ? cfg.mlp_gated === true : !gpt2 && !neox && !falcon,
    attnBias,
    // gpt-oss experts have biases on both projections (transformers modeling_gpt_oss.py GptOssExperts).
    mlpBias: mpt ? cfg.attention_bias !== false : falcon ? cfg.bias === true : gpt2 || neox || isGptOss(modelType) || qwen1Bias ? true : cfg.mlp_bias === true,
    tiedEmbeddings: tied,
    positions: mpt ? (cfg.positions as ModelSpec['positions']) : gpt2 ? 'learned' : falcon && cfg.alibi === true ? 'alibi' : 'rotary',
    maxPositions,
    norm: mpt && cfg.rms_norm === true ? 'rmsnorm' : gpt2 || neox || falcon ? 'layernorm' : 'rmsnorm',
    qkNorm: qkNormOf(modelType, cfg),
    ...(projectionQkNorm(modelType) ? { qkNormWidth: 'projection' as const } : {}),
    ...(gemmaSandwichNorms(modelType) ? { sandwichNorms: true } : {}),
    // MPT's no_bias removes the LayerNorms' biases too (llm-foundry MPTModel; transformers MptBlock norm_1.bias = None).
    ...(mpt && cfg.no_bias === true ? { normBias: false as const } : {}),
    ...(gemmaNorm(modelType) ? { normFp32: true } : {}),
    ...(softcapOn(modelType, cfg, 'attn_logit_softcapping') ? { attnLogitSoftcap: true } : {}),
    ...(softcapOn(modelType, cfg, 'final_logit_softcapping') ? { finalLogitSoftcap: true } : {}),
    ...(modelType === 'gemma2' ? { noSdpa: true } : {}),
    // gpt-oss learns one sink logit per head and layer (transformers modeling_gpt_oss.py GptOssAttention `sinks`).
    ...(isGptOss(modelType) ? { attentionSinks: true } : {}),
    dropout,
    vocabSize,
    ...(moe ? { moe } : {}),
    ...(mla ? { mla } : {}),
    ...(linearAttention ? { linearAttention } : {}),
    // Qwen3-Next's and Qwen3.5's softmax attention gates its output (transformers Qwen3NextAttention q_proj: 2·a·d).
    ...(isGatedDeltaNetFamily(modelType) ? { attentionOutputGate: true } : {}),
    ...(sliding?.window && sliding.slidingLayers > 0
      ? { slidingWindow: { window: sliding.window, slidingLayers: Math.min(layers, sliding.slidingLayers), ...(sliding.chunked ? { chunked: true } : {}) } } : {}),
  };
  const declared = [cfg.num_nextn_predict_layers, cfg.mtp_num_hidden_layers].find((v) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= layers);
  return { model, problems, sources, ...(typeof declared === 'number' && declared > 0 ? { mtpLayersInConfig: declared } : {}) };
}


/**
 * Falcon's key/value heads (shared/model/falcon.ts): one under multi-query attention (Falcon-7B), else `num_kv_heads`
 * (RWConfig `n_head_kv`), which defaults to the query heads.
 */
function falconKvHeads(cfg: Obj, modelType: string, heads: number, num: (f: ModelField, keys: string[], fallback: number | undefined, why?: string) => number, sources: Partial<Record<PlanPath, InputSource>>): number {
  if (!falconSharesOneKv(cfg, modelType)) return num('kvHeads', [...FALCON_KV_KEYS], heads, 'FalconConfig num_kv_heads = None → num_attention_heads');
  sources['model.kvHeads'] = { kind: cfg.multi_query === true ? 'explicit' : 'default', detail: 'config.json: multi_query (FalconConfig default true) without new_decoder_architecture: one key/value head' };
  return 1;
}

/**
 * Multi-head latent attention (shared/model/mla.ts) from `kv_lora_rank`, `q_lora_rank` (null: queries projected
 * directly, DeepSeek-V2-Lite), `qk_nope_head_dim`, `qk_rope_head_dim` and `v_head_dim`; a missing width takes
 * DeepseekV3Config's default (transformers models/deepseek_v3/configuration_deepseek_v3.py: 1536, 512, 128, 64, 128).
 * Undefined for models without `kv_lora_rank` outside the MLA families, or a `kv_lora_rank` of null.
 */
function readMla(cfg: Obj, modelType: string, problems: Problem[], sources: Record<string, InputSource>): MlaSpec | undefined {
  const r = readMlaWidths(cfg, modelType);
  if (!r) return undefined;
  if ('bad' in r) {
    const { field, key, value } = r.bad;
    problems.push({ code: 'hf-config-bad-value', severity: 'error', message: `config.json: ${key} must be a positive integer${field === 'qLoraRank' ? ' or null' : ''}, got ${JSON.stringify(value)}.`, paths: [`model.mla.${field}`] });
    return undefined;
  }
  const out: Partial<Record<keyof MlaSpec, number>> = {};
  for (const { field, key, value, how } of r.widths) {
    out[field] = value;
    sources[`model.mla.${field}`] = how === 'default' ? { kind: 'default', detail: `DeepseekV3Config default ${key} = ${value}` }
      : { kind: 'explicit', detail: how === 'null' ? 'config.json: q_lora_rank null (queries projected from the hidden state)' : `config.json: ${key}` };
  }
  return validMla(out);
}

/** Group-limited routing when both counts are given and it limits anything (1 ≤ top-k groups < groups). */
export function routerGroups(groups: number | undefined, topK: number | undefined): { routerGroups?: number; routerGroupTopK?: number } {
  return groups !== undefined && topK !== undefined && groups > 1 && topK >= 1 && topK < groups ? { routerGroups: groups, routerGroupTopK: topK } : {};
}

/**
 * Families whose transformers code keeps the router's top-k probabilities fp32 into the experts' weighting
 * (modeling_mixtral.py MixtralTopKRouter, modeling_deepseek_v3.py and _v2 gates, modeling_glm4_moe.py,
 * modeling_ernie4_5_moe.py, transformers 5.24); Qwen2/Qwen3-MoE, OLMoE and Granite-MoE cast them to the hidden dtype.
 */
const FP32_ROUTER_TYPES = new Set(['mixtral', 'deepseek_v2', 'deepseek_v3', 'glm4_moe', 'ernie4_5_moe']);

/** Reads Mixtral / Qwen-MoE / DeepSeek MoE keys; undefined for dense models. */
function readMoe(cfg: Obj, modelType: string, ffn: number, problems: Problem[], sources: Record<string, InputSource>): MoeSpec | undefined {
  const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);
  const experts = int(cfg.num_local_experts) ?? int(cfg.num_experts) ?? int(cfg.n_routed_experts) ?? int(cfg.moe_num_experts);
  if (!experts) return undefined;
  const topK = int(cfg.num_experts_per_tok) ?? int(cfg.experts_per_token) ?? int(cfg.moe_top_k) ?? 2;
  // Llama 4's experts are `intermediate_size` wide; its dense layers read `intermediate_size_mlp` (the FFN size).
  const expertFfnSize = int(cfg.moe_intermediate_size) || (isLlama4(modelType) ? int(cfg.intermediate_size) : undefined) || ffn;
  let sharedExperts = 0;
  let sharedExpertFfnSize = 0;
  let sharedExpertGate = false;
  const qwenShared = int(cfg.shared_expert_intermediate_size);
  if (qwenShared) {
    sharedExperts = 1;
    sharedExpertFfnSize = qwenShared;
    // Qwen2-MoE, Qwen3-Next and Qwen3.5 gate the shared expert by a sigmoid of h weights (`shared_expert_gate`).
    sharedExpertGate = modelType.startsWith('qwen2') || isGatedDeltaNetFamily(modelType);
  } else if (int(cfg.n_shared_experts)) {
    sharedExperts = int(cfg.n_shared_experts) ?? 0;
    sharedExpertFfnSize = expertFfnSize;
  } else if (isLlama4(modelType)) {
    sharedExperts = 1;
    sharedExpertFfnSize = expertFfnSize;
  }
  const step = int(cfg.decoder_sparse_step) || int(cfg.moe_layer_freq) || int(cfg.interleave_moe_layer_step) || 1;
  const onlyMlp = Array.isArray(cfg.mlp_only_layers) ? cfg.mlp_only_layers.length : 0;
  if (onlyMlp > 0) {
    problems.push({ code: 'hf-config-mlp-only-layers', severity: 'warning', message: 'mlp_only_layers is approximated: those layers are counted as MoE layers.', paths: ['model.moe'] });
  }
  if (topK > experts) {
    problems.push({ code: 'hf-config-bad-value', severity: 'error', message: `num_experts_per_tok ${topK} exceeds the ${experts} experts.`, paths: ['model.moe.topK'] });
  }
  sources['model.moe'] = { kind: 'explicit', detail: 'config.json: MoE keys' };
  return {
    experts, topK, expertFfnSize, sharedExperts, sharedExpertFfnSize,
    denseFirstLayers: int(cfg.first_k_dense_replace) ?? 0,
    layerFrequency: step,
    sharedExpertGate,
    ...routerGroups(int(cfg.n_group), int(cfg.topk_group)),
    ...(FP32_ROUTER_TYPES.has(modelType) ? { routerWeightsFp32: true } : {}),
  };
}

/**
 * llm-foundry MPT keys (llmfoundry/models/mpt/configuration_mpt.py MPTConfig) rewritten to the GPT-2 names read above:
 * d_model, n_heads, n_layers, expansion_ratio (ffn = ratio · d_model, default 4), max_seq_len (default 2048),
 * learned_pos_emb (default true, off under attn_config.alibi or rope), no_bias (default false), attn_config.kv_n_heads
 * (grouped-query attention), ffn_config.ffn_type "mptglu" (gated), norm_type "rmsnorm", tie_word_embeddings.
 */
function mptKeys(c: Obj, sources: Record<string, InputSource>): Obj {
  const attn = isObj(c.attn_config) ? c.attn_config : {};
  const ffn = isObj(c.ffn_config) ? c.ffn_config : {};
  const h = c.d_model;
  const ratio = typeof c.expansion_ratio === 'number' && c.expansion_ratio > 0 ? c.expansion_ratio : 4;
  // MPTConfig turns learned_pos_emb off when attn_config.alibi or rope is on (mosaicml/mpt-7b: both written true).
  const learned = c.learned_pos_emb !== false && attn.alibi !== true && attn.rope !== true;
  sources['model.positions'] = { kind: c.learned_pos_emb === undefined && attn.alibi === undefined ? 'default' : 'explicit', detail: 'config.json: learned_pos_emb, attn_config.alibi (MPTConfig: learned unless ALiBi or RoPE)' };
  return {
    ...c,
    n_embd: h,
    n_layer: c.n_layers,
    n_head: c.n_heads,
    ...(attn.attn_type === 'grouped_query_attention' && typeof attn.kv_n_heads === 'number' ? { num_key_value_heads: attn.kv_n_heads } : {}),
    n_inner: typeof h === 'number' ? Math.round(ratio * h) : undefined,
    n_positions: c.max_seq_len ?? 2048,
    attn_pdrop: attn.attn_pdrop,
    attention_bias: c.no_bias !== true,
    mlp_gated: ffn.ffn_type === 'mptglu',
    rms_norm: typeof c.norm_type === 'string' && c.norm_type.includes('rms'),
    positions: learned ? 'learned' : attn.alibi === true ? 'alibi' : attn.rope === true ? 'rotary' : 'none',
  };
}
