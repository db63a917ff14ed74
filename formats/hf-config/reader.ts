/**
 * Hugging Face config.json → model.* facts. Key names follow transformers' configuration classes
 * (LlamaConfig, Qwen2/3(-MoE), Mixtral, DeepSeek-V3, Gemma 1–3, gpt-oss, GPT-2 attribute_map); see docs/formats/hf-config.md.
 */
import type { FactSink } from '../common/sink';
import { locOf } from '../common/read';
import { toBool, toNumber } from '../common/text';
import { entry, plain, type KEntry, type KNode } from '../common/tree';
import type { PlanPath } from '../../shared/plan/paths';
import { isLlama4, SLIDING_WINDOW_CODE, UNMODELLED_LAYERS_CODE } from '../../shared/model/hfConfig';
import { badGatedDeltaNetKeys, familyDefaults, gatedDeltaNetLayers, isGatedDeltaNetFamily, isGemma3, isGptOss, isQwen1, gemmaNorm, gemmaSandwichNorms, softcapOn, projectionQkNorm, qkvOnlyBias, slidingWindow, slidingWindowMessage, unmodelledLayers } from '../../shared/model/hfFamilies';
import { readMlaWidths } from '../../shared/model/mla';
import { FALCON_DEFAULTS, falconParallelKey, falconSharesOneKv, isFalcon, PARALLEL_BLOCK_CODE, parallelBlockMessage } from '../../shared/model/falcon';

/** Plan path ← candidate keys, first present wins. */
const NUMERIC: readonly [PlanPath, readonly string[]][] = [
  ['model.hiddenSize', ['hidden_size', 'n_embd', 'n_embed', 'd_model']],
  ['model.layers', ['num_hidden_layers', 'n_layer', 'num_layers', 'n_layers']],
  ['model.heads', ['num_attention_heads', 'n_head', 'num_heads', 'n_heads']],
  ['model.kvHeads', ['num_key_value_heads', 'n_kv_heads', 'num_kv_heads', 'n_head_kv']],
  ['model.headDim', ['head_dim', 'd_kv']],
  ['model.ffnSize', ['intermediate_size', 'n_inner', 'd_ff', 'ffn_hidden_size']],
  ['model.vocabSize', ['vocab_size', 'padded_vocab_size']],
  ['model.maxPositions', ['max_position_embeddings', 'n_positions', 'max_sequence_length', 'max_seq_len']],
  ['model.moe.experts', ['num_local_experts', 'num_experts', 'n_routed_experts', 'moe_num_experts', 'num_routed_experts']],
  ['model.moe.topK', ['num_experts_per_tok', 'experts_per_token', 'moe_topk', 'top_k']],
  ['model.moe.expertFfnSize', ['moe_intermediate_size']],
  ['model.moe.sharedExperts', ['n_shared_experts', 'num_shared_experts']],
  ['model.moe.sharedExpertFfnSize', ['shared_expert_intermediate_size']],
  ['model.moe.denseFirstLayers', ['first_k_dense_replace']],
  ['model.moe.layerFrequency', ['decoder_sparse_step', 'moe_layer_freq', 'interleave_moe_layer_step']],
  ['model.moe.routerGroups', ['n_group']],
  ['model.moe.routerGroupTopK', ['topk_group']],
];

function firstPresent(node: KNode, names: readonly string[]): { e: KEntry; name: string } | undefined {
  for (const name of names) {
    const e = entry(node, name);
    if (e && e.value.kind === 'scalar' && e.value.value !== null && e.value.value !== undefined) return { e, name };
  }
  return undefined;
}

