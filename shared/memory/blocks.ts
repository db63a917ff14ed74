/**
 * What one transformer block keeps for its backward, per model implementation, for ONE micro-batch on one rank (bytes).
 * Megatron-core with Transformer Engine keeps Korthikanti et al.'s fused-kernel counts (activations.ts); eager PyTorch
 * models keep what their autograd graph saves, which these functions count tensor by tensor from the models' code
 * (docs/engine-memory.md#what-a-block-saves). T = b·s/cp tokens on the rank; widths q = a·d, kv = g·d; t = TP degree.
 */
import type { ActivationShape } from './activations';
import type { MoeSpec } from '../plan/types';
import { loraAdapterBytesPerToken, loraWidthsOf } from './loraSaves';
import { hfMlaAttentionBytes, mlaAttentionOutputWidth, titanMlaAttentionBytes, titanMlaMatmulWidths } from './mlaSaves';
import { gatedDeltaNetSavedBytesPerToken } from './gatedDeltaNetSaves';
import { linearAttentionFraction } from '../model/linearAttention';

/** Bytes of the rank's query width (a·d/t) and of its K/V as saved by attention (repeated to the query heads or not). */
function widths(x: ActivationShape, repeatKv: boolean): { q: number; kv: number } {
  const q = (x.heads * x.headDim) / x.tp;
  const kv = (x.kvHeadsEff * x.headDim) / x.tp;
  return { q, kv: repeatKv && x.kvHeadsEff < x.heads ? q : kv };
}

/**
 * Attention probabilities an eager (unfused) attention keeps, per query head on the rank: the fp32 softmax output
 * (softmax saves its output) and its cast to the compute dtype that the second matmul saves (none in fp32), plus
 * `maskBytes` of a materialised boolean causal mask. `(4 + B)·b·(a/t)·s·s_k` (transformers eager_attention_forward;
 * the oracle's eager kernel, probe/oracle/attention.py).
 */
export function eagerScoreBytes(x: ActivationShape, maskBytes = 0): number {
  const probs = (4 + (x.actBytes < 4 ? x.actBytes : 0)) * x.b * (x.heads / x.tp) * x.sLocal * x.sKeys;
  return probs + maskBytes * x.sLocal * x.sKeys;
}

/**
 * Gemma 2's capped scores in eager attention (modeling_gemma2.py eager_attention_forward: scores / cap, tanh, × cap):
 * tanh keeps its output, B·b·(a/t)·s·s_k in the compute dtype; FlashAttention-2 caps inside its kernel and keeps nothing.
 */
export function softcapScoreBytes(x: ActivationShape): number {
  return x.attnSoftcap ? x.actBytes * x.b * (x.heads / x.tp) * x.sLocal * x.sKeys : 0;
}

/**
 * What a transformers sliding layer adds under SDPA when it passes the window's mask (transformers
 * integrations/sdpa_attention.py; torch's SDPA dispatch on CUDA): FlashAttention takes no mask, so the memory-efficient
 * kernel runs and keeps the mask as the additive bias SDPA converts it to, in the compute dtype (one b·1·s·s_k tensor a
 * layer, aten convert_boolean_attn_mask); transformers repeats K/V to the query heads first (use_gqa_in_sdpa is false
 * with a mask), a copy kept in their place when each KV head serves several query heads across more than one KV head
 * (with one KV head the repeat is a view of it). Measured on the memory-efficient kernel's meta function in the oracle
 * (probe/oracle/attention.py `_masked_efficient`).
 */
export function maskedSdpaBytes(x: ActivationShape): number {
  const B = x.actBytes, T = x.sLocal * x.b;
  const w = widths(x, false);
  const repeated = x.kvHeadsEff > 1 && x.kvHeadsEff < x.heads ? 2 * B * T * (w.q - w.kv) : 0;
  return B * x.b * x.sLocal * x.sKeys + repeated;
}

