/**
 * What Megatron-core's selective recomputation reruns in the backward, module by module (`--recompute-modules`;
 * megatron/core/transformer/transformer_layer.py, attention.py, multi_latent_attention.py, moe/experts.py and
 * ssm/gated_delta_net at Megatron-LM d98e8a64; what each keeps: shared/memory/megatronRecompute.ts), for one layer of
 * one kind on one rank: each module's forward kernels once more, timed as layerCost times them.
 * - core_attn: the core attention forward of the softmax layers (eager: its batched GEMMs and softmax; fused: the
 *   flash kernel's forward — Megatron checkpoints TEDotProductAttention as well, attention.py
 *   `_checkpointed_attention_forward`, its own warning notwithstanding);
 * - mla_up_proj: MLA's query and key/value up projections (their norms and RoPE are not counted);
 * - mlp: a dense layer's MLP GEMMs and activation; moe: a MoE layer's router, shared and expert GEMMs, their activation,
 *   the routing's memory-bound work, the forward's dispatch and combine and its host work; shared_experts: the shared
 *   experts' GEMMs and activation; moe_act: the routed experts' activation;
 * - layernorm: a MoE layer's pre-MLP norm and MLA's input norm, each reading its input and writing its output;
 * - gdn_norm_out: a Gated DeltaNet layer's gated norm (Transformer Engine's RMSNorm and the compiled gate multiply).
 * The recomputed FLOPs (for the hardware FLOPs utilisation) are those of the rerun GEMMs.
 */
import type { Plan } from '../plan/types';
import type { KernelTimers, LayerShape, Linear } from './layerCost';
import { emptyParts, type Parts } from './parts';
import { activationBytes } from './kernels/elementwise';
import { moduleBit, moduleMaskOf } from '../plan/recomputeModules';
import type { MegatronRecomputeModule } from '../plan/types';
import { linearAttentionRankWidths } from '../model/linearAttention';

/** What a layer's cost gives the recomputation: its linears with their forward seconds, and its other forward terms. */
export interface LayerForward {
  readonly list: readonly Linear[];
  readonly gemmF: readonly number[];
  /** Core attention forward seconds of the softmax layers' share (fused kernel or eager GEMMs and softmax). */
  readonly softmaxAttention: number;
  /** The forward's exposed dispatch and combine, and its host work (MoE layers). */
  readonly dispatch: number;
  readonly host: number;
  /** The routing's memory-bound forward bytes (MoE layers). */
  readonly routingBytes: number;
  /** Share of Gated DeltaNet layers. */
  readonly gdnShare: number;
}

/** FLOPs of one linear's forward GEMMs: 2·M·ΣN·K × count. */
function linearFlops(l: Linear): number {
  const widths = typeof l[1] === 'number' ? l[1] : l[1].reduce((a, b) => a + b, 0);
  return 2 * l[0] * widths * l[2] * l[4];
}

/** The recomputed parts and GEMM FLOPs of one layer under the plan's module list. */
export function megatronSelectiveParts(plan: Plan, s: LayerShape, t: KernelTimers, f: LayerForward): { parts: Parts; flops: number } {
  const parts = emptyParts();
  let flops = 0;
  const mask = moduleMaskOf(plan.training.recomputeModules);
  const has = (m: MegatronRecomputeModule) => (mask & moduleBit(m)) !== 0;
  const mod = plan.model;
  const T = s.tokens, B = s.actBytes, n = f.gemmF.length;
  const rerun = (i: number) => {
    if (i < 0 || i >= n) return;
    parts.gemm += f.gemmF[i];
    flops += linearFlops(f.list[i]);
  };
  if (has('core_attn')) parts.attention += f.softmaxAttention;
  if (mod.mla && has('mla_up_proj')) {
    // mlaLinears: the query projection first, the key/value up projection last of the attention's (after q_down, kv_down).
    rerun(0);
    rerun(mod.mla.qLoraRank > 0 ? 4 : 3);
  }
  const norms = (s.moe ? 1 : 0) + (mod.mla ? 1 : 0);
  if (has('layernorm') && norms > 0) parts.elementwise += t.hbm(norms * 2 * B * T * mod.hiddenSize);
  const moe = s.moe;
  if (!moe) {
    if (has('mlp')) {
      rerun(n - 2);
      rerun(n - 1);
      parts.elementwise += t.hbm(activationBytes(t.fusion, mod.gatedMlp, T * s.ffn, B, 'fwd'));
    }
  } else {
    // layerCost's MoE list: the router, the shared experts' pair when there are shared experts, the experts' pair.
    const shared = moe.sharedFfn > 0;
    const routed = moe.tokensPerExpert * moe.experts * moe.expertFfn;
    if (has('moe')) {
      for (let i = n - (shared ? 5 : 3); i < n; i++) rerun(i);
      parts.elementwise += t.hbm(activationBytes(t.fusion, mod.gatedMlp, routed + T * moe.sharedFfn, B, 'fwd') + f.routingBytes);
      parts.comm += f.dispatch;
      parts.host += f.host;
    } else {
      if (has('moe_act')) parts.elementwise += t.hbm(activationBytes(t.fusion, mod.gatedMlp, routed, B, 'fwd'));
      if (has('shared_experts') && shared) {
        rerun(n - 4);
        rerun(n - 3);
        parts.elementwise += t.hbm(activationBytes(t.fusion, mod.gatedMlp, T * moe.sharedFfn, B, 'fwd'));
      }
    }
  }
  const la = mod.mla ? undefined : mod.linearAttention;
  if (la && f.gdnShare > 0 && has('gdn_norm_out')) {
    // Transformer Engine's RMSNorm reads the rule's output and writes its own with an fp32 rsigma per row; the gate
    // multiply reads it and the gate and writes the product: 5B·v + 4·H_v a token.
    const { v, hv } = linearAttentionRankWidths(la, s.tp);
    parts.elementwise += f.gdnShare * t.hbm(T * (5 * B * v + 4 * hv));
  }
  return { parts, flops };
}
