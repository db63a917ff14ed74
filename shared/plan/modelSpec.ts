/**
 * The model a plan trains: a dense or MoE decoder-only transformer with its attention variants (grouped-query,
 * multi-head latent, sliding or chunked windows). Plain, immutable, typed objects; re-exported by ./types.
 */

/** Mixture-of-experts description of the MoE layers of a model. */
export interface MoeSpec {
  /** Routed experts per MoE layer (E). */
  readonly experts: number;
  /** Experts each token is routed to (k). */
  readonly topK: number;
  /** Intermediate (FFN) size of one routed expert. */
  readonly expertFfnSize: number;
  /** Shared (always active) experts per MoE layer. */
  readonly sharedExperts: number;
  /** Intermediate size of one shared expert. */
  readonly sharedExpertFfnSize: number;
  /** The first N layers are dense (DeepSeek `first_k_dense_replace`). */
  readonly denseFirstLayers: number;
  /** Every n-th layer is an MoE layer (Qwen `decoder_sparse_step`, Megatron `--moe-layer-freq`); 1 = all. */
  readonly layerFrequency: number;
  /**
   * With a frequency above 1, the first layer of each period is MoE (Megatron's integer `--moe-layer-freq`: layer i
   * when i % n = 0) instead of the last (Qwen's `decoder_sparse_step`: (i + 1) % n = 0). Undefined = false.
   */
  readonly firstLayerMoe?: boolean;
  /** Qwen2-MoE style sigmoid gate on the shared expert (h parameters per MoE layer). */
  readonly sharedExpertGate: boolean;
  /**
   * Group-limited routing (DeepSeek-V3 `n_group` / `topk_group`, Megatron `--moe-router-num-groups` /
   * `--moe-router-group-topk`): the experts form this many groups and a token's experts come from at most
   * routerGroupTopK of them, which bounds the nodes a token's dispatch reaches. Absent: unlimited routing.
   */
  readonly routerGroups?: number;
  readonly routerGroupTopK?: number;
  /**
   * Drop and pad to capacity (Megatron `--moe-expert-capacity-factor` with `--moe-pad-expert-input-to-capacity`;
   * megatron/core/transformer/moe/moe_utils.py `get_capacity`: ⌈T·k/E · c⌉ tokens per expert): every expert runs
   * exactly its capacity, so the expert GEMMs, the permutation and the all-to-all carry c times the balanced T·k/E
   * tokens, and the dispatcher needs no device-to-host copy of the tokens per expert. Absent: dropless.
   */
  readonly capacityFactor?: number;
  /**
   * The router's top-k probabilities stay fp32 into the weighting of the expert outputs (transformers' Mixtral,
   * DeepSeek-V2/V3, GLM-4-MoE, ERNIE 4.5 MoE: softmax or sigmoid in fp32, not cast back), so transformers' grouped-GEMM
   * experts weight, unsort and sum their outputs in fp32 (shared/time/kernels/moeRouting.ts). Undefined = false: cast
   * to the activation dtype (Qwen2/Qwen3-MoE, OLMoE, Granite-MoE) or an engine's own routing.
   */
  readonly routerWeightsFp32?: boolean;
}

/**
 * Multi-head latent attention (DeepSeek-V2/V3, Kimi K2; DeepSeek-V2 report §2.1): queries from a low-rank latent
 * (or straight from the hidden state), keys and values from one shared latent of kvLoraRank plus a decoupled rotary key
 * of qkRopeHeadDim shared by all heads. Per head, queries and keys are qkNopeHeadDim + qkRopeHeadDim wide and values
 * vHeadDim (transformers DeepseekV3Attention; Megatron-LM megatron/core/transformer/multi_latent_attention.py).
 */
export interface MlaSpec {
  /** Query compression rank (`q_lora_rank`, `--q-lora-rank`); 0 when queries are projected from the hidden state. */
  readonly qLoraRank: number;
  /** Key/value compression rank (`kv_lora_rank`, `--kv-lora-rank`). */
  readonly kvLoraRank: number;
  /** Per-head query/key width without rotary positions (`qk_nope_head_dim`, Megatron `--qk-head-dim`). */
  readonly qkNopeHeadDim: number;
  /** Per-head rotary query/key width (`qk_rope_head_dim`, Megatron `--qk-pos-emb-head-dim`); the key's is shared. */
  readonly qkRopeHeadDim: number;
  /** Per-head value width (`v_head_dim`, `--v-head-dim`). */
  readonly vHeadDim: number;
}