/** FlashAttention's fp32 log-sum-exp, one value per query head and token: 4·b·(a/t)·s (Dao et al. 2022). */
export function flashStatsBytes(x: ActivationShape): number {
  return (4 * x.b * x.heads * x.sLocal) / x.tp;
}

/**
 * A torchtitan Llama block without recomputation (torchtitan/models/llama3/model/model.py, TransformerBlock and
 * Attention): the two fused RMSNorms save their inputs and an fp32 rstd per token (aten::_fused_rms_norm); wq/wk/wv and
 * w1/w3 save their input (the norm output; all-gathered whole by PrepareModuleInput under TP); SDPA saves q, the K/V
 * expanded by `repeat_kv` and its output (which wo takes as it is) and the log-sum-exp; the SwiGLU keeps w1's output,
 * silu's output, w3's output and their product (w2's input). The RoPE product saves only the frequency table.
 * B·[2T·h/t_sp + 2T·h + T·(2q + 2kv_rep)/t + 4T·f/t] + 8T/t_sp + lse (+ the q/k norms' inputs).
 * Compiled (`[compile] enable = true`, torchtitan compiles each block): AOTAutograd's min-cut partitioner
 * (torch/_functorch/partitioners.py `min_cut_rematerialization_partition`, Inductor's default) recomputes silu's
 * output from w1's in the backward, a pointwise op fused into the backward's kernels, but keeps the product, which
 * only the w2 matmul's backward reads and which the partitioner does not recompute for a matmul: 3T·f/t for the MLP.
 * Everything else is saved as in eager (the matmul and SDPA inputs and outputs, the norms' inputs and rstd).
 * An eager norm that upcasts explicitly (torchtune/modules/rms_norm.py: x.float(), then × rsqrt, cast back, × scale)
 * saves its fp32 input, the rsqrt and the unscaled output for the scale's multiply: 2·(4 + B)·T·h + 8T for the two
 * norms (measured on torchtune's Llama 3.2 3B layer with fake tensors, commit 1814feb17: 22.68 b·s·h·2 per layer,
 * against 18.68 with the fused norm's inputs). Compiled, Inductor fuses the norm and saves what the fused one does.
 * DeepSeek-V3's multi-head latent attention saves its latents and head tensors instead of q/k/v (mlaSaves.ts).
 */
export function titanBlockBytes(x: ActivationShape, ffn = x.ffn): number {
  const B = x.actBytes, T = x.sLocal * x.b, sp = x.sp ? x.tp : 1;
  const w = widths(x, true);
  const norms = ((x.normUpcast ? 2 * (4 + B) * T * x.h : 2 * B * T * x.h) + 2 * 4 * T) / sp;
  // Under LoRA the frozen linears keep no input for a weight gradient, and w2's input (the product) goes too.
  const frozen = frozenBase(x);
  const linearInputs = frozen ? 0 : 2 * B * T * x.h;
  const qkNorm = x.qkNorm ? B * T * ((x.heads + x.kvHeadsEff) * x.headDim) / x.tp : 0;
  const saved = x.mla ? titanMlaAttentionBytes(x, x.mla) : B * T * (2 * w.q + 2 * w.kv);
  const attention = saved + (x.flash ? flashStatsBytes(x) : eagerScoreBytes(x, 1));
  const mlp = ((x.gated ? (x.compiled ? 3 : 4) : 2) - (frozen ? 1 : 0)) * B * T * ffn / x.tp;
  return norms + linearInputs + qkNorm + attention + mlp + loraBytes(x, ffn);
}

/** True when the block's linears are LoRA's frozen base and keep no inputs (not bitsandbytes' 4-bit linears). */
function frozenBase(x: ActivationShape): boolean {
  return !!x.loraSaves && !x.loraSaves.baseSavesInputs;
}

/** What the LoRA adapters of one block save (shared/memory/loraSaves.ts), for the rank's T tokens. */
function loraBytes(x: ActivationShape, ffn: number): number {
  if (!x.loraSaves) return 0;
  return x.sLocal * x.b * loraAdapterBytesPerToken(x.loraSaves, loraWidthsOf(x, ffn), x.actBytes);
}

