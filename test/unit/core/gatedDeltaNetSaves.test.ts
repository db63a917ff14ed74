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
import { gatedDeltaNetSavedBytesPerToken } from '../../../shared/memory/gatedDeltaNetSaves';
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

const plan = (model: ModelSpec, recompute: 'none' | 'full') =>
  makePlan({ model, engine: 'deepspeed', training: { microBatch: 1, seqLen: 4096, precision: 'bf16', recompute, modelImpl: 'hf' } } as never, H100);

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
    const asAttention: ModelSpec = { ...NEXT, linearAttention: undefined, attentionOutputGate: false };
    const now = stageNumbers(plan(NEXT, 'none'), 0)!, before = stageNumbers(plan(asAttention, 'none'), 0)!;
    assert.equal(now.layerActPerMicrobatch - before.layerActPerMicrobatch, 4096 * (36 * (111_296 - attention) + 12 * 2 * 2 * 4096));
  });

  test('under full recomputation the layer held at a time is the larger kind, a Gated DeltaNet layer', () => {
    const asAttention: ModelSpec = { ...NEXT, linearAttention: undefined, attentionOutputGate: false };
    const now = stageNumbers(plan(NEXT, 'full'), 0)!, before = stageNumbers(plan(asAttention, 'full'), 0)!;
    assert.equal(now.working - before.working, 4096 * (111_296 - 46_144));
    // The checkpointed layers keep their inputs only, whatever their kind.
    assert.equal(now.layerActPerMicrobatch, before.layerActPerMicrobatch);
  });
});