/** Reads HF-style model keys of `node` into model.* facts; `prefix` labels keys (e.g. "model.model_config."). */
export function readHfModel(s: FactSink, node: KNode | undefined, prefix = ''): void {
  if (!node || node.kind !== 'map') return;
  for (const [path, names] of NUMERIC) {
    const hit = firstPresent(node, names);
    if (!hit) continue;
    const n = toNumber(hit.e.value.value);
    if (n === undefined || n < 0 || !Number.isInteger(n)) {
      s.diag('invalid-value', 'warning', `${hit.name} should be a non-negative whole number.`, hit.e.value.range, [path]);
      continue;
    }
    // Every n-th layer MoE needs n ≥ 1 (transformers reads 0 as no MoE layer at all in some families, a division by zero in others).
    if (path === 'model.moe.layerFrequency' && n === 0) {
      s.diag('invalid-value', 'warning', `${hit.name} should be at least 1 (every n-th layer is MoE).`, hit.e.value.range, [path]);
      continue;
    }
    s.explicit(path, n, locOf(hit.e, prefix + hit.name));
  }
  const tie = firstPresent(node, ['tie_word_embeddings', 'weight_tying', 'tie_embeddings']);
  if (tie) { const b = toBool(tie.e.value.value); if (b !== undefined) s.explicit('model.tiedEmbeddings', b, locOf(tie.e, prefix + tie.name)); }
  const mt = entry(node, 'model_type');
  const modelType = mt && typeof mt.value.value === 'string' ? mt.value.value : '';
  if (mt && modelType) s.explicit('model.type', modelType, locOf(mt, prefix + 'model_type'));
  const arch = entry(node, 'architectures');
  const archName = arch?.value.kind === 'list' ? arch.value.items?.[0]?.value : undefined;
  if (arch && typeof archName === 'string') s.explicit('model.name', archName, locOf(arch, prefix + 'architectures'));
  const ab = entry(node, 'attention_bias');
  if (ab && typeof ab.value.value === 'boolean') s.explicit('model.attnBias', ab.value.value ? (qkvOnlyBias(modelType) ? 'qkv' : 'all') : 'none', locOf(ab, prefix + 'attention_bias'));
  else if (modelType.startsWith('qwen2')) s.default('model.attnBias', 'qkv', 'transformers modeling_qwen2.py: q/k/v projections always have a bias');
  const mb = entry(node, 'mlp_bias');
  if (mb && typeof mb.value.value === 'boolean') s.explicit('model.mlpBias', mb.value.value, locOf(mb, prefix + 'mlp_bias'));
  if (modelType.startsWith('qwen3')) s.default('model.qkNorm', true, 'transformers modeling_qwen3.py: q_norm/k_norm per head');
  if (projectionQkNorm(modelType)) {
    s.default('model.qkNorm', true, 'transformers modeling_olmo2.py / modeling_olmoe.py: q_norm and k_norm');
    s.default('model.qkNormWidth', 'projection', 'transformers modeling_olmo2.py / modeling_olmoe.py: q_norm over heads·head_dim, k_norm over kv-heads·head_dim');
  }
  if (gemmaSandwichNorms(modelType)) s.default('model.sandwichNorms', true, `transformers modeling_${modelType.replace('_text', '')}.py: four RMSNorms a block (post_attention_layernorm and post_feedforward_layernorm too)`);
  if (gemmaNorm(modelType)) s.default('model.normFp32', true, 'transformers GemmaRMSNorm: scales the fp32 normalised tensor by (1 + weight) and casts after');
  for (const [key, path] of [['attn_logit_softcapping', 'model.attnLogitSoftcap'], ['final_logit_softcapping', 'model.finalLogitSoftcap']] as const) {
    const e = entry(node, key);
    const on = softcapOn(modelType, { [key]: e?.value.value }, key);
    if (e && (e.value.value === null || typeof e.value.value === 'number')) s.explicit(path, on, locOf(e, prefix + key));
    else if (on) s.default(path, true, `transformers Gemma2Config default ${key} ${key.startsWith('attn') ? '50.0' : '30.0'}`);
  }
  if (modelType === 'gemma2') s.default('model.noSdpa', true, 'transformers 5.24: Gemma 2 has no SDPA attention (eager unless attn_implementation is flash_attention_2)');
  const qkn = entry(node, 'use_qk_norm');
  if (qkn && typeof qkn.value.value === 'boolean') s.explicit('model.qkNorm', qkn.value.value, locOf(qkn, prefix + 'use_qk_norm'));
  if (isGemma3(modelType)) s.default('model.qkNorm', true, 'transformers modeling_gemma3.py: q_norm/k_norm per head');
  if (isGptOss(modelType)) s.default('model.attentionSinks', true, 'transformers modeling_gpt_oss.py: a learned sink logit per head (GptOssAttention sinks)');
  readFamily(s, node, prefix, modelType);
  if (isLlama4(modelType)) readLlama4(s, node, prefix);
  if (modelType === 'mpt' || entry(node, 'expansion_ratio')) readMpt(s, node, prefix);
  if (isFalcon(modelType.toLowerCase())) readFalcon(s, node, prefix, modelType.toLowerCase());
  if (modelType === 'gpt2' || entry(node, 'n_embd')) {
    s.default('model.positions', 'learned', 'transformers GPT-2: learned position embeddings (wpe)');
    s.default('model.gatedMlp', false, 'transformers GPT-2: 2-matrix MLP');
    s.default('model.norm', 'layernorm', 'transformers GPT-2: LayerNorm');
    s.default('model.attnBias', 'all', 'transformers GPT-2: biases on all linear layers');
    s.default('model.mlpBias', true, 'transformers GPT-2: biases on all linear layers');
    s.default('model.tiedEmbeddings', true, 'transformers GPT-2: lm_head tied to wte');
  }
  if (modelType.startsWith('llama') || modelType.startsWith('mistral') || modelType.startsWith('mixtral') || modelType.startsWith('qwen')) {
    s.default('model.tiedEmbeddings', false, `transformers ${modelType} config: tie_word_embeddings defaults to False`);
  }
  if (modelType === 'llama' || !modelType) {
    const d = 'transformers LlamaConfig default (configuration_llama.py)';
    if (prefix && !s.has('model.vocabSize')) s.default('model.vocabSize', 32000, d);
  }
  readLatentAttention(s, node, prefix, modelType);
  if (s.has('model.heads') && !s.has('model.kvHeads')) s.derived('model.kvHeads', s.num('model.heads') ?? 1, 'num_key_value_heads unset: equals num_attention_heads (MHA)');
}


