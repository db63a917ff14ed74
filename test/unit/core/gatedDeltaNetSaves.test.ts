/**
 * What a Gated DeltaNet layer keeps for its backward under transformers with flash-linear-attention and causal-conv1d
 * (shared/memory/gatedDeltaNetSaves.ts), counted here tensor by tensor from the sources: transformers 5.24
 * Qwen3NextGatedDeltaNet.forward and Qwen3NextRMSNormGated.forward, causal-conv1d CausalConv1dFn.forward
 * (save_for_backward(x, weight, …)), fla-core 0.6.0 ChunkGatedDeltaRuleFunction.forward (q, q_rstd, k, k_rstd, v, g,
 * beta, A) with l2norm_fwd (y like x, rstd fp32 per row), chunk_local_cumsum (fp32) and chunk_fwd.py (A in k's dtype,
 * T × Hv × 64). Qwen3-Next-80B-A3B's config.json: hidden 2,048, 48 layers, 16 key heads and 32 value heads of 128,
 * full attention every 4th layer with 16 heads of 256 and 2 KV heads, q/k norms, an output gate.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { stageNumbers } from '../../../shared/memory/fast';
import { gatedDeltaNetSavedBytesPerToken, megatronGatedDeltaNetSavedBytesPerToken } from '../../../shared/memory/gatedDeltaNetSaves';
import { makePlan } from '../../../shared/plan/defaults';
import type { ModelSpec } from '../../../shared/plan/types';
import { H100, preset } from './helpers';

const NEXT = preset('qwen3-next-80b-a3b');
const LA = NEXT.linearAttention!;

/** Qwen3-Next's mixer in bf16, per token: each saved tensor in bytes. */
const K = 16 * 128, V = 32 * 128, HK = 16, HV = 32;
const BY_TENSOR = [
  2 * (2 * K + V), // causal_conv1d's input: the concatenated q, k, v projections
  2 * HV, // β = sigmoid(b), its output
  4 * HV + 4 * HV, // softplus(a + dt_bias) in fp32: its input, and its output kept by the decay's product
  2 * K + 2 * K + 2 * V, // FLA: the l2-normalised q and k, v
  4 * HK + 4 * HK, // their fp32 reciprocal norms
  4 * HV, // the chunk-local cumulative decay in fp32
  2 * 64 * HV, // A: 64 values per value head in bf16
  4 * V + 4 * HV, // the gated norm: the output's fp32 copy, its fp32 reciprocal root per head
  2 * V + 2 * V, // the normalised output cast back, the weighted output
  4 * V + 4 * V, // z in fp32, its SiLU in fp32
  2 * V, // the cast result, out_proj's input
];

/** Qwen3-Next at 4,096 tokens on one H100 under transformers (DeepSpeed) or Megatron-LM. */
const plan = (model: ModelSpec, recompute: 'none' | 'full', impl: 'hf' | 'megatron' = 'hf') => makePlan({
  model, engine: impl === 'hf' ? 'deepspeed' : 'megatron',
  training: { microBatch: 1, seqLen: 4096, precision: impl === 'hf' ? 'bf16' : 'bf16-mixed', recompute, modelImpl: impl },
} as never, H100);

/** Stage 0 of Qwen3-Next as it is, and with every layer read as plain attention (no Gated DeltaNet, no output gate). */
function stages(recompute: 'none' | 'full', impl: 'hf' | 'megatron' = 'hf') {
  const asAttention: ModelSpec = { ...NEXT, linearAttention: undefined, attentionOutputGate: false };
  return { now: stageNumbers(plan(NEXT, recompute, impl), 0)!, before: stageNumbers(plan(asAttention, recompute, impl), 0)! };
}

describe('Gated DeltaNet layers: saved activations under transformers', () => {
  test('Qwen3-Next-80B\'s mixer keeps 111,296 bytes per token; TP halves its heads', () => {
    const sum = BY_TENSOR.reduce((a, b) => a + b, 0);
    assert.equal(sum, 111_296);
    assert.equal(gatedDeltaNetSavedBytesPerToken(LA, 2), sum);
    assert.equal(gatedDeltaNetSavedBytesPerToken(LA, 2, 2), sum / 2);
    // A frozen out_proj (LoRA) keeps no input; fp32 weights under autocast make the weighted output fp32.
    assert.equal(gatedDeltaNetSavedBytesPerToken(LA, 2, 1, false, true), sum - 2 * V);
    assert.equal(gatedDeltaNetSavedBytesPerToken(LA, 2, 1, true), sum + 2 * V);
  });

  test('a stage of Qwen3-Next-80B keeps the two kinds\' saves: 36 Gated DeltaNet and 12 gated attention mixers', () => {
    // Read as attention everywhere, each of the 48 mixers keeps its q/k norms' fp32 inputs and normalised outputs
    // (4 + 2)·(16 + 2)·256, q, k, v and the output 2·(2·4,096 + 2·512) and the fp32 log-sum-exp 4·16: 46,144 bytes a
    // token. Now 36 of them keep 111,296 and the 12 attention mixers 2·2·4,096 more for the output gate.
    const attention = 6 * 18 * 256 + 2 * (2 * 4096 + 2 * 512) + 4 * 16;
    assert.equal(attention, 46_144);
    const { now, before } = stages('none');
    assert.equal(now.layerActPerMicrobatch - before.layerActPerMicrobatch, 4096 * (36 * (111_296 - attention) + 12 * 2 * 2 * 4096));
  });

  test('under full recomputation the layer held at a time is the larger kind, a Gated DeltaNet layer', () => {
    const { now, before } = stages('full');
    assert.equal(now.working - before.working, 4096 * (111_296 - 46_144));
    // The checkpointed layers keep their inputs only, whatever their kind.
    assert.equal(now.layerActPerMicrobatch, before.layerActPerMicrobatch);
  });
});

