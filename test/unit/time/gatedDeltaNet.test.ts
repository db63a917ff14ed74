/**
 * Gated DeltaNet layers in the step time (shared/time/kernels/gatedDeltaNet.ts): flash-linear-attention's chunked rule
 * as its published kernel time, linear in the sequence, and the bytes transformers moves around it, mixed with the
 * softmax-attention layers by their share. Expected values from fla-core 0.6.0's README benchmark (one GB200, chunk_gdn
 * and FlashAttention-2 causal at B, T, H, D) and from first principles with stub timers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { GroupLink } from '../../../shared/comm/links';
import { findGpu } from '../../../shared/hardware/gpus';
import { findPreset } from '../../../shared/model/presets';
import { makePlan } from '../../../shared/plan/defaults';
import type { GpuSpec, ModelSpec } from '../../../shared/plan/types';
import { GDN_KERNEL, gatedDeltaNetEagerBytesPerToken, gatedDeltaNetKernelFlops, megatronGatedDeltaNetBytesPerToken } from '../../../shared/time/kernels/gatedDeltaNet';
import { softmaxAttentionElementwiseBytes } from '../../../shared/time/kernels/elementwise';
import { layerCost, type KernelTimers } from '../../../shared/time/layerCost';
import { FITTED_PARAMS } from '../../../shared/time/params';

const H100 = findGpu('h100-sxm') as GpuSpec;
const NEXT = findPreset('qwen3-next-80b-a3b')!.model;

// The README's D = 128 rows: B·T·H token-heads, chunk_gdn forward and forward+backward ms.
const README: readonly [number, number, number][] = [[131_072, 0.753, 2.085], [524_288, 1.029, 3.616], [786_432, 1.265, 4.738], [1_048_576, 1.581, 5.964]];

test('the per token-head rates, anchored at the smallest shape, reproduce the README\'s other shapes within 8 %', () => {
  const [n0, f0, fb0] = README[0];
  for (const [n, fwd, fwdBwd] of README.slice(1)) {
    const f = f0 + (n - n0) * GDN_KERNEL.fwdNsPerTokenHead * 1e-6;
    const b = fb0 - f0 + (n - n0) * GDN_KERNEL.bwdNsPerTokenHead * 1e-6;
    assert.ok(Math.abs(f / fwd - 1) < 0.08, `forward at ${n}: ${f.toFixed(3)} ms against ${fwd}`);
    assert.ok(Math.abs((f + b) / fwdBwd - 1) < 0.08, `forward and backward at ${n}: ${(f + b).toFixed(3)} ms against ${fwdBwd}`);
  }
  // On the GB200's own FlashAttention-2 rate the equivalent FLOPs take the rate's time: 1,048,576 token-heads forward.
  const la = { layers: 1, keyHeads: 64, valueHeads: 64, keyHeadDim: 128, valueHeadDim: 128, convKernel: 4 };
  const core = gatedDeltaNetKernelFlops(la, 16_384);
  assert.ok(Math.abs(core.fwd / GDN_KERNEL.fa2FwdFlopsPerSecond - 1_048_576 * 0.9e-9) < 1e-12);
});

/** Stub timers: attention at 1 PFLOP/s whatever the call, HBM at 1 TB/s, no GEMM or launch time. */
function timers(calls: [string, number, number][]): KernelTimers {
  return {
    gemm16: () => 0, gemm8: () => 0, attention: (pass, flops, seq) => { calls.push([pass, flops, seq]); return flops / 1e15; }, hbm: (b) => b / 1e12,
    impl: 'fa2', fusion: 'hf', fp8: false, params: { ...FITTED_PARAMS, kernelGap: 0 },
  };
}

const link = { size: 1 } as GroupLink;
const shape = (T: number) => ({ tokens: T, normTokens: T, qHeads: 16, kvHeads: 2, ffn: 512, b: 1, seq: T, cp: 1, tp: 1, actBytes: 2 });
const plan = (model: ModelSpec, T: number) => makePlan({ model, engine: 'deepspeed', training: { microBatch: 1, seqLen: T, precision: 'bf16', modelImpl: 'hf' } } as never, H100);

test('a Qwen3-Next layer\'s attention is a quarter softmax (causal, 16 heads of 256) and three quarters the chunked rule', () => {
  const calls: [string, number, number][] = [];
  const T = 4096;
  const c = layerCost(plan(NEXT, T), shape(T), timers(calls), { tp: link, cp: link, ep: link }, 1);
  const causal = (4 * T * T * 16 * 256) / 2;
  const core = gatedDeltaNetKernelFlops(NEXT.linearAttention!, T);
  assert.deepEqual(calls, [['fwd', causal, T], ['bwd', 2.5 * causal, T], ['fwd', core.fwd, 4096], ['bwd', core.bwd, 4096]]);
  assert.ok(Math.abs(c.fwd.attention - (0.25 * causal + 0.75 * core.fwd) / 1e15) < 1e-15);
});

test('the chunked rule is linear in the sequence: a model of Gated DeltaNet layers only, 4,096 against 32,768 tokens', () => {
  const all: ModelSpec = { ...NEXT, linearAttention: { ...NEXT.linearAttention!, layers: NEXT.layers } };
  const at = (T: number) => layerCost(plan(all, T), shape(T), timers([]), { tp: link, cp: link, ep: link }, 1);
  assert.ok(Math.abs(at(32_768).fwd.attention / at(4096).fwd.attention - 8) < 1e-9);
  assert.ok(Math.abs(at(32_768).bwd.attention / at(4096).bwd.attention - 8) < 1e-9);
});