/**
 * torchtitan's per-op selective checkpointing (`selective_ac_option = "op"`, torchtitan/distributed/
 * activation_checkpoint.py `_custom_policy`): the block's input, the outputs of every second matmul (wq, wv, w1, w2 in
 * call order), SDPA's output and statistics; everything else is recomputed. B·[T·h/t_sp + T·(q + kv + f)/t + T·h + T·q/t] + lse.
 * Under MLA the matmuls are wq_a, wq_b (or wq), wkv_a, wkv_b, wo, w1, w3, w2: the odd ones of that order are kept.
 */
export function titanOpSelectiveBytes(x: ActivationShape, ffn = x.ffn): number {
  const B = x.actBytes, T = x.sLocal * x.b, sp = x.sp ? x.tp : 1;
  if (x.mla) {
    // Every second matmul output from the first, in the MLA block's call order (mlaSaves.ts titanMlaMatmulWidths).
    const kept = titanMlaMatmulWidths(x, x.mla, ffn).reduce((sum, n, i) => sum + (i % 2 === 0 ? n : 0), 0);
    const out = mlaAttentionOutputWidth(x, x.mla);
    return (B * T * x.h) / sp + B * T * (kept + out) + (x.flash ? flashStatsBytes(x) : eagerScoreBytes(x, 1));
  }
  const w = widths(x, false);
  const mm = B * T * (w.q + w.kv + ffn / x.tp + x.h);
  return (B * T * x.h) / sp + mm + B * T * w.q + (x.flash ? flashStatsBytes(x) : eagerScoreBytes(x, 1));
}

/**
 * Bytes a transformers RMSNorm keeps per element of its input (with S the input's bytes): LlamaRMSNorm its fp32 input
 * (the input itself, or its fp32 copy) and the normalised tensor cast back for the scale's multiply, 4 + S; GemmaRMSNorm
 * the fp32 input and the fp32 normalised tensor the fp32 scale (1 + w) multiplies, 8 (transformers 5.24
 * modeling_llama.py LlamaRMSNorm, modeling_gemma3.py Gemma3RMSNorm). Each also keeps an fp32 rsqrt per row. Liger's
 * RMSNorm keeps its input as it is and the fp32 rstd, S (liger_kernel/ops/rms_norm.py: save_for_backward(X, W, RSTD)).
 */
export function hfNormSavedBytes(x: Pick<ActivationShape, 'normFp32' | 'ligerNorm'>, S: number): number {
  return x.ligerNorm ? S : x.normFp32 ? 8 : 4 + S;
}

/**
 * A transformers decoder layer without recomputation (transformers models/llama/modeling_llama.py: LlamaRMSNorm,
 * apply_rotary_pos_emb, sdpa/eager attention, LlamaMLP), with S = bytes of the residual stream (4 under autocast with
 * fp32 weights, else the compute dtype) and B = compute bytes:
 * - each eager RMSNorm saves its fp32 input (the input itself, or its fp32 copy), the normalised tensor in the input
 *   dtype and the rsqrt: (4 + S)·T·h + 4T, twice (Gemma's: the normalised tensor in fp32, 8·T·h + 4T, four times
 *   in Gemma 2 and 3, whose blocks also norm the attention and MLP outputs); a low-precision norm (MPT's LPLayerNorm, layer_norm run in the
 *   16-bit dtype with autocast off) saves its 16-bit input and fp32 mean and rstd: B·T·h + 8T, twice;
 * - the linears' inputs: under autocast q/k/v_proj and gate/up_proj each save their own bf16 cast of the fp32 norm
 *   output (5·B·T·h); otherwise the two norm outputs (2·S·T·h);
 * - SDPA (FlashAttention with native grouped K/V heads; memory-efficient attention in fp32, which repeats them): q, k,
 *   v and the output (which o_proj takes as it is), B·T·(2q + 2kv) + lse; eager attention: K/V repeated, the probabilities;
 * - the MLP: gate output, activation output, up output and the product (4·B·T·f; 2·B·T·f for a plain MLP); Liger's
 *   SwiGLU/GeGLU keeps the gate and up outputs and makes the product (liger_kernel/ops/swiglu.py LigerSiLUMulFunction:
 *   save_for_backward(a, b)), 3·B·T·f;
 * - under autocast, the 16-bit casts of the layer's weights (autocast's weight cache; saved by each linear);
 * - multi-head latent attention (DeepseekV3Attention) saves its latents and head tensors instead (mlaSaves.ts).
 */