/**
 * Megatron-LM's mixer, counted from its sources (megatron/core/ssm/gated_delta_net/gdn.py and common.py at d98e8a64;
 * flash-linear-attention 0.5.1, its pinned release: CausalConv1dFunction saves its input view, L2NormFunction y and
 * an fp32 rstd per row, ChunkGatedDeltaRuleFunction q, k, v, the fp32 cumulative decay, beta and A; Transformer
 * Engine's RMSNorm its input and fp32 rsigma), with what torch.compile's partitioner keeps in the compiled gates and
 * gate multiply (measured on a CPU: α and β's sigmoid; the norm's output and the gate's copy).
 */
const BY_TENSOR_MEGATRON = [
  2 * (2 * K + 2 * V + 2 * HV), // in_proj's whole output: the convolution keeps its q/k/v view, the gates their α view
  2 * HV, // β = sigmoid, kept by the compiled gates and by the rule (one tensor)
  2 * 2 * K + 4 * 2 * HK, // l2norm over q and k at 16 key heads: its output and an fp32 reciprocal norm per row
  2 * (2 * K * 2), // q and k repeated to the 32 value heads, contiguous, kept by the rule
  2 * V, // v's contiguous copy
  4 * HV, // the chunk-local cumulative decay in fp32
  2 * 64 * HV, // A
  2 * V + 4 * HV, // TE RMSNorm: the rule's output (its input) and an fp32 reciprocal root per row
  2 * V + 2 * V, // the compiled gate multiply: the norm's output and the gate's contiguous copy
  2 * V, // out_proj's input
];

describe('Gated DeltaNet layers: saved activations under Megatron-LM', () => {
  test('Qwen3-Next-80B\'s mixer keeps 94,784 bytes per token; TP halves it; FP8 keeps out_proj\'s input in one byte', () => {
    const sum = BY_TENSOR_MEGATRON.reduce((a, b) => a + b, 0);
    assert.equal(sum, 94_784);
    assert.equal(megatronGatedDeltaNetSavedBytesPerToken(LA, 2), sum);
    assert.equal(megatronGatedDeltaNetSavedBytesPerToken(LA, 2, 2), sum / 2);
    assert.equal(megatronGatedDeltaNetSavedBytesPerToken(LA, 2, 1, true), sum - V);
    // Equal key and value heads (no repetition): q and k are still copied out of the normalised pair for the rule.
    const square = { ...LA, valueHeads: 16 };
    assert.equal(megatronGatedDeltaNetSavedBytesPerToken(square, 2), 2 * (2 * K + 2 * 2048 + 32) + 32 + 4 * K + 128 + 4 * K + 4096 + 64 + 2048 + 4096 + 64 + 8192 + 4096);
  });

  test('a Megatron stage of Qwen3-Next-80B keeps 36 Gated DeltaNet mixers and 12 gated attention mixers', () => {
    // Read as attention, each mixer keeps Korthikanti's q, k, v and projection input, 2·(2·16·256 + 2·2·256), and the
    // flash log-sum-exp, 4·16: 18,496 bytes a token. Now 36 keep 94,784 and the 12 attention mixers keep the output
    // gate's slice and the gated product, 2·2·4,096 more.
    const attention = 2 * (2 * 16 * 256 + 2 * 2 * 256) + 4 * 16;
    const { now, before } = stages('none', 'megatron');
    assert.equal(now.layerActPerMicrobatch - before.layerActPerMicrobatch, 4096 * (36 * (94_784 - attention) + 12 * 2 * 2 * 4096));
  });

  test('under full recomputation Megatron\'s working set is the larger kind; the checkpointed inputs do not change', () => {
    const { now, before } = stages('full', 'megatron');
    assert.equal(now.working - before.working, 4096 * (94_784 - (2 * (2 * 16 * 256 + 2 * 2 * 256) + 4 * 16)));
    assert.equal(now.layerActPerMicrobatch, before.layerActPerMicrobatch);
  });
});
