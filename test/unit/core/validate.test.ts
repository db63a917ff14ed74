/** validatePlan: one case per problem code, and a consistent plan has none. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { validatePlan } from '../../../shared/plan/validate';
import type { Plan } from '../../../shared/plan/types';
import { estimateMemory } from '../../../shared/memory/estimate';
import { llamaPlan, preset } from './helpers';

/** Consistent base: Llama-3-8B (32 heads, 8 KV heads, 32 layers), TP 2, PP 2, DP 2 on one node of 8. */
const base = (): Plan => llamaPlan({ training: { gradAccum: 4 }, parallel: { tp: 2, pp: 2, dp: 2 }, cluster: { gpusPerNode: 8, nodes: 1 } });

/** Returns a copy of the base plan with one part replaced. */
function edit(fn: (p: Plan) => Plan): Plan {
  return fn(base());
}
const par = (p: Plan, x: Partial<Plan['parallel']>): Plan => ({ ...p, parallel: { ...p.parallel, ...x } });
const tr = (p: Plan, x: Partial<Plan['training']>): Plan => ({ ...p, training: { ...p.training, ...x } });
const mod = (p: Plan, x: Partial<Plan['model']>): Plan => ({ ...p, model: { ...p.model, ...x } });
const shard = (p: Plan, x: Partial<Plan['parallel']['sharding']>): Plan => par(p, { sharding: { ...p.parallel.sharding, ...x } });
const mixtral = (p: Plan): Plan => ({ ...p, model: preset('mixtral-8x7b') });

const CASES: [string, Plan][] = [
  ['value-not-positive-integer', edit((p) => tr(p, { microBatch: 0 }))],
  ['value-not-positive-integer', edit((p) => par(p, { tp: 1.5 }))],
  ['value-negative', edit((p) => ({ ...p, overhead: { ...p.overhead, cudaContextBytes: -1 } }))],
  ['value-not-finite', edit((p) => tr(p, { seqLen: Number.NaN }))],
  ['value-absurd', edit((p) => mod(p, { hiddenSize: 1e16 }))],
  // DeepSeek-V3 and GLM-4.5 build one prediction module; more modules than layers is no model.
  ['value-absurd', edit((p) => mod(p, { mtpLayers: 33 }))],
  ['value-negative', edit((p) => mod(p, { mtpLayers: -1 }))],
  // 2^21 GPUs (2^18 nodes of 8) is beyond any cluster built; the layout itself is consistent (DP = world / 4).
  ['value-absurd', edit((p) => ({ ...par(p, { dp: 2 ** 19 }), cluster: { ...p.cluster, nodes: 2 ** 18 } }))],
  ['tp-divides-heads', edit((p) => ({ ...par(p, { tp: 3, dp: 1 }), cluster: { ...p.cluster, gpusPerNode: 6 } }))],
  ['kv-heads-divide-heads', edit((p) => mod(p, { kvHeads: 6 }))],
  ['tp-replicates-kv-heads', edit((p) => ({ ...par(p, { tp: 16, pp: 1, dp: 1 }), model: { ...p.model, heads: 32 }, cluster: { ...p.cluster, gpusPerNode: 16 } }))],
  ['tp-divides-kv-heads', edit((p) => mod(par(p, { tp: 4, dp: 1 }), { kvHeads: 6, heads: 24 }))],
  // Qwen3-Next's Gated DeltaNet layers: 16 key and 32 value heads (config.json linear_num_key_heads / _value_heads).
  ['linear-heads-divide', edit((p) => mod(p, { linearAttention: { layers: 24, keyHeads: 12, valueHeads: 32, keyHeadDim: 128, valueHeadDim: 128, convKernel: 4 } }))],
  ['tp-divides-linear-heads', edit((p) => mod(par(p, { tp: 4, dp: 1 }), { linearAttention: { layers: 24, keyHeads: 2, valueHeads: 4, keyHeadDim: 128, valueHeadDim: 128, convKernel: 4 } }))],
  ['sp-without-tp', edit((p) => ({ ...par(p, { tp: 1, sp: true, dp: 4 }) }))],
  ['moe-topk-exceeds-experts', edit((p) => ({ ...p, model: { ...preset('mixtral-8x7b'), moe: { ...preset('mixtral-8x7b').moe!, topK: 9 } } }))],
  ['ep-divides-experts', edit((p) => par(mixtral(p), { ep: 3 }))],
  ['ep-without-moe', edit((p) => par(p, { ep: 2 }))],
  ['ep-divides-dp', edit((p) => par(mixtral(p), { ep: 8 }))],
  ['world-size-mismatch', edit((p) => par(p, { dp: 4 }))],
  ['pp-exceeds-layers', edit((p) => mod(p, { layers: 1 }))],
  ['stage-layers-length', edit((p) => par(p, { stageLayers: [32] }))],
  ['stage-layers-sum', edit((p) => par(p, { stageLayers: [10, 10] }))],
  ['pp-divides-layers', edit((p) => mod(p, { layers: 31 }))],
  ['vpp-divides-layers', edit((p) => par(p, { vpp: 3, schedule: 'interleaved' }))],
  // An uneven split needs at least v layers on every stage.
  ['vpp-divides-layers', edit((p) => par(p, { vpp: 4, schedule: 'interleaved', stageLayers: [3, 29] }))],
  ['vpp-needs-interleaved', edit((p) => par(p, { vpp: 2, schedule: '1f1b' }))],
  ['interleaved-microbatches', edit((p) => tr(par(p, { vpp: 2, schedule: 'interleaved' }), { gradAccum: 3, globalBatch: 6 }))],
  ['pipeline-underfilled', edit((p) => tr(p, { gradAccum: 1, globalBatch: 2 }))],
  ['global-batch-mismatch', edit((p) => tr(p, { globalBatch: 7 }))],
  ['cp-divides-seq', edit((p) => tr(par(p, { cp: 2, dp: 1 }), { seqLen: 2050 }))],
  ['sp-divides-seq', edit((p) => tr(par(p, { sp: true }), { seqLen: 2047 }))],
  ['seq-exceeds-positions', { ...llamaPlan({ model: preset('gpt2'), training: { seqLen: 2048 } }) }],
  ['recompute-layers-ignored', edit((p) => tr(p, { recomputeLayers: 2 }))],
  ['shard-group-divides-dp', edit((p) => shard(p, { shardGroupSize: 3 }))],
  ['offload-params-needs-zero3', edit((p) => shard(p, { stage: 1, offloadParams: 'cpu' }))],
  ['offload-needs-zero', edit((p) => shard(p, { stage: 0, offloadOptimizer: 'cpu' }))],
  ['lora-unknown-target', edit((p) => ({ ...p, lora: { rank: 8, targets: ['qkv' as 'q'], baseDtype: 'bf16' } }))],
  ['qlora-with-tp', edit((p) => ({ ...p, lora: { rank: 8, targets: ['q'], baseDtype: 'nf4' } }))],
  // The base model's k and v project 4,096 to 1,024 (8 KV heads of 128): rank 1,024 adapts them at full rank.
  ['lora-rank-too-large', edit((p) => ({ ...p, lora: { rank: 1024, targets: ['q', 'k', 'v'], baseDtype: 'bf16' } }))],
];