export function hfBlockBytes(x: ActivationShape, ffn = x.ffn, largest = false): number {
  const B = x.actBytes, S = x.streamBytes ?? B, T = x.sLocal * x.b;
  const amp = (x.autocastWeightBytes ?? 0) > 0 || S > B;
  const w = widths(x, !x.flash || B === 4);
  // Gemma 2/3 norm four times a block, each norm keeping its fp32 input and fp32 normalised output (hfNormSavedBytes).
  const n = x.sandwichNorms ? 4 : 2;
  const norms = x.lowPrecisionNorm ? n * (B * T * x.h + 8 * T) : n * (hfNormSavedBytes(x, S) * T * x.h + 4 * T);
  // Under MLA two linears take the attention norm's output (q_a_proj or q_proj, kv_a_proj_with_mqa), not three.
  const frozen = frozenBase(x);
  const linearInputs = frozen ? 0 : (amp ? (x.mla ? 4 : 5) * B : 2 * S) * T * x.h;
  const qkNorm = x.qkNorm ? hfNormSavedBytes(x, S) * T * (x.heads + x.kvHeadsEff) * x.headDim : 0;
  const saved = x.mla ? hfMlaAttentionBytes(x, x.mla) : B * T * (2 * w.q + 2 * w.kv);
  // An output gate (Qwen3NextAttention: attn_output * sigmoid(gate)) keeps sigmoid's output and the product, o_proj's input.
  const gate = x.outputGate ? (frozen ? 1 : 2) * B * T * w.q : 0;
  const masked = x.flash && x.maskedSliding ? (largest ? 1 : x.maskedSliding) * maskedSdpaBytes(x) : 0;
  const attention = qkNorm + saved + (x.flash ? flashStatsBytes(x) + masked : eagerScoreBytes(x) + softcapScoreBytes(x)) + gate;
  const mixer = mixerBytes(x, attention, T, S > B, frozen, largest);
  const mlp = ((x.gated ? (x.ligerGlu ? 3 : 4) : 2) - (frozen ? 1 : 0)) * B * T * ffn / x.tp;
  return norms + linearInputs + mixer + mlp + (x.autocastWeightBytes ?? 0) + loraBytes(x, ffn);
}

/**
 * The token mixer's saves of an eager transformers block: softmax attention's, or over a model with Gated DeltaNet
 * layers the mean over its layers (gatedDeltaNetSaves.ts for theirs), or the larger kind with `largest`.
 */
function mixerBytes(x: ActivationShape, attention: number, T: number, fp32Weights: boolean, frozen: boolean, largest: boolean): number {
  const la = x.linearAttention;
  const f = linearAttentionFraction({ layers: x.layers ?? 0, linearAttention: la });
  if (!la || f <= 0) return attention;
  const gdn = T * gatedDeltaNetSavedBytesPerToken(la, x.actBytes, x.tp, fp32Weights, frozen);
  return largest ? Math.max(attention, gdn) : (1 - f) * attention + f * gdn;
}

