/** Model specs and plans shared by the validation tests (two families: Llama-style and GPT-2-style). */
import { makePlan } from '../../shared/plan/defaults';
import type { ModelSpec, Plan } from '../../shared/plan/types';

/** Llama-3-8B's family: GQA 32/8, SwiGLU FFN 14336/4096 = 3.5·h, RMSNorm, rotary, untied head, no biases. */
export const LLAMA3_8B: ModelSpec = {
  name: 'Llama-3-8B', layers: 32, hiddenSize: 4096, heads: 32, kvHeads: 8, headDim: 128, ffnSize: 14336,
  gatedMlp: true, attnBias: 'none', mlpBias: false, tiedEmbeddings: false, positions: 'rotary', maxPositions: 8192,
  norm: 'rmsnorm', qkNorm: false, vocabSize: 128256,
};

/** GPT-2 (124M): MHA, GELU MLP 4h with biases, LayerNorm, learned positions, tied head. */
export const GPT2: ModelSpec = {
  name: 'GPT-2', layers: 12, hiddenSize: 768, heads: 12, kvHeads: 12, headDim: 64, ffnSize: 3072,
  gatedMlp: false, attnBias: 'all', mlpBias: true, tiedEmbeddings: true, positions: 'learned', maxPositions: 1024,
  norm: 'layernorm', qkNorm: false, vocabSize: 50257,
};

/** Qwen3-0.6B's family: GQA 16/8, head_dim 128, q/k-norm, tied, SwiGLU, RMSNorm, rotary. */
export const QWEN3: ModelSpec = {
  name: 'Qwen3-0.6B', layers: 28, hiddenSize: 1024, heads: 16, kvHeads: 8, headDim: 128, ffnSize: 3072,
  gatedMlp: true, attnBias: 'none', mlpBias: false, tiedEmbeddings: true, positions: 'rotary', maxPositions: 40960,
  norm: 'rmsnorm', qkNorm: true, vocabSize: 151936,
};

export function planOf(model: ModelSpec): Plan {
  return makePlan({ model, training: { microBatch: 4, seqLen: 4096 } });
}