test('transformers\' mixers move their own bytes in place of rotary, the q/k/v copies and the q/k norms', () => {
  const T = 4096;
  const p = plan(NEXT, T);
  const with_ = layerCost(p, shape(T), timers([]), { tp: link, cp: link, ep: link }, 1);
  const without = layerCost(plan({ ...NEXT, linearAttention: undefined }, T), shape(T), timers([]), { tp: link, cp: link, ep: link }, 1);
  for (const pass of ['fwd', 'bwd'] as const) {
    const own = T * gatedDeltaNetEagerBytesPerToken(NEXT.linearAttention!, NEXT.hiddenSize, pass);
    const softmax = softmaxAttentionElementwiseBytes(NEXT, shape(T), 2, 'hf', pass);
    assert.ok(Math.abs(with_[pass].elementwise - without[pass].elementwise - 0.75 * (own - softmax) / 1e12) < 1e-12, pass);
  }
  // Qwen3-Next forward, per token: 32k + 86v + 66·H_v with k = 2,048, v = 4,096, H_v = 32 (the op list in the source).
  assert.equal(gatedDeltaNetEagerBytesPerToken(NEXT.linearAttention!, 2048, 'fwd'), 32 * 2048 + 86 * 4096 + 66 * 32);
});

test('a Gated DeltaNet layer projects with its own linears: Qwen3-Next\'s in_proj_qkvz and in_proj_ba in place of q (gated), k and v', () => {
  const T = 4096;
  const gemm = (calls: [number, number, number][]): KernelTimers => ({ ...timers([]), gemm16: (m, n, k) => { calls.push([m, n, k]); return (2 * m * n * k) / 1e15; } });
  const withGdn: [number, number, number][] = [], without: [number, number, number][] = [];
  const a = layerCost(plan(NEXT, T), shape(T), gemm(withGdn), { tp: link, cp: link, ep: link }, 1);
  const b = layerCost(plan({ ...NEXT, linearAttention: undefined }, T), shape(T), gemm(without), { tp: link, cp: link, ep: link }, 1);
  // transformers' Qwen3-Next: q with its gate 2·16·256, k and v 2·256 (9,216 columns) against in_proj_qkvz
  // 2·2,048 + 2·4,096 and in_proj_ba 2·32 (12,352); out_proj reads v = 4,096 = o_proj's 16·256, so it is o_proj.
  assert.ok(withGdn.some(([m, n, k]) => m === T && n === 12_288 && k === 2048) && withGdn.some(([m, n, k]) => m === T && n === 64 && k === 2048));
  assert.ok(Math.abs(a.fwd.gemm - b.fwd.gemm - (0.75 * 2 * T * 2048 * (12_352 - 9216)) / 1e15) < 1e-12);
});


test('Megatron-LM\'s mixers move their own bytes too: its fused kernels\' inputs and outputs, fewer than transformers\' eager code', () => {
  const T = 4096;
  const mplan = (model: ModelSpec) => makePlan({ model, engine: 'megatron', training: { microBatch: 1, seqLen: T, precision: 'bf16', modelImpl: 'megatron' } } as never, H100);
  const with_ = layerCost(mplan(NEXT), shape(T), timers([]), { tp: link, cp: link, ep: link }, 1);
  const without = layerCost(mplan({ ...NEXT, linearAttention: undefined }), shape(T), timers([]), { tp: link, cp: link, ep: link }, 1);
  // Qwen3-Next (k = 2,048, v = 4,096, H_k = 16, H_v = 32, r = 2), per token, each kernel's reads and writes in bf16:
  // forward — convolution 2·2·(2k + v), split copies 2·2·(2k + v), l2norm 2·2·2k + 4·2·H_k, repetition 2·(2k + 2·2k),
  // gates 2·2·H_v + 4·H_v + 2·H_v, gate copy 2·2·v, RMSNorm 2·2·v + 4·H_v, gate multiply 3·2·v.
  const fwd = 4 * (2 * 2048 + 4096) * 2 + (8 * 2048 + 8 * 16) + 2 * (2 * 2048 + 4 * 2048) + 10 * 32 + 4 * 4096 + (4 * 4096 + 4 * 32) + 6 * 4096;
  assert.equal(megatronGatedDeltaNetBytesPerToken(NEXT.linearAttention!, 'fwd'), fwd);
  // backward — gate multiply 5·2·v, RMSNorm 3·2·v + 4·H_v, gates 4·H_v + 5·2·H_v, repetition's sum 2·(2·2k + 2k),
  // l2norm 3·2·2k + 4·2·H_k, split copies 2·2·(2k + v), convolution 3·2·(2k + v), views' gradients 2·2·(2k + 2v + 2·H_v).
  const bwd = 10 * 4096 + (6 * 4096 + 4 * 32) + 14 * 32 + 2 * (4 * 2048 + 2 * 2048) + (12 * 2048 + 8 * 16) + 4 * (2 * 2048 + 4096) + 6 * (2 * 2048 + 4096) + 4 * (2 * 2048 + 2 * 4096 + 64);
  assert.equal(megatronGatedDeltaNetBytesPerToken(NEXT.linearAttention!, 'bwd'), bwd);
  for (const pass of ['fwd', 'bwd'] as const) {
    const own = T * megatronGatedDeltaNetBytesPerToken(NEXT.linearAttention!, pass);
    const softmax = softmaxAttentionElementwiseBytes(NEXT, shape(T), 2, 'hf', pass); // the stub timers' fusion
    assert.ok(Math.abs(with_[pass].elementwise - without[pass].elementwise - 0.75 * (own - softmax) / 1e12) < 1e-12, pass);
    assert.ok(own < T * gatedDeltaNetEagerBytesPerToken(NEXT.linearAttention!, NEXT.hiddenSize, pass), pass);
  }
});