/** The shape of a Gated DeltaNet layer (Qwen3-Next / Qwen3.5 config.json `linear_*` keys). */
export interface LinearAttentionSpec {
  /** How many of the model's layers are linear attention (the others are softmax attention). */
  readonly layers: number;
  /** Query/key heads and value heads (`linear_num_key_heads`, `linear_num_value_heads`). */
  readonly keyHeads: number;
  readonly valueHeads: number;
  /** Widths of one key and one value head (`linear_key_head_dim`, `linear_value_head_dim`). */
  readonly keyHeadDim: number;
  readonly valueHeadDim: number;
  /** Taps of the depthwise causal convolution over q, k and v (`linear_conv_kernel_dim`). */
  readonly convKernel: number;
  /**
   * The mixer projects q/k/v, z, β and the decay in four linears (Qwen3.5's in_proj_qkv, in_proj_z, in_proj_b,
   * in_proj_a) rather than two interleaved ones (Qwen3-Next's in_proj_qkvz, in_proj_ba): the same weights, other copies.
   */
  readonly splitProjections?: boolean;
}

export type NormKind = 'layernorm' | 'rmsnorm';
export type PositionKind = 'rotary' | 'learned' | 'alibi' | 'none';
export type AttnBias = 'none' | 'qkv' | 'all';

