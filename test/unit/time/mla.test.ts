/**
 * Multi-head latent attention in the step-time model: the GEMMs an MLA layer runs, its core-attention FLOPs and its
 * projection FLOPs. Expected values are written out by hand from the module layouts:
 * - transformers DeepseekV3Attention / Megatron-LM MLASelfAttention: q_a (h → r_q), q_b (r_q → a·(d_n + d_r)),
 *   kv_a (h → r_kv + d_r), kv_b (r_kv → a·(d_n + d_v)), o (a·d_v → h); Megatron builds q_a and kv_a duplicated and runs
 *   them on the sequence-parallel shard (multi_latent_attention.py `parallel_mode='duplicated'`).
 * - DeepSeek-V3 config.json: h 7168, 128 heads, r_q 1536, r_kv 512, d_n 128, d_r 64, d_v 128.
 * - Megatron-LM training.py num_floating_point_operations, MLA branch: per token, the projection FMAs are
 *   r_q·(h + a·(d_n + d_r)) + r_kv·(h + a·(d_n + d_v)) + h·d_r + a·d_v·h (plus one FMA per latent element for the
 *   norms, which the model counts as memory-bound work instead).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { GroupLink } from '../../../shared/comm/links';
import { findGpu } from '../../../shared/hardware/gpus';
import { findPreset } from '../../../shared/model/presets';
import { makePlan } from '../../../shared/plan/defaults';
import type { GpuSpec, ModelSpec, Plan } from '../../../shared/plan/types';
import { attentionProjFlops, coreAttentionFlops } from '../../../shared/time/flops';
import { layerCost, type KernelTimers, type LayerShape } from '../../../shared/time/layerCost';
import { FITTED_PARAMS } from '../../../shared/time/params';

const H100 = findGpu('h100-sxm') as GpuSpec;
const h = 7168, a = 128, rq = 1536, rkv = 512, dn = 128, dr = 64, dv = 128;

function v3(): ModelSpec {
  const p = findPreset('deepseek-v3');
  assert.ok(p?.model.mla, 'the DeepSeek-V3 preset reads as MLA');
  return p.model;
}

/** Timers that record every GEMM (m, n, k) and every attention pass's FLOPs, and take no time. */
function recorder(impl: KernelTimers['impl'] = 'fa2'): { t: KernelTimers; gemms: string[]; attention: [string, number][] } {
  const gemms: string[] = [];
  const attention: [string, number][] = [];
  const g = (m: number, n: number, k: number) => { gemms.push(`${m}x${n}x${k}`); return 0; };
  const t: KernelTimers = {
    gemm16: g, gemm8: g, attention: (pass, flops) => { attention.push([pass, flops]); return 0; }, hbm: () => 0,
    impl, fusion: 'eager', fp8: false, params: FITTED_PARAMS,
  };
  return { t, gemms, attention };
}

const link = (size: number) => ({ size, tier: 'nvlink', busbw: 400e9, alpha: 5e-6, perNode: size, nodes: 1, nvls: false, a2aBusbw: 0 }) as GroupLink;

function plan(tp: number, flash = true): Plan {
  const model = { ...v3(), moe: undefined };
  return makePlan({
    engine: 'megatron', model, training: { microBatch: 1, seqLen: 4096, precision: 'bf16-mixed', flashAttention: flash },
    parallel: { tp, sp: tp > 1, dp: 1 }, cluster: { gpusPerNode: 8, nodes: 1 },
  }, H100);
}

function shape(tp: number): LayerShape {
  const T = 4096;
  return { tokens: T, normTokens: T / tp, qHeads: a / tp, kvHeads: a / tp, ffn: 18432 / tp, b: 1, seq: 4096, cp: 1, tp, actBytes: 2 };
}

test('an MLA layer at TP 8 runs its five projections at their own shapes, the down projections on the sequence shard', () => {
  const tp = 8, T = 4096, ah = a / tp;
  const r = recorder();
  layerCost(plan(tp), shape(tp), r.t, { tp: link(tp), cp: link(1), ep: link(1) }, 1);
  // [M, N, K] of each linear's forward; backward runs M×K×N (input gradient) and N×K×M (weight gradient).
  const linears: [number, number, number][] = [
    [T, ah * (dn + dr), rq], [T, h, ah * dv], [T / tp, rq, h], [T / tp, rkv + dr, h], [T, ah * (dn + dv), rkv],
    [T, (2 * 18432) / tp, h], [T, h, 18432 / tp],
  ];
  const expected = linears.flatMap(([m, n, k]) => [`${m}x${n}x${k}`, `${m}x${k}x${n}`, `${n}x${k}x${m}`]);
  assert.deepEqual([...r.gemms].sort(), [...expected].sort());
});

test('MLA core attention: QKᵀ over d_n + d_r and attention·V over d_v, causal half, backward 2.5× the forward', () => {
  const tp = 8, T = 4096, s = 4096;
  const r = recorder();
  layerCost(plan(tp), shape(tp), r.t, { tp: link(tp), cp: link(1), ep: link(1) }, 1);
  // QKᵀ: 2·T·s·(a/t)·(d_n + d_r); attention·V: 2·T·s·(a/t)·d_v; the causal mask halves both.
  const fwd = (2 * T * s * (a / tp) * (dn + dr) + 2 * T * s * (a / tp) * dv) / 2;
  assert.deepEqual(r.attention, [['fwd', fwd], ['bwd', 2.5 * fwd]]);
  // The full-matrix convention of shared/time/flops.ts (no causal halving) counts twice the kernel's forward.
  assert.equal(coreAttentionFlops(plan(tp).model, { tokens: T, seqLen: s, tp, etp: 1 }), 2 * fwd);
});

test('MLA under eager attention: QKᵀ is d_n + d_r deep, attention·V d_v wide', () => {
  const r = recorder('eager');
  layerCost(plan(1, false), shape(1), r.t, { tp: link(1), cp: link(1), ep: link(1) }, 1);
  // One strided-batched GEMM over b·a heads: [a·s, s, d_qk] and [a·s, d_v, s].
  assert.ok(r.gemms.includes(`${a * 4096}x4096x${dn + dr}`), r.gemms.join(' '));
  assert.ok(r.gemms.includes(`${a * 4096}x${dv}x4096`), r.gemms.join(' '));
});

test('MLA projection FLOPs per token equal Megatron\'s num_floating_point_operations terms (norms aside)', () => {
  const m = v3();
  const megatronFma = rq * (h + a * (dn + dr)) + rkv * (h + a * (dn + dv)) + h * dr + a * dv * h;
  assert.equal(attentionProjFlops(m, { tokens: 1, seqLen: 4096, tp: 1, etp: 1 }), 2 * megatronFma);
  // At TP 8 with sequence parallelism each rank runs an eighth of every projection (the down projections on its
  // eighth of the tokens, the others on an eighth of the heads).
  assert.equal(attentionProjFlops(m, { tokens: 8, seqLen: 4096, tp: 8, etp: 1, sp: true }), 2 * megatronFma);
  // Without sequence parallelism the duplicated down projections run on all tokens on every rank.
  const down = h * rq + h * (rkv + dr);
  assert.equal(attentionProjFlops(m, { tokens: 8, seqLen: 4096, tp: 8, etp: 1 }), 2 * megatronFma + 2 * 8 * down * (1 - 1 / 8));
});