/**
 * Multi-head latent attention (shared/model/mla.ts; the same rule as shared/model/hfConfig.ts): from `kv_lora_rank`,
 * or the DeepSeek-V2/V3 and Kimi K2 classes, unless `kv_lora_rank` is null; `q_lora_rank` null projects queries from the
 * hidden state; a missing width takes DeepseekV3Config's default. Query/key heads are then qk_nope + qk_rope wide and every
 * query head has its own key and value.
 */
function readLatentAttention(s: FactSink, node: KNode, prefix: string, modelType: string): void {
  const r = readMlaWidths(plain(node) as Record<string, unknown>, modelType);
  if (!r) return;
  if ('bad' in r) {
    const { field, key } = r.bad;
    s.diag('invalid-value', 'warning', `${key} should be a positive whole number${field === 'qLoraRank' ? ' or null' : ''}.`, entry(node, key)?.value.range, [`model.mla.${field}`]);
    return;
  }
  for (const { field, key, value, how } of r.widths) {
    const e = entry(node, key);
    if (how === 'default' || !e) s.default(`model.mla.${field}`, value, `transformers DeepseekV3Config default ${key} = ${value}`);
    else s.explicit(`model.mla.${field}`, value, locOf(e, prefix + key));
  }
  const nope = s.num('model.mla.qkNopeHeadDim'), rope = s.num('model.mla.qkRopeHeadDim');
  if (nope && rope) s.derived('model.headDim', nope + rope, `${prefix}qk_nope_head_dim + qk_rope_head_dim (multi-head latent attention)`);
  const heads = s.num('model.heads');
  if (heads) s.derived('model.kvHeads', heads, 'multi-head latent attention: one key and value per query head');
}