/** A dense or MoE decoder-only transformer. */
export interface ModelSpec {
  /** Display name, e.g. "Llama-3.1-8B". */
  readonly name: string;
  readonly layers: number;
  readonly hiddenSize: number;
  /** Query heads (a). */
  readonly heads: number;
  /** Key/value heads (MHA: = heads, GQA: fewer, MQA: 1). */
  readonly kvHeads: number;
  /** Head dimension; usually hiddenSize / heads, explicit in Qwen3, Gemma, Mistral-Nemo. */
  readonly headDim: number;
  /** Intermediate size of the dense MLP. */
  readonly ffnSize: number;
  /** Gated MLP (SwiGLU/GeGLU: 3 matrices) or plain (2 matrices). */
  readonly gatedMlp: boolean;
  /** Bias on attention projections: none, q/k/v only (Qwen2), or all four. */
  readonly attnBias: AttnBias;
  /** Bias on MLP projections. */
  readonly mlpBias: boolean;
  /** Input embedding and LM head share one matrix. */
  readonly tiedEmbeddings: boolean;
  readonly positions: PositionKind;
  /** Positions with learned embeddings (only used when positions = 'learned'). */
  readonly maxPositions: number;
  readonly norm: NormKind;
  /** RMSNorm on q and k (Qwen3: per head). */
  readonly qkNorm: boolean;
  /**
   * What the q/k norms span: each head (Qwen3, Gemma 3, GLM-4.5; undefined) or the whole projection, heads·d for q and
   * kv-heads·d for k (OLMo 2, OLMoE: transformers modeling_olmo2.py q_norm/k_norm). Only their weights differ.
   */
  readonly qkNormWidth?: 'projection';
  /**
   * Each block also normalises its attention and MLP outputs before their residual adds: four norms a block (Gemma 2
   * and 3: transformers modeling_gemma2.py/modeling_gemma3.py post_attention_layernorm, pre_feedforward_layernorm,
   * post_feedforward_layernorm beside input_layernorm). Undefined = two.
   */
  readonly sandwichNorms?: boolean;
  /**
   * false: the LayerNorms have no bias (MPT with `no_bias`: llm-foundry's MPTModel removes every module's bias, and
   * transformers' MptBlock sets `norm_1.bias = None`), h weights a norm instead of 2h. Undefined = biased LayerNorms.
   */
  readonly normBias?: false;
  /**
   * The RMSNorm stays fp32 to its end: it multiplies the fp32 normalised tensor by the fp32 scale (1 + w) and casts
   * after (transformers GemmaRMSNorm, Gemma 1–3), so it keeps an fp32 input and an fp32 normalised output whatever the
   * stream's dtype, where Llama's casts before the scale. Undefined = Llama's.
   */
  readonly normFp32?: boolean;
  /**
   * Attention scores pass through cap·tanh(scores / cap) before the softmax (Gemma 2 `attn_logit_softcapping`, default
   * 50): eager attention keeps tanh's output, one more score-sized tensor a layer; FlashAttention-2 caps in its kernel.
   */
  readonly attnLogitSoftcap?: boolean;
  /**
   * The logits pass through cap·tanh(logits / cap) before the loss (Gemma 2 `final_logit_softcapping`, default 30):
   * tanh's output, one more logits-sized tensor, stays until the backward (transformers Gemma2ForCausalLM.forward).
   */
  readonly finalLogitSoftcap?: boolean;
  /**
   * transformers has no SDPA attention for the model (Gemma 2 in 5.24: Gemma2PreTrainedModel does not support it), so
   * its default attention is eager; FlashAttention only when the config names flash_attention_2. Undefined = SDPA.
   */
  readonly noSdpa?: boolean;
  /**
   * The block's norms run in the 16-bit compute dtype and save only their 16-bit input and statistics (MPT's
   * low_precision_layernorm, llmfoundry/models/layers/norm.py LPLayerNorm: autocast off, input and weight downcast),
   * not the fp32 copy autocast makes for layer_norm. Undefined = false.
   */
  readonly lowPrecisionNorm?: boolean;
  /**
   * Attention sinks: a per-head offset in the softmax's denominator, learned (gpt-oss: transformers modeling_gpt_oss.py
   * GptOssAttention `sinks`; Megatron `--softmax-type learnable`) or fixed (`off-by-one`). Undefined = plain softmax.
   */
  readonly attentionSinks?: boolean;
  /**
   * Dropout is active (attention/hidden dropout > 0): activations then keep 1-byte masks (Korthikanti et al. 2022).
   * Undefined = true (GPT/Megatron default 0.1); Llama-family configs have 0.
   */
  readonly dropout?: boolean;
  /**
   * Multi-token prediction modules D (Megatron `--mtp-num-layers`, Megatron-Bridge `mtp_num_layers`; DeepSeek-V3 §2.2,
   * megatron/core/transformer/multi_token_prediction.py): each adds two norms, a 2h → h projection, one transformer
   * layer of the last decoder layer's kind, a final norm and another pass through the shared output layer with its own
   * loss, all on the last pipeline stage, which also keeps a copy of the embedding (shared/model/mtp.ts). Undefined = 0.
   */
  readonly mtpLayers?: number;
  /** Vocabulary size as in the tokenizer / config. */
  readonly vocabSize: number;
  /**
   * Megatron pads the vocabulary to a multiple of `vocabPadMultiple · tp` (`--make-vocab-size-divisible-by`, default 128).
   * 0 or undefined means no padding (Hugging Face).
   */
  readonly vocabPadMultiple?: number;
  /** Present for mixture-of-experts models. */
  readonly moe?: MoeSpec;
  /**
   * Present for multi-head latent attention: heads = kvHeads, headDim = the query/key head width
   * (qkNopeHeadDim + qkRopeHeadDim), and the widths here replace the q/k/v projections (shared/model/mla.ts).
   */
  readonly mla?: MlaSpec;
  /**
   * Gated DeltaNet linear-attention layers (Qwen3-Next, Qwen3.5: transformers Qwen3NextGatedDeltaNet; Yang, Kautz and
   * Hatamizadeh 2025): `layers` of the model's layers replace softmax attention with the gated delta rule. Their
   * parameters are counted as such (shared/model/linearAttention.ts), their activations as transformers saves them
   * (shared/memory/gatedDeltaNetSaves.ts), their step time as FLA's kernel and transformers' code around it
   * (shared/time/kernels/gatedDeltaNet.ts); a warning says what that rests on.
   */
  readonly linearAttention?: LinearAttentionSpec;
  /**
   * A sigmoid output gate on softmax attention (Qwen3-Next, Qwen3.5): the query projection also makes heads·headDim gate
   * values (transformers Qwen3NextAttention `q_proj` of 2·a·d outputs). Undefined = false.
   */
  readonly attentionOutputGate?: boolean;
  /**
   * Sliding-window attention (Mistral v0.1, Gemma 2/3, gpt-oss, Phi-3): `slidingLayers` of the layers let each query
   * see only the last `window` keys (itself included), or its own chunk (Llama 4); the others attend to the whole
   * causal context.
   */
  readonly slidingWindow?: {
    readonly window: number;
    readonly slidingLayers: number;
    /**
     * Chunked attention (Llama 4 `attention_chunk_size`): a query sees the keys of its own chunk of `window` tokens up
     * to itself, not the last `window` keys.
     */
    readonly chunked?: boolean;
  };
}
