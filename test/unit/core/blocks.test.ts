/**
 * What one eager block saves (shared/memory/blocks.ts), counted tensor by tensor from the models' code: torchtitan's
 * Llama block (torchtitan/models/llama3/model/model.py) and transformers' LlamaDecoderLayer (modeling_llama.py).
 * Llama-3-8B widths: h = 4096, 32 query heads and 8 KV heads of d = 128 (q = 4096, kv = 1024), f = 14,336; one
 * sequence of 2048 tokens (T = 2048).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ActivationShape } from '../../../shared/memory/activations';
import { layerActivationBytes, recomputeWorkingBytes, stageLayerActivationBytes } from '../../../shared/memory/activations';
import {
  blockForwardLargestBytes, blockForwardTransientBytes, blockInputBytes, eagerScoreBytes, hfBlockBytes, titanBlockBytes, titanOpSelectiveBytes,
} from '../../../shared/memory/blocks';

const T = 2048, h = 4096, q = 4096, kv = 1024, f = 14_336;
const base: ActivationShape = {
  sLocal: T, b: 1, h, heads: 32, kvHeadsEff: 8, headDim: 128, ffn: f, gated: true, tp: 1, sp: false, flash: true,
  actBytes: 2, sKeys: T, dropout: false,
};
const titan = (x: Partial<ActivationShape> = {}): ActivationShape => ({ ...base, impl: 'torchtitan', ...x });
const hf = (x: Partial<ActivationShape> = {}): ActivationShape => ({ ...base, impl: 'hf', ...x });
/** FlashAttention's fp32 log-sum-exp: 4 bytes per query head and token. */
const lse = (heads: number, tokens: number) => 4 * heads * tokens;

describe('torchtitan block', () => {
  test('no recomputation: norm inputs and outputs, q with K/V repeated to 32 heads and the output, four MLP tensors', () => {
    // Norms: the block input x and the mid residual (2·2Th) with an fp32 rstd per token each (2·4T); the linears' inputs:
    // both norm outputs (2·2Th); SDPA: q, repeat_kv's K and V (each q wide: GQA 32/8) and the output (4·2Tq);
    // SwiGLU: w1 out, silu out, w3 out, their product (4·2Tf). = 352 MiB + rstd + lse.
    const expected = 2 * 2 * T * h + 2 * 4 * T + 2 * 2 * T * h + 4 * 2 * T * q + 4 * 2 * T * f + lse(32, T);
    assert.equal(titanBlockBytes(titan()), expected);
    assert.equal(Math.round((2 * 2 * T * h + 2 * 2 * T * h + 4 * 2 * T * q + 4 * 2 * T * f) / 2 ** 20), 352);
  });
  test('compiled: the partitioner recomputes silu\'s output, one MLP-width tensor less (T·f/t bytes in bf16)', () => {
    // torch/_functorch/partitioners.py min_cut_rematerialization_partition; measured on torch's own partitioner in
    // test/probe/compiledSaves.test.ts.
    assert.equal(titanBlockBytes(titan()) - titanBlockBytes(titan({ compiled: true })), 2 * T * f);
    assert.equal(titanBlockBytes(titan({ tp: 2 })) - titanBlockBytes(titan({ tp: 2, compiled: true })), (2 * T * f) / 2);
  });
  test('TP 2 with sequence parallelism: norms on half the sequence, the linears\' inputs all-gathered whole', () => {
    const t = 2;
    const expected = (2 * 2 * T * h + 2 * 4 * T) / t + 2 * 2 * T * h + (4 * 2 * T * q + 4 * 2 * T * f) / t + lse(32, T) / t;
    assert.equal(titanBlockBytes(titan({ tp: 2, sp: true })), expected);
  });
  test('multi-head attention: K and V at their own width, as GQA saves them after repeat_kv (q wide)', () => {
    assert.equal(titanBlockBytes(titan({ kvHeadsEff: 32 })), titanBlockBytes(titan()));
  });
  test('per-op selective checkpointing keeps the input, wq/wv/w1/w2 outputs and SDPA\'s output and statistics', () => {
    // 2Th (input) + 2T(q + kv + f + h) (every second matmul, in call order wq, wk, wv, wo, w1, w3, w2) + 2Tq + lse.
    const expected = 2 * T * h + 2 * T * (q + kv + f + h) + 2 * T * q + lse(32, T);
    assert.equal(titanOpSelectiveBytes(titan()), expected);
    assert.equal(Math.round((expected - lse(32, T)) / 2 ** 20), 124);
  });
  test('eager attention adds the fp32 softmax output, its 16-bit cast and a boolean causal mask', () => {
    const s = 1024;
    assert.equal(eagerScoreBytes(titan({ sLocal: s, sKeys: s }), 1), (4 + 2) * 32 * s * s + s * s);
  });
});

