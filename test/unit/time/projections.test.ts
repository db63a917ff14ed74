/**
 * The linears as each engine's modules lay them out (shared/time/projections.ts) and the TP collectives of sequence
 * parallelism at their measured rates (shared/comm/links.ts kindEfficiency). Expected values:
 * - Module layouts from the engines' source: Megatron-core `linear_qkv` and `linear_fc1` (2·ffn for SwiGLU); torchtitan
 *   `wq`, `wk`, `wv`, `w1`, `w3` (models/llama3/model.py); transformers Llama `q_proj`, `k_proj`, `v_proj`,
 *   `gate_proj`, `up_proj`; GPT-2 `c_attn`. Llama 3.1 8B: 32 query heads, 8 KV heads, head dim 128, FFN 14,336.
 * - Bus bandwidths inside one H100 node (Ultra-Scale Playbook, nccl-tests at 256 MB; docs/formulas.md#reference-values):
 *   all-gather 249.8 GB/s, reduce-scatter 249.7 GB/s. A ring all-reduce is a reduce-scatter then an all-gather, so
 *   without NVLink SHARP the three share one bus bandwidth (nccl-tests doc/PERFORMANCE.md bus-bandwidth factors).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { axisLink, kindEfficiency, linkSeconds } from '../../../shared/comm/links';
import { findGpu } from '../../../shared/hardware/gpus';
import { findPreset } from '../../../shared/model/presets';
import { makePlan } from '../../../shared/plan/defaults';
import type { EngineId, GpuSpec, Plan } from '../../../shared/plan/types';
import { gemmSeconds, type GemmUnit } from '../../../shared/time/kernels/gemm';
import { estimateStepTime } from '../../../shared/time/estimate';
import { projectionWidths } from '../../../shared/time/projections';
import { gpt } from '../sim/fixtures';

const H100 = findGpu('h100-sxm') as GpuSpec;
const A100 = findGpu('a100-80gb') as GpuSpec;

function llama8b(engine: EngineId, tp: number, extra: Partial<Plan['parallel']> = {}): Plan {
  const p = findPreset('llama-3.1-8b');
  assert.ok(p);
  return makePlan({
    engine, model: p.model, training: { microBatch: 12, seqLen: 8192, precision: 'bf16-mixed' },
    parallel: { tp, dp: 8, sp: tp > 1, ...extra }, cluster: { gpusPerNode: 8, nodes: tp },
  }, H100);
}

const layouts: [string, Plan, number[], number[]][] = [
  ['Megatron: one linear_qkv, one linear_fc1 of 2·ffn', llama8b('megatron', 8), [(4 + 2) * 128], [2 * 1792]],
  ['torchtitan: wq, wk, wv and w1, w3', llama8b('fsdp2', 8), [4 * 128, 128, 128], [1792, 1792]],
  ['transformers under DeepSpeed: q_proj, k_proj, v_proj and gate_proj, up_proj', llama8b('deepspeed', 8), [512, 128, 128], [1792, 1792]],
  ['nanotron: qkv_proj, gate_up_proj', llama8b('nanotron', 8), [768], [3584]],
];
for (const [name, plan, qkv, mlpIn] of layouts) {
  test(`projection GEMMs of Llama 3.1 8B at TP 8, ${name}`, () => {
    const w = projectionWidths(plan, 32 / 8, 8 / 8, 128, 14336 / 8);
    assert.deepEqual(w.qkv, qkv);
    assert.deepEqual(w.mlpIn, mlpIn);
  });
}

test('GPT-2 keeps one c_attn weight in any engine; its plain MLP has one input projection', () => {
  const plan = makePlan({ engine: 'fsdp2', model: gpt(12, 768, 12), training: { microBatch: 1, seqLen: 1024 }, parallel: { dp: 1 } }, H100);
  const w = projectionWidths(plan, 12, 12, 64, 3072);
  assert.deepEqual(w.qkv, [3 * 768]);
  assert.deepEqual(w.mlpIn, [3072]);
});

test('a 128-column K projection over 98,304 tokens is bound by reading its 805 MB input, which fused QKV reads once', () => {
  // H100 SXM: 3.35 TB/s HBM (datasheet). Reading A (98,304 × 4,096 bf16) alone takes ≥ 0.24 ms; its 103 GFLOP take
  // 0.10 ms at the dense peak, so the GEMM cannot run faster than the read.
  const u: GemmUnit = { rate: 989.5e12 * 0.8, sms: 132, hbm: 3.35e12, inBytes: 2 };
  const T = 98304, h = 4096;
  const k = gemmSeconds(T, 128, h, u);
  assert.ok(k >= (T * h * 2) / 3.35e12, `${(k * 1e3).toFixed(3)} ms`);
  const split = gemmSeconds(T, 512, h, u) + 2 * k;
  const fused = gemmSeconds(T, 768, h, u);
  // Same FLOPs; the split reads the input three times.
  assert.ok(split > fused * 1.2, `split ${(split * 1e3).toFixed(3)} ms vs fused ${(fused * 1e3).toFixed(3)} ms`);
});

test('H100 all-gather and reduce-scatter inside a node run at the measured 250 GB/s, not the all-reduce rate', () => {
  const link = axisLink(llama8b('fsdp2', 8), 'tp');
  assert.equal(link.tier, 'nvlink');
  assert.equal(link.nvls, true);
  const S = 98304 * 4096 * 2;
  for (const [kind, busbw] of [['all-gather', 249.8e9], ['reduce-scatter', 249.7e9]] as const) {
    const expected = (S * 7) / 8 / busbw;
    const t = linkSeconds(kind, S, link);
    assert.ok(Math.abs(t / expected - 1) <= 0.05, `${kind}: ${(t * 1e3).toFixed(2)} ms vs ${(expected * 1e3).toFixed(2)} ms`);
  }
});

test('without NVLink SHARP (A100) all-gather, reduce-scatter and all-reduce share one bus bandwidth', () => {
  for (const kind of ['all-gather', 'reduce-scatter', 'all-to-all'] as const) {
    assert.equal(kindEfficiency(kind, 'nvlink', false), 1);
    assert.equal(kindEfficiency(kind, 'network', false), 1);
  }
  const p = findPreset('llama-3.1-8b');
  assert.ok(p);
  const plan = makePlan({ engine: 'megatron', model: p.model, training: { microBatch: 1, seqLen: 4096 }, parallel: { tp: 8, dp: 1, sp: true }, cluster: { gpusPerNode: 8, nodes: 1 } }, A100);
  const link = axisLink(plan, 'tp');
  assert.equal(link.nvls, false);
  const S = 2 ** 28;
  const ag = linkSeconds('all-gather', S, link);
  const ar = linkSeconds('all-reduce', S, link);
  // Ring all-reduce = reduce-scatter + all-gather of the same buffer: twice the all-gather's time.
  assert.ok(Math.abs(ar / (2 * ag) - 1) <= 0.02, `all-reduce ${(ar * 1e3).toFixed(2)} ms vs 2 × all-gather ${(ag * 1e3).toFixed(2)} ms`);
});

test('torchtitan 8B at TP 8 without overlap: forward TP communication is 2 all-gathers + 2 reduce-scatters per layer at 250 GB/s', () => {
  // 32 layers × 4 collectives of 805 MB × 7/8 at ≈ 249.75 GB/s = 0.361 s per step (one micro-batch). All-reduce halves
  // at the model's NVLink all-reduce rate would give 0.26 s.
  const e = estimateStepTime(llama8b('fsdp2', 8));
  const comm = e.operatorTerms.find((t) => t.name === 'comm');
  assert.ok(comm);
  const expected = (32 * 4 * (98304 * 4096 * 2 * 7) / 8) / 249.75e9;
  assert.ok(Math.abs(comm.forward / expected - 1) <= 0.05, `${comm.forward.toFixed(3)} s vs ${expected.toFixed(3)} s`);
});