/**
 * What transformers' grouped-GEMM experts (transformers 5 integrations/moe.py `grouped_mm_experts_forward`) save for
 * backward per MoE layer beyond the MLP's 4·B·S·f (gate_up output, activation output, product): the tokens gathered in
 * expert order, which the gate_up GEMM's weight gradient reads, and the down GEMM's output, which the router
 * probabilities' gradient reads, 2·B·S·h for S = T·k routed copies; the router's fp32 probabilities (4·T·E), its top-k
 * indices and values and the sort's three int64 index vectors (S·(8 + 4 + 24)), the per-copy weights in the router's
 * dtype (S·2, or S·4 where they stay fp32: model.moe.routerWeightsFp32) and the top-k sums (4·T). With the experts
 * frozen (LoRA) the gathered tokens are not kept (no weight gradient reads them): B·S·h. Measured with torch's
 * saved-tensor hooks on Qwen3-MoE's and Mixtral's blocks (probe/oracle/moe_traffic.py); the oracle grid's HF Mixtral
 * rows check it in the layer's activations (validation/torch/oracleGrid.ts).
 */
export function hfMoeRoutingSaves(moe: Pick<MoeSpec, 'topK' | 'experts' | 'routerWeightsFp32'>, tokens: number, hidden: number, B: number, frozen = false): number {
  const S = tokens * Math.max(1, moe.topK);
  return (frozen ? 1 : 2) * B * S * hidden + S * (36 + (moe.routerWeightsFp32 ? 4 : 2)) + 4 * tokens * moe.experts + 4 * tokens;
}

/**
 * The input a checkpointed block keeps (torch.utils.checkpoint, non-reentrant: the block's inputs): B·T·h, divided by t
 * under sequence parallelism; the fp32 residual stream under autocast (transformers with fp32 weights).
 */
export function blockInputBytes(x: ActivationShape): number {
  return ((x.streamBytes ?? x.actBytes) * x.sLocal * x.b * x.h) / (x.sp ? x.tp : 1);
}

/**
 * The largest set of tensors a checkpointed eager block's forward allocates and frees again (full recomputation: the
 * forward keeps only the block's input, so every intermediate is freed once its consumer ran). The MLP dominates; with
 * M = the MLP's input (the norm output, all-gathered whole under TP; in the residual dtype S plus its 16-bit cast under
 * autocast), F = B·T·f/t and H = B·T·h:
 * - at the gate's product, `w2(silu(w1(x)) * w3(x))` holds M, silu's output, w3's output and the product: M + 3F
 *   (w1's output is freed once silu ran); a plain MLP, M + 2F;
 * - at w2's output, M and the product are still held (M is the function's argument until it returns) with w2's output,
 *   H (a partial sum under TP); DTensor's reduce-scatter to a sequence shard (torchtitan's sequence parallelism,
 *   `Shard(1)` of a [b, s, h] tensor) first copies it into scatter order (funcol `reduce_scatter_tensor` chunks along
 *   dim 1 and concatenates) and then makes the shard, H + H/t more.
 * max of the two (torchtitan/models/llama3/model/model.py FeedForward; transformers LlamaMLP; torch/distributed/
 * _functional_collectives.py). Megatron's Transformer Engine blocks are not counted (0).
 */
export function blockForwardTransientBytes(x: ActivationShape, ffn = x.ffn): number {
  if (x.impl !== 'torchtitan' && x.impl !== 'hf') return 0;
  const B = x.actBytes, S = x.streamBytes ?? B, T = x.sLocal * x.b;
  const amp = (x.autocastWeightBytes ?? 0) > 0 || S > B;
  const mlpIn = S * T * x.h + (amp ? B * T * x.h : 0);
  const F = (B * T * ffn) / x.tp, H = B * T * x.h;
  const atProduct = mlpIn + (x.gated ? 3 : 2) * F;
  const scatterCopy = x.impl === 'torchtitan' && x.sp && x.tp > 1 ? H + H / x.tp : 0;
  const atOutput = mlpIn + F + H + scatterCopy;
  return Math.max(atProduct, atOutput);
}

/** The largest single tensor of that forward (the MLP's input, one MLP-width output or w2's output): B·T·max(h, f/t). */
export function blockForwardLargestBytes(x: ActivationShape, ffn = x.ffn): number {
  const T = x.sLocal * x.b;
  return Math.max((x.streamBytes ?? x.actBytes) * T * x.h, (x.actBytes * T * ffn) / x.tp);
}