describe('validatePlan', () => {
  test('the base plan is consistent', () => assert.deepEqual(validatePlan(base()), []));
  for (const [code, plan] of CASES) {
    test(`reports ${code}`, () => {
      const problems = validatePlan(plan);
      const p = problems.find((x) => x.code === code);
      assert.ok(p, `${code} missing in ${JSON.stringify(problems.map((x) => x.code))}`);
      assert.ok(p.message.length > 0 && p.paths.length > 0);
      // The estimate carries the same problems and never shows NaN or negative numbers.
      const e = estimateMemory(plan);
      assert.ok(e.problems.some((x) => x.code === code));
      for (const s of e.stages) assert.ok(Number.isFinite(s.peakReservedBytes) && s.peakReservedBytes >= 0);
    });
  }
  test('a LoRA rank below every adapted projection\'s narrower side is not warned about', () => {
    const codes = (rank: number, targets: ('q' | 'k' | 'v')[]) => validatePlan(edit((p) => ({ ...p, lora: { rank, targets, baseDtype: 'bf16' } }))).map((x) => x.code);
    assert.ok(!codes(1023, ['q', 'k', 'v']).includes('lora-rank-too-large'));
    // q alone is 4,096 × 4,096: rank 1,024 is a quarter of it.
    assert.ok(!codes(1024, ['q']).includes('lora-rank-too-large'));
  });
  test('one micro-batch is named in the singular', () => {
    const p = validatePlan(edit((x) => tr(x, { gradAccum: 1, globalBatch: 2 }))).find((x) => x.code === 'pipeline-underfilled');
    assert.match(p?.message ?? '', /^Only 1 micro-batch for 2 pipeline stages/);
  });
  test('an uneven split with v layers or more per stage is consistent (Megatron\'s --account-for-embedding/loss split)', () => {
    // Llama 3.1 405B at PP 8 · VPP 8 with the embedding and the loss counted as layers: (126 + 2) / 64 = 2 per
    // virtual stage, so the first and last stages hold 15 layers and the others 16 (Megatron-Bridge's H100 recipe).
    // Scaled to this 32-layer base: PP 2 · VPP 4 with 15 + 17 layers.
    const uneven = edit((p) => par(p, { vpp: 4, schedule: 'interleaved', stageLayers: [15, 17] }));
    assert.deepEqual(validatePlan(uneven).filter((x) => x.code === 'vpp-divides-layers'), []);
  });
  test('impossible layouts give no stages', () => {
    assert.deepEqual(estimateMemory(edit((p) => mod(p, { layers: 1 }))).stages, []);
    assert.deepEqual(estimateMemory(edit((p) => tr(p, { microBatch: -2 }))).stages, []);
  });
});