describe('transformers block', () => {
  test('autocast with fp32 weights: fp32 residual stream, per-linear bf16 casts, the layer\'s weight copies', () => {
    // Norms: fp32 input and normalised tensor each ((4 + 4)·Th) and rsqrt (4T), twice; the bf16 casts of the norm
    // outputs by q/k/v_proj and gate/up_proj (5·2Th); SDPA on q, k, v at their own widths and the output
    // (2T(q + kv + kv + q)); the MLP's four tensors (4·2Tf); and the layer's weights cast to bf16 (w bytes).
    // The layer's weights: attention 4096·(4096 + 1024 + 1024 + 4096) + MLP 3·4096·14,336 = 218,103,808.
    const w = 2 * (4096 * (4096 + 1024 + 1024 + 4096) + 3 * 4096 * 14_336);
    const expected = 2 * ((4 + 4) * T * h + 4 * T) + 5 * 2 * T * h + 2 * T * (2 * q + 2 * kv) + lse(32, T) + 4 * 2 * T * f + w;
    assert.equal(hfBlockBytes(hf({ streamBytes: 4, autocastWeightBytes: w })), expected);
    // 472 MiB of activations besides the weight copies (the oracle's per-layer growth at 2048 tokens).
    assert.equal(Math.round((expected - w - lse(32, T) - 2 * 4 * T) / 2 ** 20), 472);
  });
  test('bf16 weights (FSDP2 mixed precision): fp32 norm copies, bf16 normalised tensors and outputs', () => {
    const expected = 2 * ((4 + 2) * T * h + 4 * T) + 2 * 2 * T * h + 2 * T * (2 * q + 2 * kv) + lse(32, T) + 4 * 2 * T * f;
    assert.equal(hfBlockBytes(hf()), expected);
    assert.equal(Math.round((expected - lse(32, T) - 2 * 4 * T) / 2 ** 20), 392);
  });
  test('fp32: memory-efficient attention repeats K/V to the query heads', () => {
    const x = hf({ actBytes: 4, streamBytes: 4, sLocal: 512, sKeys: 512 });
    const t = 512;
    const expected = 2 * ((4 + 4) * t * h + 4 * t) + 2 * 4 * t * h + 4 * t * (2 * q + 2 * q) + lse(32, t) + 4 * 4 * t * f;
    assert.equal(hfBlockBytes(x), expected);
  });
  test('gradient checkpointing keeps the block input in the residual stream\'s dtype', () => {
    assert.equal(blockInputBytes(hf({ streamBytes: 4 })), 4 * T * h);
    assert.equal(blockInputBytes(titan({ tp: 4, sp: true })), (2 * T * h) / 4);
  });
});

describe('recomputation policies', () => {
  test('full recomputation: each layer keeps its input; the working set is one layer without it', () => {
    const x = titan();
    assert.equal(stageLayerActivationBytes(x, 4, 'full', 4), 4 * blockInputBytes(x));
    assert.equal(recomputeWorkingBytes(x, 'full', 4), layerActivationBytes(x, 'none') - blockInputBytes(x));
  });
  test('torchtitan per-layer policy (every 2nd block): half the blocks keep only their input', () => {
    const x = titan({ acPolicy: 'torchtitan-layer', acEvery: 2 });
    assert.equal(stageLayerActivationBytes(x, 4, 'selective', 0), 2 * blockInputBytes(x) + 2 * titanBlockBytes(x));
    assert.equal(stageLayerActivationBytes(x, 3, 'selective', 0), 1 * blockInputBytes(x) + 2 * titanBlockBytes(x));
  });
  test('Megatron keeps Korthikanti\'s counts (no impl): 34·sbh + 5as²b/t at t = 1 with dropout, MHA, f = 4h', () => {
    const m: ActivationShape = { ...base, heads: 32, kvHeadsEff: 32, ffn: 4 * h, gated: false, flash: false, dropout: true };
    // Korthikanti et al. 2022 Eq. 1: sbh(34 + 5as/h).
    assert.equal(layerActivationBytes(m, 'none'), T * h * (34 + (5 * 32 * T) / h));
  });
});

describe('a checkpointed block\'s forward transients (what it allocates and frees)', () => {
  test('torchtitan without TP: at the gate\'s product the norm output, silu(w1), w3 and the product, 2Th + 3·2Tf', () => {
    // FeedForward.forward: w2(silu(w1(x)) * w3(x)); w1's output is freed once silu ran; w2's output (2Th) comes after
    // silu's and w3's are freed, so the product's moment is the larger.
    assert.equal(blockForwardTransientBytes(titan()), 2 * T * h + 3 * 2 * T * f);
    assert.equal(blockForwardLargestBytes(titan()), 2 * T * f);
  });
  test('torchtitan TP 8 with sequence parallelism (Llama 3 70B, 16 × 8192 tokens): the reduce-scatter\'s copy makes w2\'s moment the larger', () => {
    // h = 8192, f = 28,672: M = the all-gathered norm output 2·T·h = 2 GiB; F = 2·T·f/8 = 896 MiB; w2's partial sum
    // 2 GiB, funcol's scatter-order copy 2 GiB and the shard 256 MiB: 2048 + 896 + 2048 + 2048 + 256 = 7296 MiB
    // (the product's moment: 2048 + 3·896 = 4736 MiB). The oracle's allocator replay of this layout at 80 layers peaks
    // 7.13 GiB (7301 MiB) above the block's input inside each block's forward.
    const x: ActivationShape = { ...titan(), sLocal: 8192, b: 16, h: 8192, heads: 64, ffn: 28_672, tp: 8, sp: true };
    assert.equal(blockForwardTransientBytes(x), 7296 * 2 ** 20);
  });
  test('transformers under autocast: the fp32 norm output and its bf16 cast are the MLP\'s input', () => {
    const x = hf({ streamBytes: 4, autocastWeightBytes: 1 });
    assert.equal(blockForwardTransientBytes(x), (4 + 2) * T * h + 3 * 2 * T * f);
  });
  test('Megatron\'s Transformer Engine blocks are not counted', () => {
    assert.equal(blockForwardTransientBytes({ ...base }), 0);
  });
});
