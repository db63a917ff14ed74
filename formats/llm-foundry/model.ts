/**
 * The `model:` block of an llm-foundry or OLMo trainer YAML: MPT (`name: mpt_causal_lm`, llm-foundry's own model)
 * and OLMo's ModelConfig describe the architecture with their own keys, which the Hugging Face vocabulary does not
 * cover (`expansion_ratio`, `mlp_hidden_size`, `activation_type`, `include_bias`, `weight_tying`, `attn_config`).
 */
import type { FactSink } from '../common/sink';
import { locOf, readBool } from '../common/read';
import { toBool, toNumber } from '../common/text';
import { at, entry, type KEntry, type KNode } from '../common/tree';
import { readMpt } from '../hf-config/reader';

const str = (e: KEntry | undefined): string | undefined => (e && e.value.kind === 'scalar' && typeof e.value.value === 'string' ? e.value.value : undefined);
const num = (e: KEntry | undefined): number | undefined => (e && e.value.kind === 'scalar' ? toNumber(e.value.value) : undefined);

/** Reads the model block of an llm-foundry / OLMo YAML when it names MPT or OLMo's own architecture. */
export function readFoundryModel(s: FactSink, root: KNode): void {
  const m = entry(root, 'model');
  if (!m || m.value.kind !== 'map') return;
  const name = str(entry(m.value, 'name'));
  if (name === 'mpt_causal_lm' || (!name && entry(m.value, 'expansion_ratio'))) readMptBlock(s, m.value);
  else if (!name && entry(m.value, 'd_model')) readOlmoBlock(s, m.value, root);
}

/**
 * MPT (llmfoundry/models/mpt/configuration_mpt.py MPTConfig and its attn_config / ffn_config defaults): the shared MPT
 * keys (readMpt: FFN = expansion_ratio · d_model, learned positions, LayerNorm, tied head, GELU MLP, biases unless
 * no_bias), the learned position table of max_seq_len rows, the attention kernel of `attn_config.attn_impl`
 * (`torch` is eager attention; `flash` and `triton` are fused) and its grouped K/V heads, and `ffn_config.ffn_type`
 * `mptglu` (a gated MLP of the same width, llmfoundry/models/layers/ffn.py MPTGLU).
 */
function readMptBlock(s: FactSink, node: KNode): void {
  readMpt(s, node, 'model.');
  const msl = entry(node, 'max_seq_len');
  const positions = num(msl);
  if (msl && positions !== undefined && Number.isInteger(positions) && positions > 0) s.explicit('model.maxPositions', positions, locOf(msl, 'model.max_seq_len'));
  // MPTConfig norm_type (default low_precision_layernorm, llmfoundry/models/layers/norm.py NORM_CLASS_REGISTRY).
  const normE = entry(node, 'norm_type');
  const normType = str(normE) ?? 'low_precision_layernorm';
  if (normE && !/^(low_precision_)?(layernorm|rmsnorm)$/.test(normType)) s.diag('invalid-value', 'warning', 'model.norm_type should be layernorm, low_precision_layernorm, rmsnorm or low_precision_rmsnorm.', normE.value.range, ['model.norm']);
  else if (normE) {
    s.explicit('model.norm', normType.endsWith('rmsnorm') ? 'rmsnorm' : 'layernorm', locOf(normE, 'model.norm_type'));
    s.explicit('model.lowPrecisionNorm', normType.startsWith('low_precision_'), locOf(normE, 'model.norm_type'));
  } else s.default('model.lowPrecisionNorm', true, 'MPTConfig default norm_type low_precision_layernorm');
  const impl = at(node, 'attn_config.attn_impl');
  const kernel = str(impl);
  if (impl && kernel) {
    if (kernel === 'torch') s.explicit('training.flashAttention', false, locOf(impl, 'model.attn_config.attn_impl'));
    else if (kernel === 'flash' || kernel === 'triton') s.explicit('training.flashAttention', true, locOf(impl, 'model.attn_config.attn_impl'));
    else s.diag('invalid-value', 'warning', 'model.attn_config.attn_impl should be flash, triton or torch.', impl.value.range, ['training.flashAttention']);
    // The fused-attention rates are FlashAttention-2's; llm-foundry's Triton kernel (flash_attn_triton) is slower.
    if (kernel === 'triton') {
      s.diag('attention-kernel-timing', 'warning',
        'Triton FlashAttention is timed on FlashAttention-2\'s rates: the FlashAttention-2 paper (Dao 2023, §4.1) measures FlashAttention-2 1.3–1.5× faster than it in the forward pass and about 2× in the backward pass, so the attention time here is likely too short.',
        impl.value.range, ['training.flashAttention']);
    }
  }
  const type = str(at(node, 'attn_config.attn_type'));
  const kv = at(node, 'attn_config.kv_n_heads');
  if (type === 'multiquery_attention') s.explicit('model.kvHeads', 1, locOf(at(node, 'attn_config.attn_type')!, 'model.attn_config.attn_type'));
  else if (type === 'grouped_query_attention' && kv) {
    const g = num(kv);
    if (g !== undefined && Number.isInteger(g) && g > 0) s.explicit('model.kvHeads', g, locOf(kv, 'model.attn_config.kv_n_heads'));
    else s.diag('invalid-value', 'warning', 'model.attn_config.kv_n_heads should be a positive whole number.', kv.value.range, ['model.kvHeads']);
  }
  const ffn = at(node, 'ffn_config.ffn_type');
  const ffnType = str(ffn);
  if (ffn && ffnType === 'mptglu') s.explicit('model.gatedMlp', true, locOf(ffn, 'model.ffn_config.ffn_type'));
  else if (ffn && (ffnType === 'mb_moe' || ffnType === 'mb_dmoe')) readMegablocks(s, node);
  if (s.has('model.heads') && !s.has('model.kvHeads')) s.derived('model.kvHeads', s.num('model.heads') ?? 1, 'MPT attn_config default attn_type multihead_attention');
  // ComposerMPTCausalLM's loss (llmfoundry/models/mpt/modeling_mpt.py, loss_fn default fused_crossentropy): flash-attn's
  // cross-entropy kernel reads the 16-bit logits and writes their gradient, no fp32 copy (like Megatron's fused loss).
  const lf = entry(node, 'loss_fn');
  const loss = str(lf);
  if (lf && loss === 'fused_crossentropy') s.explicit('training.lossFusion', 'native', locOf(lf, 'model.loss_fn'));
  else if (lf && loss === 'torch_crossentropy') s.explicit('training.lossFusion', 'none', locOf(lf, 'model.loss_fn'));
  else if (lf) s.diag('invalid-value', 'warning', 'model.loss_fn should be fused_crossentropy or torch_crossentropy.', lf.value.range, ['training.lossFusion']);
  else s.default('training.lossFusion', 'native', 'MPT loss_fn default fused_crossentropy (flash-attn cross-entropy on the 16-bit logits)');
}