/**
 * What a family's config.json leaves to its class or modelling code (shared/model/hfFamilies.ts): the Gemma and gpt-oss
 * class defaults (tied heads for Gemma), gpt-oss's expert and attention biases, Qwen (1)'s MLP of intermediate_size / 2
 * and its c_attn bias, an info where attention slides over a window (its window and sliding layers as facts).
 */
function readFamily(s: FactSink, node: KNode, prefix: string, modelType: string): void {
  const fam = familyDefaults(modelType);
  if (fam) {
    const why = `${fam.source} default`;
    const defaults: [PlanPath, number | boolean][] = [
      ['model.hiddenSize', fam.hidden], ['model.layers', fam.layers], ['model.heads', fam.heads], ['model.kvHeads', fam.kvHeads], ['model.headDim', fam.headDim],
      ['model.ffnSize', fam.ffn], ['model.vocabSize', fam.vocab], ['model.maxPositions', fam.maxPositions], ['model.tiedEmbeddings', fam.tied],
    ];
    for (const [path, v] of defaults) s.default(path, v, why);
  }
  if (isGptOss(modelType)) {
    s.default('model.attnBias', 'all', 'transformers GptOssConfig default attention_bias = True');
    s.default('model.mlpBias', true, 'transformers modeling_gpt_oss.py GptOssExperts: gate_up_proj_bias and down_proj_bias');
  }
  if (isQwen1(modelType)) readQwen1(s, node, prefix);
  // A multimodal config's language model is read from its text_config, which says whether it slides.
  const L = s.num('model.layers') ?? 0;
  const unmodelled = entry(node, 'text_config') ? undefined : unmodelledLayers(plain(node) as Record<string, unknown>, modelType, L);
  const uAt = unmodelled && (entry(node, unmodelled.key) ?? entry(node, 'model_type'));
  if (unmodelled) s.diag(UNMODELLED_LAYERS_CODE, 'warning', unmodelled.message, uAt?.keyRange, ['model']);
  readGatedDeltaNet(s, node, prefix, modelType, L);
  const sw = entry(node, 'text_config') ? undefined : slidingWindow(plain(node) as Record<string, unknown>, modelType, L);
  const at = sw && (entry(node, sw.key) ?? entry(node, 'model_type'));
  if (sw && at) {
    s.diag(SLIDING_WINDOW_CODE, 'info', slidingWindowMessage(sw, prefix), at.keyRange, ['model']);
    if (sw.window && sw.slidingLayers > 0) {
      const loc = { key: `${prefix}${sw.key}`, keyRange: at.keyRange, valueRange: at.value.range ?? at.keyRange };
      s.derived('model.slidingWindow.window', sw.window, `config.json ${prefix}${sw.key}: a window of ${sw.window} tokens`, loc);
      s.derived('model.slidingWindow.slidingLayers', sw.slidingLayers, `config.json ${prefix}${sw.key}: ${sw.layers}`, loc);
      if (sw.chunked) s.derived('model.slidingWindow.chunked', true, `config.json ${prefix}${sw.key}: attention within chunks of ${sw.window} tokens`, loc);
    }
  }
}

/**
 * Falcon (shared/model/falcon.ts; transformers FalconConfig and modeling_falcon.py): FalconConfig's widths where the
 * file omits them, one key/value head under multi-query attention, an MLP of ffn_hidden_size (4·hidden by default)
 * with GELU, LayerNorm, biases on every linear layer only with `bias`, rotary positions unless `alibi`, a tied head,
 * and an info where attention and the MLP run side by side.
 */
