/**
 * Korthikanti et al. 2022 Fig. 1 formula vectors (docs/formulas.md#reference-values, Table 3 configs) and Megatron's distributed-optimizer
 * bytes-per-parameter table (docs/user-guide/features/dist_optimizer.md, docs/formulas.md#model-states).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { inFlightMicrobatchCount, layerActivationBytes, type ActivationShape } from '../../../shared/memory/activations';
import { optimizerBytesPerParam } from '../../../shared/memory/dtypes';
import { estimateMemory } from '../../../shared/memory/estimate';
import { gradientBytes, masterWeightBytes, optimizerStateBytes, parameterBytes } from '../../../shared/memory/modelStates';
import { makePlan } from '../../../shared/plan/defaults';
import type { Precision, Dtype } from '../../../shared/plan/types';
import { GiB, H100, preset } from './helpers';

// Table 3: s = 2048, v = 51200, t = 8; interleaving v = 3 for 175B and 530B; micro-batches m = global batch (no DP).
const CONFIGS = [
  { name: '22B', a: 64, h: 6144, L: 48, p: 1, v: 1, B: 4, b: 4, states: 45.5625, none: 59.25, spSel: 9.5625 },
  { name: '175B', a: 96, h: 12288, L: 96, p: 8, v: 3, B: 64, b: 1, states: 45.5625, none: 66.84375, spSel: 12.3515625 },
  { name: '530B', a: 128, h: 20480, L: 105, p: 35, v: 3, B: 280, b: 1, states: 31.640625, none: 114.0234375, spSel: 23.076171875 },
  { name: '1T', a: 160, h: 25600, L: 128, p: 64, v: 1, B: 512, b: 1, states: 32.958984375, none: 131.25, spSel: 26.5625 },
];

describe('Korthikanti et al. 2022 Fig. 1 formula vectors', () => {
  for (const c of CONFIGS) {
    const t = 8;
    const shape = (sp: boolean): ActivationShape => ({
      sLocal: 2048, sKeys: 2048, b: c.b, h: c.h, heads: c.a, kvHeadsEff: c.a, headDim: c.h / c.a, ffn: 4 * c.h, gated: false,
      tp: t, sp, flash: false, actBytes: 2, dropout: true,
    });
    // The first stage holds L/p layers of p·(1 + (p − 1)/(p·v)) micro-batches (Eq.5 with the interleave factor).
    const inflight = inFlightMicrobatchCount(c.v > 1 ? 'interleaved' : '1f1b', c.p, c.v, c.B / c.b, 0);
    test(`${c.name}: params + grads + optimizer = ${c.states} GiB (18 B × 12h²L/(t·p))`, () => {
      const psi = (12 * c.h * c.h * c.L) / (t * c.p);
      const bytes = parameterBytes(psi, 2) + gradientBytes(psi, 4) + masterWeightBytes(psi, 4) + optimizerStateBytes(psi, optimizerBytesPerParam('adam', c.h));
      assert.equal(bytes / GiB, c.states);
    });
    test(`${c.name}: activations without recomputation = ${c.none} GiB (Eq.2)`, () => {
      const bytes = layerActivationBytes(shape(false), 'none') * (c.L / c.p) * inflight;
      assert.ok(Math.abs(bytes / GiB - c.none) < 1e-9, `${bytes / GiB}`);
    });
    test(`${c.name}: activations with SP + selective recomputation = ${c.spSel} GiB (Eq.6)`, () => {
      const bytes = layerActivationBytes(shape(true), 'selective') * (c.L / c.p) * inflight;
      assert.ok(Math.abs(bytes / GiB - c.spSel) < 1e-9, `${bytes / GiB}`);
    });
  }
});

describe('Megatron distributed optimizer bytes per parameter', () => {
  // [precision, grad dtype, fp32 grad copy, non-distributed, distributed(d)] from dist_optimizer.md.
  const ROWS: [Precision, Dtype, boolean, number, (d: number) => number][] = [
    ['fp16-mixed', 'fp16', true, 20, (d) => 4 + 16 / d],
    ['bf16-mixed', 'fp32', false, 18, (d) => 6 + 12 / d],
    ['fp32', 'fp32', false, 16, (d) => 8 + 8 / d],
  ];
  for (const [precision, gradDtype, fp32GradAccum, plain, dist] of ROWS) {
    for (const d of [1, 2, 8, 64]) {
      test(`${precision} params, ${gradDtype} grads, d=${d}: ${plain} vs ${dist(d)}`, () => {
        // The table is Megatron's (megatron/core docs dist_optimizer.md): the Megatron engine's precision regime.
        const base = { engine: 'megatron' as const, model: preset('llama-2-7b'), training: { precision, gradDtype, fp32GradAccum }, cluster: { gpusPerNode: Math.min(8, d), nodes: Math.max(1, d / 8) } };
        const distPlan = makePlan({ ...base, parallel: { dp: d, sharding: { style: 'megatron-distopt', stage: 1 } } }, H100);
        const ddpPlan = makePlan({ ...base, parallel: { dp: d, sharding: { style: 'ddp', stage: 0 } } }, H100);
        for (const [plan, expected] of [[distPlan, dist(d)], [ddpPlan, plain]] as const) {
          const s = estimateMemory(plan).stages[0];
          assert.ok(Math.abs(s.modelStatesBytes / s.parametersPerRank - expected) < 1e-9, `${s.modelStatesBytes / s.parametersPerRank}`);
        }
      });
    }
  }
});

describe('Megatron theoretical_memory_usage.py weight and optimizer memory (docs/formulas.md#model-states)', () => {
  test('Llama-3-8B, TP 8, PP 1, padded vocabulary 129,024: per-rank parameters and 18 bytes each', () => {
    // Megatron: self_attn = 2h²(1 + G/H)(kv·H/h), mlp = 2h·ffn·3/2 (swiglu), layernorms 2h·1 (RMSNorm), embedding h·V_pad
    // (twice when untied and p = 1); tp_sharded = ((attn + mlp)·L + 2·embedding)/t, replicated = layernorms·L + final norm.
    const h = 4096, L = 32, ffn = 14336, t = 8, V = 129_024;
    const attn = 2 * h * h * ((1 + 8 / 32) * ((128 * 32) / h));
    const mlp = 2 * h * ffn * 1.5;
    const perRank = ((attn + mlp) * L + 2 * h * V) / t + 2 * h * L + h;
    assert.equal(perRank, 1_004_802_048);
    const plan = makePlan({
      model: { ...preset('llama-3-8b'), vocabPadMultiple: 128 },
      training: { precision: 'bf16-mixed', gradDtype: 'fp32' },
      parallel: { tp: 8, dp: 1, sharding: { style: 'megatron-distopt', stage: 0 } },
    }, H100);
    const s = estimateMemory(plan).stages[0];
    assert.equal(s.parametersPerRank, perRank);
    // num_bytes_per_parameter = 18 without the distributed optimizer.
    assert.equal(s.modelStatesBytes, 18 * perRank);
  });
});