/** More routed experts than any published MoE uses (DeepSeek-V3 256, Kimi K2 384) by far: a typo, not a model. */
const MAX_EXPERTS = 4096;

/** MegaBlocks MoE FFN of an MPT model: moe_num_experts experts of the MLP's width, moe_top_k per token, GELU. */
function readMegablocks(s: FactSink, node: KNode): void {
  const experts = at(node, 'ffn_config.moe_num_experts');
  const topK = at(node, 'ffn_config.moe_top_k');
  const e = num(experts);
  const k = num(topK);
  if (experts && e !== undefined && Number.isInteger(e) && e > 0 && e <= MAX_EXPERTS) s.explicit('model.moe.experts', e, locOf(experts, 'model.ffn_config.moe_num_experts'));
  else if (experts) s.diag('invalid-value', 'warning', `model.ffn_config.moe_num_experts should be a whole number from 1 to ${MAX_EXPERTS}.`, experts.value.range, ['model.moe.experts']);
  const most = s.num('model.moe.experts') ?? MAX_EXPERTS;
  if (topK && k !== undefined && Number.isInteger(k) && k > 0 && k <= most) s.explicit('model.moe.topK', k, locOf(topK, 'model.ffn_config.moe_top_k'));
  else if (topK) s.diag('invalid-value', 'warning', 'model.ffn_config.moe_top_k should be a whole number from 1 to the number of experts.', topK.value.range, ['model.moe.topK']);
  if (s.has('model.moe.experts')) s.default('model.moe.topK', 1, 'llm-foundry ffn_config default moe_top_k 1');
  const f = s.num('model.ffnSize');
  if (s.has('model.moe.experts') && f) s.derived('model.moe.expertFfnSize', f, 'MegaBlocks experts use the MLP width expansion_ratio · d_model');
}

/**
 * OLMo's ModelConfig (allenai/OLMo olmo/config.py): MLP width mlp_hidden_size or mlp_ratio · d_model (default 4); with
 * SwiGLU (the default activation_type) that width is the fused gate and up projection, so each branch is half of it
 * (olmo/model.py `ff_out` of output_multiplier 0.5 · hidden_size); RoPE or ALiBi, else learned positions of
 * max_sequence_length rows; biases unless include_bias is false; LayerNorm unless layer_norm_type is rms;
 * weight_tying default true; attention_layer_norm is the QK-norm; flash_attention default false;
 * multi_query_attention gives one K/V head.
 */
