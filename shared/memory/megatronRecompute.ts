/**
 * What Megatron-core's selective recomputation does not keep, module by module (`--recompute-modules`;
 * TransformerConfig.recompute_modules, megatron/core/transformer/transformer_layer.py, mlp.py, moe/experts.py,
 * multi_latent_attention.py and ssm/gated_delta_net at Megatron-LM d98e8a64), per layer of one kind on one rank, for
 * ONE micro-batch: Korthikanti et al.'s counts (activations.ts) less these. "Output-discarding" modules (layernorm,
 * moe_act, mla_up_proj, gdn_norm_out: tensor_parallel.CheckpointWithoutOutput) run without grad, keep their inputs and
 * free their outputs once their consumers saved them; "normal" ones (mlp, moe, shared_experts:
 * tensor_parallel.checkpoint) keep their inputs only. Core attention's scores: attentionScoreBytes. Bytes under
 * Transformer Engine FP8 follow Korthikanti's FP8 count: a GEMM input kept as its 1-byte cast is freed as one byte.
 */
import type { ActivationShape } from './activations';
import type { MegatronRecomputeModule } from '../plan/types';
import { moduleBit } from '../plan/recomputeModules';
import { megatronMlaUpProjBytes } from './mlaSaves';
import { linearAttentionRankWidths } from '../model/linearAttention';

const has = (mask: number, m: MegatronRecomputeModule) => (mask & moduleBit(m)) !== 0;

/** Bytes of a GEMM input Korthikanti's count keeps (its 1-byte cast under TE FP8). */
const gemmInput = (x: ActivationShape) => (x.fp8Inputs ? 1 : x.actBytes);

/** An MLP's sharded saves: the gated up outputs (or the plain one) and the down projection's input, over `ffn` columns. */
function mlpBytes(x: ActivationShape, ffn: number): number {
  return (((x.gated ? 2 : 1) * x.actBytes + gemmInput(x)) * x.sLocal * x.b * ffn) / x.tp;
}

/**
 * The MLP side of one layer (dense, or MoE with `moe`) not kept under `mask`:
 * - layernorm: the norm outputs Megatron keeps outside Transformer Engine's fused LayerNormLinear — a MoE layer's
 *   pre-MLP norm (the router's and dispatcher's input) and, under MLA, the input norm (the down projections' input,
 *   the MLA spec's separate TENorm): gemmInput·sbh ÷t with SP each; a dense layer's norms are fused (IdentityOp) and
 *   recompute nothing;
 * - mlp (dense layers): the MLP with its fused pre-MLP norm is checkpointed: its saves and the norm's output;
 * - moe (MoE layers): the MoE layer after its norm: every expert's and shared expert's saves;
 * - moe_act (MoE layers): the routed experts' activation output, the down projection's input, gemmInput·sb·f_routed/t;
 * - shared_experts (MoE layers): the shared experts' saves.
 */
export function megatronMlpRecomputedBytes(x: ActivationShape, ffn: number, moe: boolean, mask: number): number {
  if (mask === 0) return 0;
  const sbh = (x.sLocal * x.b * x.h) / (x.sp ? x.tp : 1);
  let out = 0;
  if (has(mask, 'layernorm')) out += ((moe ? 1 : 0) + (x.mla ? 1 : 0)) * gemmInput(x) * sbh;
  if (!moe) return out + (has(mask, 'mlp') ? mlpBytes(x, ffn) + gemmInput(x) * sbh : 0);
  if (has(mask, 'moe')) return out + mlpBytes(x, ffn);
  const shared = Math.min(ffn, x.sharedFfn ?? 0);
  if (has(mask, 'moe_act')) out += (gemmInput(x) * x.sLocal * x.b * (ffn - shared)) / x.tp;
  if (has(mask, 'shared_experts')) out += mlpBytes(x, shared);
  return out;
}

/** A softmax-attention mixer's bytes not kept: MLA's up projections with `mla_up_proj` (mlaSaves.ts). */
export function megatronAttentionRecomputedBytes(x: ActivationShape, mask: number): number {
  return x.mla && has(mask, 'mla_up_proj') ? megatronMlaUpProjBytes(x, x.mla) : 0;
}

/**
 * A Gated DeltaNet mixer's bytes not kept with `gdn_norm_out` (ssm/gated_delta_net: the gated norm and the all-to-all
 * back under CheckpointWithoutOutput, keeping the rule's output and the gate): the norm's fp32 rsigma, its output and
 * out_proj's input, sb·(4·H_v + B·v + gemmInput·v).
 */
export function megatronGatedDeltaNetRecomputedBytes(x: ActivationShape, mask: number): number {
  const la = x.linearAttention;
  if (!la || !has(mask, 'gdn_norm_out')) return 0;
  const { hv, v } = linearAttentionRankWidths(la, x.tp);
  return x.sLocal * x.b * (4 * hv + x.actBytes * v + gemmInput(x) * v);
}
