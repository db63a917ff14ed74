/**
 * Scales a model description down until its parameter count fits a budget, keeping its family: attention heads
 * and KV heads (GQA ratio), gated or plain MLP, norms, biases, tied embeddings and positions. A model that fits is
 * kept at full size.
 */
import { countParams, paddedVocabSize } from '../../shared/model/params';
import type { ModelSpec } from '../../shared/plan/types';
import type { ProbeModel, ProbeScaling } from './types';

/** Converts a plan's model to the probe's description (vocabulary padding applied, MoE not supported). */
export function probeModelOf(m: ModelSpec): ProbeModel {
  return {
    name: m.name, layers: m.layers, hiddenSize: m.hiddenSize, heads: m.heads, kvHeads: m.kvHeads,
    headDim: m.headDim, ffnSize: m.ffnSize, gatedMlp: m.gatedMlp, attnBias: m.attnBias, mlpBias: m.mlpBias,
    tiedEmbeddings: m.tiedEmbeddings, positions: m.positions,
    maxPositions: m.positions === 'learned' ? Math.max(1, m.maxPositions) : 0, norm: m.norm, qkNorm: m.qkNorm,
    vocabSize: paddedVocabSize(m.vocabSize, m.vocabPadMultiple, 1),
  };
}

/** The probe's model as a core ModelSpec, so the core can estimate exactly what the probe builds. */
export function modelSpecOf(p: ProbeModel): ModelSpec {
  return { ...p, vocabPadMultiple: 0 };
}

/** Exact Ψ of a probe model, from the core's parameter count. */
export function probeParameters(p: ProbeModel): number {
  return countParams(modelSpecOf(p)).parameters;
}

const halfEven = (x: number, min: number): number => Math.max(min, 2 * Math.floor(x / 4));

/**
 * One halving of the width: hidden and FFN halve, and so does the attention width — head dimension first down to 32,
 * then query and KV heads together (keeping the GQA group) down to one KV head, then the head dimension down to 8.
 * Returns undefined when nothing can shrink any more.
 */
function narrower(m: ProbeModel): ProbeModel | undefined {
  if (m.hiddenSize < 32) return undefined;
  const base = { ...m, hiddenSize: halfEven(m.hiddenSize, 16), ffnSize: halfEven(m.ffnSize, 16) };
  if (m.headDim > 32) return { ...base, headDim: halfEven(m.headDim, 32) };
  if (m.kvHeads > 1 && m.kvHeads % 2 === 0 && m.heads % 2 === 0) return { ...base, heads: m.heads / 2, kvHeads: m.kvHeads / 2 };
  if (m.headDim > 8) return { ...base, headDim: halfEven(m.headDim, 8) };
  return undefined;
}

/**
 * Halves depth first (down to 2 layers), then the vocabulary while embeddings hold over half of Ψ, then width (see
 * narrower), then the vocabulary down to 256, until Ψ ≤ maxParameters;
 * learned positions are capped at the sequence length the probe runs.
 */
export function scaleProbeModel(full: ProbeModel, maxParameters: number, seqLen: number): { model: ProbeModel; scaling: ProbeScaling } {
  const before = probeParameters(full);
  let m: ProbeModel = full.positions === 'learned' ? { ...full, maxPositions: Math.min(full.maxPositions, seqLen) } : full;
  const changes: string[] = [];
  if (m.maxPositions !== full.maxPositions) changes.push(`learned positions ${full.maxPositions} → ${m.maxPositions}`);
  for (let i = 0; i < 64 && probeParameters(m) > maxParameters; i++) {
    const thinner = m.layers > 2 ? undefined : narrower(m);
    // Embedding rows shrink first while they hold over half of Ψ, so the layers keep their share of the model.
    const embedding = m.vocabSize * m.hiddenSize * (m.tiedEmbeddings ? 1 : 2);
    if (m.layers > 2) m = { ...m, layers: Math.max(2, Math.floor(m.layers / 2)) };
    else if (m.vocabSize > 1024 && 2 * embedding > probeParameters(m)) m = { ...m, vocabSize: Math.max(1024, Math.floor(m.vocabSize / 2)) };
    else if (thinner) m = thinner;
    else if (m.vocabSize > 256) m = { ...m, vocabSize: Math.max(256, Math.floor(m.vocabSize / 2)) };
    else break;
  }
  const after = probeParameters(m);
  if (m.layers !== full.layers) changes.push(`layers ${full.layers} → ${m.layers}`);
  if (m.hiddenSize !== full.hiddenSize) {
    changes.push(`hidden ${full.hiddenSize} → ${m.hiddenSize}, FFN ${full.ffnSize} → ${m.ffnSize}, head dim ${full.headDim} → ${m.headDim}`);
  }
  if (m.heads !== full.heads) changes.push(`heads ${full.heads} → ${m.heads}, KV heads ${full.kvHeads} → ${m.kvHeads}`);
  if (m.vocabSize !== full.vocabSize) changes.push(`vocabulary ${full.vocabSize} → ${m.vocabSize}`);
  const scaled = after !== before;
  const note = scaled
    ? `${full.name} scaled from ${before.toLocaleString('en-US')} to ${after.toLocaleString('en-US')} parameters (${changes.join('; ')}); ${m.heads / m.kvHeads} query heads per KV head, MLP, norms, biases, positions and embeddings kept.`
    : `${full.name} at full size (${after.toLocaleString('en-US')} parameters).`;
  return {
    model: { ...m, name: scaled ? `${full.name} (scaled)` : full.name },
    scaling: { scaled, original: { layers: full.layers, hiddenSize: full.hiddenSize, parameters: before }, parameters: after, note },
  };
}