function readFalcon(s: FactSink, node: KNode, prefix: string, modelType: string): void {
  const why = `${FALCON_DEFAULTS.source} default`;
  s.default('model.hiddenSize', FALCON_DEFAULTS.hidden, why);
  s.default('model.layers', FALCON_DEFAULTS.layers, why);
  s.default('model.heads', FALCON_DEFAULTS.heads, why);
  s.default('model.vocabSize', FALCON_DEFAULTS.vocab, why);
  s.default('model.maxPositions', FALCON_DEFAULTS.maxPositions, why);
  const c = plain(node) as Record<string, unknown>;
  if (falconSharesOneKv(c, modelType)) {
    const mq = entry(node, 'multi_query');
    const detail = 'multi_query (FalconConfig default true) without new_decoder_architecture: one key/value head (modeling_falcon.py FalconAttention)';
    if (mq) s.derived('model.kvHeads', 1, `config.json ${prefix}${detail}`, locOf(mq, prefix + 'multi_query'));
    else s.derived('model.kvHeads', 1, `FalconConfig ${detail}`);
  }
  const h = s.num('model.hiddenSize');
  if (h) s.default('model.ffnSize', 4 * h, 'FalconConfig ffn_hidden_size = None → 4·hidden_size');
  s.default('model.gatedMlp', false, 'transformers modeling_falcon.py FalconMLP: dense_h_to_4h, GELU, dense_4h_to_h');
  s.default('model.norm', 'layernorm', 'transformers modeling_falcon.py: LayerNorm');
  const alibi = entry(node, 'alibi');
  if (alibi && toBool(alibi.value.value) === true) s.explicit('model.positions', 'alibi', locOf(alibi, prefix + 'alibi'));
  else s.default('model.positions', 'rotary', 'FalconConfig alibi = False: rotary positions');
  const bias = entry(node, 'bias');
  const b = bias ? toBool(bias.value.value) === true : false;
  if (bias) { s.explicit('model.attnBias', b ? 'all' : 'none', locOf(bias, prefix + 'bias')); s.explicit('model.mlpBias', b, locOf(bias, prefix + 'bias')); }
  else { s.default('model.attnBias', 'none', 'FalconConfig bias = False'); s.default('model.mlpBias', false, 'FalconConfig bias = False'); }
  s.default('model.tiedEmbeddings', true, 'FalconConfig (PretrainedConfig) default tie_word_embeddings = True; FalconForCausalLM ties lm_head');
  const key = falconParallelKey(c, modelType);
  const at = key && (entry(node, key) ?? entry(node, 'model_type'));
  if (key) s.diag(PARALLEL_BLOCK_CODE, 'info', parallelBlockMessage(key, prefix), at ? at.keyRange : undefined, ['model']);
}

/**
 * Qwen3-Next and Qwen3.5 (shared/model/hfFamilies.ts gatedDeltaNetLayers): the Gated DeltaNet layers and their widths,
 * the softmax layers' output gate (transformers Qwen3NextAttention: q_proj of 2·a·d) and the shared expert's sigmoid
 * gate (`shared_expert_gate`, h weights).
 */
