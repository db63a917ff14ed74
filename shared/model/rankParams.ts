/**
 * Parameters one rank holds, the one model memory, communication and step time all count with: how tensor, expert and
 * pipeline parallelism split each layer part (Megatron layout, Shoeybi et al. 2019, docs/formulas.md#parameters-per-rank), how many layers each pipeline stage holds, and where the embedding and LM head live.
 */
import { mtpModules, mtpOwnParams } from './mtp';
import { layerParams, normParams, paddedVocabSize } from './params';
import type { ModelSpec } from '../plan/types';

/**
 * KV heads one tensor-parallel rank holds: KV/TP when TP divides them; one when TP is a multiple of the KV heads (each
 * head replicated TP/KV times: Megatron `--num-query-groups` < TP, docs/framework-facts.md#kv-heads-under-tensor-parallelism); otherwise
 * ⌈KV/TP⌉.
 */
export function kvHeadsPerRank(kvHeads: number, tp: number): number {
  if (kvHeads % tp === 0) return kvHeads / tp;
  return tp % kvHeads === 0 ? 1 : Math.ceil(kvHeads / tp);
}

/** Query heads one tensor-parallel rank holds: ⌈a/TP⌉, at least one. */
export function qHeadsPerRank(heads: number, tp: number): number {
  return Math.max(1, Math.ceil(heads / tp));
}

/**
 * Layers of pipeline stage s: the explicit split, else an even split with the remainder on the first stages; `mtp`
 * multi-token-prediction layers more on the last stage (shared/model/mtp.ts).
 */
export function layersOfStage(layers: number, pp: number, stageLayers: readonly number[] | undefined, s: number, mtp = 0): number {
  const p = Math.max(1, Math.floor(pp) || 1);
  const extra = s === p - 1 ? mtp : 0;
  if (stageLayers && stageLayers.length === p) return Math.max(0, Math.floor(stageLayers[s] ?? 0) || 0) + extra;
  const L = Math.max(0, Math.floor(layers) || 0);
  return Math.floor(L / p) + (s < L % p ? 1 : 0) + extra;
}

/** Index of the first layer of stage s (no allocation). */
export function firstLayerOf(layers: number, pp: number, stageLayers: readonly number[] | undefined, s: number): number {
  const p = Math.max(1, Math.floor(pp) || 1);
  if (stageLayers && stageLayers.length === p) {
    let i = 0;
    for (let k = 0; k < s; k++) i += Math.max(0, Math.floor(stageLayers[k] ?? 0) || 0);
    return i;
  }
  const L = Math.max(0, Math.floor(layers) || 0);
  return s * Math.floor(L / p) + Math.min(s, L % p);
}

/** Parameters of one rank, by part. */
export interface RankParts {
  /** One layer's attention: q and o ÷TP, k and v per KV head held (replicated when TP > KV heads), biases ÷TP, norms whole. */
  readonly attn: number;
  /** One dense layer's MLP ÷TP. */
  readonly denseMlp: number;
  /** One MoE layer's replicated router plus its shared experts ÷TP. */
  readonly moeDense: number;
  /** One MoE layer's routed experts ÷(EP·ETP). */
  readonly expert: number;
  /** Input embedding ÷TP (first pipeline stage; the padded vocabulary). */
  readonly embed: number;
  /** Learned position embeddings (first stage, replicated). */
  readonly positions: number;
  /** Final norm (last stage). */
  readonly finalNorm: number;
  /** LM head ÷TP on the last stage: untied, or tied but split over stages (Megatron keeps a synced copy there). */
  readonly head: number;
  /**
   * The multi-token-prediction modules' projections and norms on the last stage, and there the embedding's copy when
   * it is not also the first (shared/model/mtp.ts); their transformer layers count as layers. 0 without MTP.
   */
  readonly mtp: number;
}

const PARTS = new WeakMap<ModelSpec, Map<number, RankParts>>();

/** Parameters one rank holds per part, memoised per (immutable) model and degrees. */
export function rankParts(model: ModelSpec, tp: number, ep: number, etp: number, pp: number): RankParts {
  const key = ((tp * 4096 + ep) * 4096 + etp) * 2 + (pp > 1 ? 1 : 0);
  let byKey = PARTS.get(model);
  if (!byKey) { byKey = new Map(); PARTS.set(model, byKey); }
  const hit = byKey.get(key);
  if (hit) return hit;
  const per = layerParams(model);
  const kv = kvHeadsPerRank(model.kvHeads, tp);
  // k and v weights and biases follow the KV heads a rank holds; everything else of attention splits ÷TP.
  const kvBias = !model.mla && (model.attnBias === 'qkv' || model.attnBias === 'all') ? 2 * model.kvHeads * model.headDim : 0;
  const kvAll = per.kvWeights + kvBias;
  const vocab = paddedVocabSize(model.vocabSize, model.vocabPadMultiple, tp);
  const embed = (vocab * model.hiddenSize) / tp;
  const parts: RankParts = {
    // MLA's down projections and latent norms are held whole by every rank (shared/model/mla.ts).
    attn: (per.attnWeights + per.attnOther - kvAll - per.attnReplicated) / tp + (kvAll * kv) / model.kvHeads + per.attnReplicated + per.norms,
    denseMlp: per.denseMlp / tp,
    moeDense: per.router + per.sharedExperts / tp,
    expert: per.experts / (ep * etp),
    embed,
    positions: model.positions === 'learned' ? model.maxPositions * model.hiddenSize : 0,
    finalNorm: normParams(model),
    head: !model.tiedEmbeddings || pp > 1 ? embed : 0,
    mtp: mtpModules(model) > 0 ? mtpOwnParams(model, normParams(model), tp) + (pp > 1 ? embed : 0) : 0,
  };
  byKey.set(key, parts);
  return parts;
}
