/**
 * Scales the config's model down to a GPT-style transformer that trains in seconds on one CPU core per rank,
 * keeping its family: GQA ratio, gated or plain MLP, norm kind, biases, tied embeddings, position kind, q/k-norm.
 */
import type { ModelSpec, Plan, TrainingSpec } from '../../shared/plan/types';
import type { ScaleOverrides, Scaling } from '../types';

/** Defaults that give about 0.5 M parameters for common families. */
const DEFAULTS = { hiddenSize: 128, layers: 2, heads: 4, vocabSize: 512, seqLen: 64, microBatch: 2 };

const clampInt = (x: number, lo: number, hi: number): number =>
  Math.max(lo, Math.min(hi, Math.round(Number.isFinite(x) ? x : lo)));

/** Largest divisor of `n` that is ≤ `limit` (at least 1). */
function largestDivisorAtMost(n: number, limit: number): number {
  for (let d = Math.min(n, Math.floor(limit)); d > 1; d--) if (n % d === 0) return d;
  return 1;
}

export interface ScaledModel {
  readonly model: ModelSpec;
  readonly seqLen: number;
  readonly microBatch: number;
  readonly scaling: Scaling;
}

/** Derives the scaled model from the config's model and training shape. */
export function scaleModel(source: ModelSpec, training: Pick<TrainingSpec, 'seqLen' | 'microBatch'>, o: ScaleOverrides = {}): ScaledModel {
  const heads = clampInt(o.heads ?? DEFAULTS.heads, 1, 64);
  const hiddenSize = clampInt(o.hiddenSize ?? Math.min(DEFAULTS.hiddenSize, source.hiddenSize || DEFAULTS.hiddenSize), heads * 2, 4096);
  const headDim = Math.max(2, 2 * Math.floor(hiddenSize / heads / 2));
  const sourceHeads = Math.max(1, source.heads || 1);
  const sourceKv = Math.max(1, Math.min(sourceHeads, source.kvHeads || sourceHeads));
  // The group size (query heads per KV head) is kept as far as the scaled head count allows.
  const group = largestDivisorAtMost(heads, sourceHeads / sourceKv);
  const kvHeads = heads / group;
  const ratio = source.hiddenSize > 0 && source.ffnSize > 0 ? source.ffnSize / source.hiddenSize : source.gatedMlp ? 8 / 3 : 4;
  const ffnSize = Math.max(8, 8 * Math.round((hiddenSize * ratio) / 8));
  const layers = clampInt(o.layers ?? Math.min(DEFAULTS.layers, source.layers || DEFAULTS.layers), 1, 64);
  const vocabSize = clampInt(o.vocabSize ?? Math.min(DEFAULTS.vocabSize, source.vocabSize || DEFAULTS.vocabSize), 8, 1 << 16);
  const seqLen = clampInt(o.seqLen ?? Math.min(DEFAULTS.seqLen, training.seqLen || DEFAULTS.seqLen), 2, 4096);
  const microBatch = clampInt(o.microBatch ?? Math.min(DEFAULTS.microBatch, training.microBatch || DEFAULTS.microBatch), 1, 64);
  const positions = source.positions === 'learned' || source.positions === 'rotary' ? source.positions : 'none';
  const model: ModelSpec = {
    name: `${source.name || 'model'} (scaled)`,
    layers, hiddenSize, heads, kvHeads, headDim, ffnSize,
    gatedMlp: source.gatedMlp,
    attnBias: source.attnBias,
    mlpBias: source.mlpBias,
    tiedEmbeddings: source.tiedEmbeddings,
    positions,
    maxPositions: positions === 'learned' ? seqLen : 0,
    norm: source.norm,
    qkNorm: source.qkNorm,
    vocabSize,
    vocabPadMultiple: 0,
  };
  const kept = [
    kvHeads === heads ? 'multi-head attention' : `grouped-query attention (${group} query heads per KV head)`,
    source.gatedMlp ? 'gated MLP (SwiGLU)' : 'plain MLP (GELU)',
    source.norm === 'rmsnorm' ? 'RMSNorm' : 'LayerNorm',
    source.tiedEmbeddings ? 'tied embeddings' : 'untied LM head',
    `${positions} positions`,
    `attention bias: ${source.attnBias}`, `MLP bias: ${source.mlpBias ? 'yes' : 'no'}`,
    ...(source.qkNorm ? ['q/k RMSNorm'] : []),
    `FFN/hidden ratio ${ratio.toFixed(2)}`,
  ];
  const dropped: string[] = [];
  if (source.moe) dropped.push('mixture of experts: the scaled model is dense');
  if (source.positions === 'alibi') dropped.push('ALiBi positions: trained without position information');
  if (source.vocabPadMultiple) dropped.push('Megatron vocabulary padding');
  dropped.push('precision: fp32 throughout (tfjs); the config’s mixed precision is not reproduced');
  const dim = (config: number, run: number) => ({ config, run });
  return {
    model, seqLen, microBatch,
    scaling: {
      layers: dim(source.layers, layers),
      hiddenSize: dim(source.hiddenSize, hiddenSize),
      heads: dim(source.heads, heads),
      kvHeads: dim(source.kvHeads, kvHeads),
      ffnSize: dim(source.ffnSize, ffnSize),
      vocabSize: dim(source.vocabSize, vocabSize),
      seqLen: dim(training.seqLen, seqLen),
      microBatch: dim(training.microBatch, microBatch),
      kept, dropped,
      summary: `${source.name || 'model'} scaled to ${layers} layers × ${hiddenSize} hidden, ${heads} heads (${kvHeads} KV), `
        + `FFN ${ffnSize}, vocabulary ${vocabSize}, sequence ${seqLen}, micro-batch ${microBatch} per rank, fp32`,
    },
  };
}

/** What the run does not reproduce of the plan beyond the model: adapters, model parallelism, offload, precision. */
export function planDropped(plan: Pick<Plan, 'lora' | 'parallel' | 'training'>): string[] {
  const out: string[] = [];
  if (plan.lora) out.push(`LoRA (rank ${plan.lora.rank}): the run trains every parameter`);
  const p = plan.parallel;
  if (p && (p.tp > 1 || p.pp > 1 || p.cp > 1 || p.ep > 1)) out.push(`model parallelism (TP ${p.tp}, PP ${p.pp}, CP ${p.cp}, EP ${p.ep}): the run is data parallel only`);
  if (p && (p.sharding.offloadOptimizer !== 'none' || p.sharding.offloadParams !== 'none')) out.push('CPU/NVMe offload: states stay in the rank');
  if (plan.training && plan.training.optimizer !== 'adam' && plan.training.optimizer !== 'adamw') out.push(`optimizer ${plan.training.optimizer}: the run uses Adam`);
  if (plan.training && plan.training.gradAccum > 1) out.push(`gradient accumulation ${plan.training.gradAccum}: one micro-batch per step`);
  return out;
}
