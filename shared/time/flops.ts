/**
 * Forward FLOPs of one micro-batch on one rank, by part. Convention: a multiply-add is 2 FLOPs and core attention counts
 * the full s×s score matrix (no causal halving), as in Narayanan et al. 2021 Eq. 3 and Korthikanti et al. 2022 App. A.
 * Backward = 2× forward for weight matmuls (input and weight gradients), recomputation = 1× forward of what is recomputed.
 */
import type { ModelSpec } from '../plan/types';
import { mlaWeights, qkHeadDim, vHeadDim } from '../model/mla';
import { localShare, slidingFraction } from './kernels/attention';

/** Per-rank split of the work: tokens of the micro-batch on this rank, full sequence, TP/ETP degrees. */
export interface FlopShape {
  /** b·s/cp tokens of one micro-batch on this rank. */
  readonly tokens: number;
  /** Full sequence length s (keys each query attends to). */
  readonly seqLen: number;
  readonly tp: number;
  readonly etp: number;
  /** Sequence parallelism with TP > 1 (MLA's whole down projections then see the T/tp tokens of the shard). */
  readonly sp?: boolean;
}

/**
 * Attention projections forward: 2·T·h·(a+2g)·d_h + 2·T·a·d_h·h, ÷tp (Narayanan et al. 2021: 8Bsh² for MHA). Under
 * multi-head latent attention, 2·T·(in·out) over its five projections (shared/model/mla.ts), the up and output
 * projections ÷tp and the down projections whole: Megatron runs them duplicated on the sequence-parallel shard, so
 * each rank multiplies its T/tp tokens with them under sequence parallelism and all T tokens without it (the same
 * terms as Megatron-LM training.py num_floating_point_operations for MLA, counted per rank).
 */
export function attentionProjFlops(m: ModelSpec, x: FlopShape): number {
  if (m.mla) {
    const w = mlaWeights(m.mla, m.hiddenSize, m.heads);
    return (2 * x.tokens * w.split) / x.tp + 2 * (x.sp ? x.tokens / x.tp : x.tokens) * w.replicated;
  }
  const q = m.heads * m.headDim;
  const kv = m.kvHeads * m.headDim;
  return (2 * x.tokens * m.hiddenSize * (q + 2 * kv) + 2 * x.tokens * q * m.hiddenSize) / x.tp;
}

/**
 * Core attention forward (QKᵀ and attention·V): 4·T·s·a·d_h, ÷tp (Narayanan et al. 2021: 4Bs²h per layer); with
 * query/key heads d_qk and value heads d_v wide (MLA), 2·T·s·a·(d_qk + d_v), ÷tp. A sliding window scales the
 * sliding layers' share by the keys the window leaves (kernels/attention.ts slidingWindowShare): the model's FLOPs,
 * whether or not the kernel skips the rest.
 */
export function coreAttentionFlops(m: ModelSpec, x: FlopShape): number {
  const sw = m.slidingWindow;
  const f = slidingFraction(m);
  const mix = sw ? 1 - f + f * localShare(x.seqLen, sw) : 1;
  return (2 * x.tokens * x.seqLen * m.heads * (qkHeadDim(m) + vHeadDim(m)) * mix) / x.tp;
}

/** Dense MLP forward: 2·T·h·f·(3 gated | 2 plain), ÷tp (Narayanan et al. 2021: 16Bsh² for f = 4h). */
export function denseMlpFlops(m: ModelSpec, ffn: number, x: FlopShape, split: number): number {
  return (2 * x.tokens * m.hiddenSize * ffn * (m.gatedMlp ? 3 : 2)) / split;
}

/** MoE layer forward: router 2·T·h·E + top-k experts 2·T·k·h·f_e·mats/etp + shared experts ÷tp (Fedus et al. 2022; active experts only). */
export function moeMlpFlops(m: ModelSpec, x: FlopShape): number {
  const moe = m.moe;
  if (!moe) return denseMlpFlops(m, m.ffnSize, x, x.tp);
  const router = 2 * x.tokens * m.hiddenSize * moe.experts;
  const routed = moe.topK * denseMlpFlops(m, moe.expertFfnSize, x, x.etp);
  const shared = moe.sharedExperts * denseMlpFlops(m, moe.sharedExpertFfnSize, x, x.tp);
  return router + routed + shared;
}

/** LM head forward: 2·T·h·V, ÷tp (Narayanan et al. 2021 Eq. 3 logit term 6BshV over forward + backward). */
export function lmHeadFlops(m: ModelSpec, x: FlopShape): number {
  return (2 * x.tokens * m.hiddenSize * m.vocabSize) / x.tp;
}

/** LoRA adapter forward on one projection: 2·T·r·(in + out), replicated over TP for simplicity (Hu et al. 2021). */
export function loraProjFlops(tokens: number, rank: number, dIn: number, dOut: number): number {
  return 2 * tokens * rank * (dIn + dOut);
}

/** Forward FLOPs of one dense or MoE transformer layer split into weight matmuls and core attention (no weights). */
export function layerForwardFlops(m: ModelSpec, moe: boolean, x: FlopShape): { weights: number; core: number } {
  const mlp = moe ? moeMlpFlops(m, x) : denseMlpFlops(m, m.ffnSize, x, x.tp);
  return { weights: attentionProjFlops(m, x) + mlp, core: coreAttentionFlops(m, x) };
}
