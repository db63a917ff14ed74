/**
 * What Megatron's selective recomputation reruns, module by module (shared/time/megatronRecompute.ts), with stub
 * timers (GEMMs at 1 PFLOP/s as 2·M·N·K FLOPs, attention at 1 PFLOP/s, HBM at 1 TB/s) so each expected time is its
 * kernels' FLOPs or bytes from first principles: Llama-3-8B's layer on one rank, 4,096 tokens, bf16.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { GroupLink } from '../../../shared/comm/links';
import { findGpu } from '../../../shared/hardware/gpus';
import { findPreset } from '../../../shared/model/presets';
import { makePlan } from '../../../shared/plan/defaults';
import type { GpuSpec, MegatronRecomputeModule, ModelSpec } from '../../../shared/plan/types';
import { layerCost, type KernelTimers } from '../../../shared/time/layerCost';
import { microbatchWork } from '../../../shared/time/microbatch';
import { FITTED_PARAMS } from '../../../shared/time/params';

const H100 = findGpu('h100-sxm') as GpuSpec;
const LLAMA = findPreset('llama-3-8b')!.model;
const T = 4096;

const timers: KernelTimers = {
  gemm16: (m, n, k) => (2 * m * n * k) / 1e15, gemm8: (m, n, k) => (2 * m * n * k) / 1e15,
  attention: (_pass, flops) => flops / 1e15, hbm: (b) => b / 1e12,
  impl: 'fa2', fusion: 'fused', fp8: false, params: { ...FITTED_PARAMS, kernelGap: 0 },
};
const link = { size: 1 } as GroupLink;
const shape = { tokens: T, normTokens: T, qHeads: 32, kvHeads: 8, ffn: 14_336, b: 1, seq: T, cp: 1, tp: 1, actBytes: 2 };
const plan = (modules: MegatronRecomputeModule[] | undefined, model: ModelSpec = LLAMA) => makePlan({
  model, engine: 'megatron',
  training: { microBatch: 1, seqLen: T, precision: 'bf16-mixed', recompute: 'selective', modelImpl: 'megatron', ...(modules ? { recomputeModules: modules } : {}) },
} as never, H100);
const cost = (modules: MegatronRecomputeModule[] | undefined) => layerCost(plan(modules), shape, timers, { tp: link, cp: link, ep: link }, 1);

test('core attention, the default: the fused kernel\'s forward once more, no GEMM', () => {
  const c = cost(undefined);
  assert.equal(c.selective.attention, c.fwd.attention);
  assert.equal(c.selective.gemm, 0);
  assert.equal(cost([]).selectiveTotal, 0);
});

test('mlp: the MLP\'s up (gate and up) and down GEMMs and its SwiGLU rerun; its FLOPs count as recomputed', () => {
  const c = cost(['mlp']);
  const flops = 2 * T * 2 * 14_336 * 4096 + 2 * T * 4096 * 14_336;
  assert.ok(Math.abs(c.selective.gemm - flops / 1e15) < 1e-15);
  assert.equal(c.selectiveFlops, flops);
  assert.equal(c.selective.attention, 0);
  assert.ok(c.selective.elementwise > 0);
  // A stage of 32 such layers reruns 32 layers' MLP FLOPs (core attention is not in the list).
  const w = microbatchWork(plan(['mlp']), 0);
  assert.equal(w.recomputeFlops, 32 * flops);
});

test('layernorm on a MoE layer: its pre-MLP norm reads and writes 4,096 × 2,048 bf16 once more', () => {
  const q = findPreset('qwen3-30b-a3b')!.model;
  const moeShape = { ...shape, qHeads: 32, kvHeads: 4, ffn: 6144, moe: { experts: 128, tokensPerExpert: (T * 8) / 128, expertFfn: 768, sharedFfn: 0, routerOut: 128 } };
  const at = (modules: MegatronRecomputeModule[]) => layerCost(plan(modules, q), moeShape, timers, { tp: link, cp: link, ep: link }, 1).selective;
  const withNorm = at(['moe_act', 'layernorm']), without = at(['moe_act']);
  assert.ok(Math.abs(withNorm.elementwise - without.elementwise - (2 * 2 * T * 2048) / 1e12) < 1e-15);
  // moe_act reruns the routed experts' activation only: memory-bound, no GEMM.
  assert.ok(without.elementwise > 0);
  assert.equal(without.gemm, 0);
});