function readGatedDeltaNet(s: FactSink, node: KNode, prefix: string, modelType: string, L: number): void {
  if (entry(node, 'text_config') || !isGatedDeltaNetFamily(modelType)) return;
  s.default('model.attentionOutputGate', true, `transformers ${modelType}: softmax attention gates its output (q_proj of 2·heads·head_dim)`);
  if (s.has('model.moe.sharedExpertFfnSize')) s.default('model.moe.sharedExpertGate', true, `transformers ${modelType}: the shared expert has a sigmoid gate (shared_expert_gate)`);
  const c = plain(node) as Record<string, unknown>;
  for (const { key, fallback } of badGatedDeltaNetKeys(c, modelType)) {
    s.diag('invalid-value', 'warning', `${prefix}${key} should be a positive whole number; read as transformers' default ${fallback}.`, entry(node, key)?.value.range, ['model.linearAttention']);
  }
  const la = gatedDeltaNetLayers(c, modelType, L);
  if (!la) return;
  const at = entry(node, 'layer_types') ?? entry(node, 'full_attention_interval') ?? entry(node, 'model_type');
  const loc = at ? { key: `${prefix}${at.key}`, keyRange: at.keyRange, valueRange: at.value.range ?? at.keyRange } : undefined;
  const why = `config.json ${prefix}linear_* keys (transformers ${modelType} defaults where absent): Gated DeltaNet layers`;
  const fields: [PlanPath, number][] = [
    ['model.linearAttention.layers', la.layers], ['model.linearAttention.keyHeads', la.keyHeads], ['model.linearAttention.valueHeads', la.valueHeads],
    ['model.linearAttention.keyHeadDim', la.keyHeadDim], ['model.linearAttention.valueHeadDim', la.valueHeadDim], ['model.linearAttention.convKernel', la.convKernel],
  ];
  for (const [path, v] of fields) s.derived(path, v, why, loc);
}

/** Qwen (1) remote code modeling_qwen.py: QWenMLP is intermediate_size / 2 wide; c_attn has a bias, c_proj only without no_bias. */
function readQwen1(s: FactSink, node: KNode, prefix: string): void {
  const inter = entry(node, 'intermediate_size');
  const f = inter ? toNumber(inter.value.value) : undefined;
  if (inter && f !== undefined && Number.isInteger(f) && f > 1) s.derived('model.ffnSize', Math.floor(f / 2), 'Qwen modeling_qwen.py QWenMLP: intermediate_size / 2', locOf(inter, prefix + 'intermediate_size'));
  const nb = entry(node, 'no_bias');
  const bias = nb ? toBool(nb.value.value) === false : false;
  if (nb && bias) { s.explicit('model.attnBias', 'all', locOf(nb, prefix + 'no_bias')); s.explicit('model.mlpBias', true, locOf(nb, prefix + 'no_bias')); }
  else s.default('model.attnBias', 'qkv', 'Qwen modeling_qwen.py: c_attn (q, k, v) always has a bias; c_proj none (no_bias)');
}

/**
 * Llama 4 (transformers configuration_llama4.py, modeling_llama4.py): the dense layers' MLP is
 * `intermediate_size_mlp` wide; the routed experts and the one shared expert of each MoE layer are `intermediate_size`.
 */
function readLlama4(s: FactSink, node: KNode, prefix: string): void {
  const dense = firstPresent(node, ['intermediate_size_mlp']);
  const expert = firstPresent(node, ['intermediate_size']);
  // Widths are positive whole numbers; anything else is left to the generic reader's warning.
  const n = (e: KEntry | undefined) => { const v = e ? toNumber(e.value.value) : undefined; return v !== undefined && Number.isInteger(v) && v > 0 ? v : undefined; };
  if (dense && n(dense.e)) s.explicit('model.ffnSize', n(dense.e), locOf(dense.e, prefix + 'intermediate_size_mlp'));
  else if (dense) s.diag('invalid-value', 'warning', `${prefix}intermediate_size_mlp should be a positive whole number.`, dense.e.value.range, ['model.ffnSize']);
  if (!s.has('model.moe.experts')) return;
  if (expert && n(expert.e) && !s.has('model.moe.expertFfnSize')) s.explicit('model.moe.expertFfnSize', n(expert.e), locOf(expert.e, prefix + 'intermediate_size'));
  const width = s.num('model.moe.expertFfnSize');
  if (!s.has('model.moe.sharedExperts')) s.default('model.moe.sharedExperts', 1, 'transformers modeling_llama4.py: Llama4TextMoe has one shared expert');
  if (width && !s.has('model.moe.sharedExpertFfnSize')) s.default('model.moe.sharedExpertFfnSize', width, 'transformers modeling_llama4.py: the shared expert is intermediate_size wide');
}

