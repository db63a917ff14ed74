/** Shared test inputs for the communication, time and simulation suites. */
import { findGpu } from '../../../shared/hardware/gpus';
import { makePlan, type PlanInput } from '../../../shared/plan/defaults';
import type { GpuSpec, ModelSpec, Plan } from '../../../shared/plan/types';

/** A100 80GB from the catalog. */
export const A100 = findGpu('a100-80gb') as GpuSpec;

/**
 * A GPU whose links are free (no latency, practically infinite bandwidth): the closed forms of pipeline schedules
 * (Narayanan et al. 2021 §2.2) assume no communication time, so tests of those forms use it.
 */
export const FREE_LINKS: GpuSpec = {
  ...A100, id: 'free-links', name: 'A100 with free links', intraNodeBandwidth: 1e30, interNodeBandwidth: 1e30, hostBandwidth: 1e30,
  intraNodeLatency: 0, interNodeLatency: 0,
};

/** GPT-style model (Narayanan et al. 2021): MHA, GeLU MLP 4h, LayerNorm, learned positions, tied embeddings. */
export function gpt(layers: number, hidden: number, heads: number, vocab = 51200): ModelSpec {
  return {
    name: `gpt-${layers}x${hidden}`, layers, hiddenSize: hidden, heads, kvHeads: heads, headDim: hidden / heads, ffnSize: 4 * hidden,
    gatedMlp: false, attnBias: 'all', mlpBias: true, tiedEmbeddings: true, positions: 'learned', maxPositions: 2048, norm: 'layernorm',
    qkNorm: false, vocabSize: vocab,
  };
}

/**
 * A model whose pipeline stages are all alike: vocabulary 1 and rotary positions, so embedding and LM head vanish
 * and every stage does the same work (the setting of the closed-form bubble formulas).
 */
export function uniformModel(layers: number): ModelSpec {
  return { ...gpt(layers, 1024, 16, 1), positions: 'rotary' };
}

/** makePlan with a default cluster of 8-GPU nodes. */
export function plan(input: PlanInput): Plan {
  return makePlan(input);
}