function readOlmoBlock(s: FactSink, node: KNode, root: KNode): void {
  const d = 'OLMo ModelConfig default (olmo/config.py)';
  const actE = entry(node, 'activation_type');
  const act = str(actE) ?? 'swiglu';
  const gated = act === 'swiglu';
  if (actE && !['swiglu', 'gelu', 'relu'].includes(act)) s.diag('invalid-value', 'warning', 'model.activation_type should be swiglu, gelu or relu.', actE.value.range, ['model.gatedMlp']);
  if (actE) s.explicit('model.gatedMlp', gated, locOf(actE, 'model.activation_type'));
  else s.default('model.gatedMlp', true, `${d}: activation_type swiglu`);
  const h = s.num('model.hiddenSize');
  const hidE = entry(node, 'mlp_hidden_size');
  const ratioE = entry(node, 'mlp_ratio');
  const hidden = num(hidE);
  const ratio = num(ratioE);
  const width = (w: number) => (gated ? Math.round(w / 2) : Math.round(w));
  if (hidE && hidden !== undefined && Number.isInteger(hidden) && hidden > 0) s.explicit('model.ffnSize', width(hidden), locOf(hidE, 'model.mlp_hidden_size'));
  else if (hidE && hidE.value.kind === 'scalar' && hidE.value.value !== null) s.diag('invalid-value', 'warning', 'model.mlp_hidden_size should be a positive whole number.', hidE.value.range, ['model.ffnSize']);
  else if (ratioE && (ratio === undefined || !(ratio > 0) || ratio > 64)) s.diag('invalid-value', 'warning', 'model.mlp_ratio should be a positive number (MLP width / d_model, at most 64).', ratioE.value.range, ['model.ffnSize']);
  else if (h && ratioE && ratio !== undefined) s.explicit('model.ffnSize', width(ratio * h), locOf(ratioE, 'model.mlp_ratio'));
  else if (h) s.default('model.ffnSize', width(4 * h), `${d}: mlp_ratio 4`);
  const rope = toBool(entry(node, 'rope')?.value.value) === true;
  const alibi = toBool(entry(node, 'alibi')?.value.value) === true;
  if (rope) s.explicit('model.positions', 'rotary', locOf(entry(node, 'rope')!, 'model.rope'));
  else if (alibi) s.explicit('model.positions', 'alibi', locOf(entry(node, 'alibi')!, 'model.alibi'));
  else s.default('model.positions', 'learned', `${d}: neither rope nor alibi, learned position embeddings`);
  const msl = entry(node, 'max_sequence_length');
  const positions = num(msl);
  if (msl && positions !== undefined && Number.isInteger(positions) && positions > 0) s.explicit('model.maxPositions', positions, locOf(msl, 'model.max_sequence_length'));
  const biasE = entry(node, 'include_bias');
  const bias = biasE ? toBool(biasE.value.value) !== false : true;
  if (biasE) { s.explicit('model.attnBias', bias ? 'all' : 'none', locOf(biasE, 'model.include_bias')); s.explicit('model.mlpBias', bias, locOf(biasE, 'model.include_bias')); }
  else { s.default('model.attnBias', 'all', `${d}: include_bias true`); s.default('model.mlpBias', true, `${d}: include_bias true`); }
  const normE = entry(node, 'layer_norm_type');
  if (normE && str(normE) === 'rms') s.explicit('model.norm', 'rmsnorm', locOf(normE, 'model.layer_norm_type'));
  else s.default('model.norm', 'layernorm', `${d}: layer_norm_type default (LayerNorm)`);
  if (readBool(s, root, 'model.weight_tying', 'model.tiedEmbeddings') === undefined) s.default('model.tiedEmbeddings', true, `${d}: weight_tying true`);
  readBool(s, root, 'model.attention_layer_norm', 'model.qkNorm');
  if (readBool(s, root, 'model.flash_attention', 'training.flashAttention') === undefined) s.default('training.flashAttention', false, `${d}: flash_attention false`);
  // OLMo's fused_loss (TrainConfig, default off) computes the loss with flash-attn's cross-entropy kernel.
  if (readBool(s, root, 'fused_loss', 'training.lossFusion', (b) => (b ? 'native' : 'none')) === undefined) s.default('training.lossFusion', 'none', 'OLMo TrainConfig fused_loss unset: torch cross-entropy');
  const mq = entry(node, 'multi_query_attention');
  if (mq && toBool(mq.value.value) === true) s.explicit('model.kvHeads', 1, locOf(mq, 'model.multi_query_attention'));
  if (s.has('model.heads') && !s.has('model.kvHeads')) s.derived('model.kvHeads', s.num('model.heads') ?? 1, 'OLMo: n_kv_heads unset, one K/V head per query head');
}