/** Whole-file reader for config.json; a multimodal config's language model is its `text_config` (Llama 4, Gemma 3, Mistral 3). */
export function readHfConfig(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  readHfModel(s, root);
  const text = entry(root, 'text_config');
  if (text?.value.kind === 'map') readHfModel(s, text.value, 'text_config.');
  const missing = (['model.hiddenSize', 'model.layers', 'model.heads'] as const).filter((p) => !s.has(p));
  if (missing.length) s.diag('hf-not-decoder', 'info', `Not a decoder config ShardLens can count (missing ${missing.join(', ')}).`, undefined, missing);
}

/**
 * llm-foundry MPT keys (MPTConfig, llmfoundry/models/mpt/configuration_mpt.py): FFN = expansion_ratio · d_model,
 * learned positions unless learned_pos_emb is false, LayerNorm, tied head, plain GELU MLP, biases unless no_bias.
 */
export function readMpt(s: FactSink, node: KNode, prefix: string): void {
  const d = 'llm-foundry MPTConfig default';
  const ratio = entry(node, 'expansion_ratio');
  const h = s.num('model.hiddenSize');
  const r = ratio ? toNumber(ratio.value.value) : 4;
  // MPT widths are 1–8 × d_model in practice; a ratio outside (0, 64] is a typo, not a model to estimate.
  if (ratio && (r === undefined || !(r > 0) || r > 64)) {
    s.diag('invalid-value', 'warning', `${prefix}expansion_ratio should be a positive number (MLP width / d_model, at most 64).`, ratio.value.range, ['model.ffnSize']);
  } else if (h && r !== undefined && !s.has('model.ffnSize')) {
    if (ratio) s.explicit('model.ffnSize', Math.round(r * h), locOf(ratio, prefix + 'expansion_ratio'));
    else s.default('model.ffnSize', 4 * h, `${d}: expansion_ratio 4`);
  }
  // MPTConfig turns learned_pos_emb off when attn_config.alibi or rope is on (mosaicml/mpt-7b writes both true).
  const lp = entry(node, 'learned_pos_emb');
  const attn = entry(node, 'attn_config');
  const alibi = entry(attn?.value, 'alibi');
  const rope = entry(attn?.value, 'rope');
  if (alibi && toBool(alibi.value.value) === true) s.explicit('model.positions', 'alibi', locOf(alibi, `${prefix}attn_config.alibi`));
  else if (rope && toBool(rope.value.value) === true) s.explicit('model.positions', 'rotary', locOf(rope, `${prefix}attn_config.rope`));
  else if (lp) s.explicit('model.positions', toBool(lp.value.value) !== false ? 'learned' : 'alibi', locOf(lp, prefix + 'learned_pos_emb'));
  else s.default('model.positions', 'learned', `${d}: learned_pos_emb true`);
  const nb = entry(node, 'no_bias');
  const bias = nb ? toBool(nb.value.value) !== true : true;
  if (nb) { s.explicit('model.attnBias', bias ? 'all' : 'none', locOf(nb, prefix + 'no_bias')); s.explicit('model.mlpBias', bias, locOf(nb, prefix + 'no_bias')); }
  else { s.default('model.attnBias', 'all', `${d}: no_bias false`); s.default('model.mlpBias', true, `${d}: no_bias false`); }
  // no_bias removes every bias, the LayerNorms' too (llm-foundry MPTModel.__init__; transformers MptBlock norm_1.bias = None).
  if (nb && !bias) s.explicit('model.normBias', false, locOf(nb, prefix + 'no_bias'));
  s.default('model.norm', 'layernorm', `${d}: low_precision_layernorm`);
  s.default('model.gatedMlp', false, `${d}: ffn_type mptmlp (GELU)`);
  s.default('model.tiedEmbeddings', true, `${d}: tie_word_embeddings true`);
}
