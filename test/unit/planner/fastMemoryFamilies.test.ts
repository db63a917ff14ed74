/**
 * peakMemoryFast keeps the states half of each stage (model states, buffers, gathered parameters) for the last layout
 * family and recomputes only the activations per micro batch and recomputation. Whatever the order of the plans, every
 * plan must get exactly the largest stage peak of the traceable estimateMemory computed from scratch.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateMemory } from '../../../shared/memory/estimate';
import { peakMemoryFast } from '../../../shared/memory/fast';
import { makePlan } from '../../../shared/plan/defaults';
import type { ModelSpec, Plan, ShardingStyle } from '../../../shared/plan/types';
import { planLayouts } from '../../../shared/planner/plan-layouts';
import { stepSecondsFast } from '../../../shared/time/stepTime';
import { TimeCache } from '../../../shared/time/cache';

const dense: ModelSpec = {
  name: 'dense-12', layers: 12, hiddenSize: 2048, heads: 16, kvHeads: 4, headDim: 128, ffnSize: 8192, gatedMlp: true,
  attnBias: 'none', mlpBias: false, tiedEmbeddings: false, positions: 'rotary', maxPositions: 4096, norm: 'rmsnorm',
  qkNorm: false, vocabSize: 32000,
};

/** Every layer MoE (uniform stages), and a mix of dense and MoE layers (stages differ). */
const moeAll: ModelSpec = {
  ...dense, name: 'moe-all', moe: { experts: 8, topK: 2, expertFfnSize: 2048, sharedExperts: 1, sharedExpertFfnSize: 2048, sharedExpertGate: false, denseFirstLayers: 0, layerFrequency: 1 },
};
const moeMix: ModelSpec = { ...moeAll, name: 'moe-mix', layers: 14, moe: { ...moeAll.moe!, denseFirstLayers: 2, layerFrequency: 2 } };
/** Two multi-token-prediction modules on the last stage (shared/model/mtp.ts): the uniform-middle shortcut must still see them. */
const moeMtp: ModelSpec = { ...moeAll, name: 'moe-mtp', mtpLayers: 2 };

function base(model: ModelSpec, style: ShardingStyle): Plan {
  return makePlan({
    model, training: { microBatch: 1, globalBatch: 64, seqLen: 2048 },
    parallel: { dp: 32, sharding: { style } }, cluster: { gpusPerNode: 8, nodes: 4 },
  });
}

/** Every plan the search evaluates, in its order. */
function searchedPlans(b: Plan): Plan[] {
  const plans: Plan[] = [];
  planLayouts(b, { exhaustive: true, topK: 1 }, { peakBytes: (p) => { plans.push(p); return 1; }, stepSeconds: (p) => stepSecondsFast(p, new TimeCache()) });
  return plans;
}

/** The traceable figure: the largest reserved stage peak of estimateMemory on a deep copy (no shared objects). */
const traceable = (p: Plan) => Math.max(...estimateMemory(structuredClone(p)).stages.map((s) => s.peakReservedBytes));

describe('peakMemoryFast with its family cache equals estimateMemory in any order', () => {
  for (const [model, style] of [[dense, 'fsdp2'], [dense, 'deepspeed'], [moeAll, 'megatron-distopt'], [moeMix, 'fsdp2'], [moeMtp, 'megatron-distopt']] as const) {
    test(`${model.name}, ${style}: search order, reversed, and alternating families`, () => {
      const plans = searchedPlans(base(model, style));
      assert.ok(plans.length > 100, `only ${plans.length} layouts searched`);
      const expected = plans.map(traceable);
      const orders = [plans.map((_, i) => i), plans.map((_, i) => plans.length - 1 - i), plans.map((_, i) => (i * 7919) % plans.length)];
      for (const order of orders) {
        for (const i of order) assert.equal(peakMemoryFast(plans[i]), expected[i], `layout ${i}`);
      }
    });
  }

  test('with a bound `enough`, the answer passes it and never exceeds the plan\'s peak (the early answers from states and saved activations)', () => {
    // The planner needs no exact figure above the limit: any value in (enough, peak] keeps its decisions.
    for (const [model, style] of [[dense, 'fsdp2'], [dense, 'ddp'], [dense, 'deepspeed'], [moeMix, 'megatron-distopt'], [moeMtp, 'fsdp2']] as const) {
      const plans = searchedPlans(base(model, style));
      let early = 0;
      for (const p of plans) {
        const peak = traceable(p);
        for (const enough of [peak * 0.1, peak * 0.5, peak * 0.99]) {
          const v = peakMemoryFast(p, enough);
          assert.ok(v > enough && v <= peak, `${model.name} ${style}: ${v} for enough ${enough}, peak ${peak}`);
          if (v < peak) early++;
        }
        assert.equal(peakMemoryFast(p, peak), peak);
      }
      assert.ok(early > 0, `${model.name} ${style}: no early answer`);
    }
  });

  test('a plan sharing the parallel spec but not the precision, regime, model implementation, flash attention or recomputation is not served from the family', () => {
    // Micro batch 8: the activations, not the gradients at the end of the backward, set this layout's peak.
    const first = searchedPlans(base(dense, 'fsdp2'))[0];
    const p: Plan = { ...first, training: { ...first.training, microBatch: 8 } };
    const variants: Plan[] = [
      p,
      { ...p, training: { ...p.training, precision: 'fp32' } },
      { ...p, training: { ...p.training, flashAttention: !p.training.flashAttention } },
      // Two recomputed layers: with one, the backward's first block recomputes the very layer it kept (no saving at the peak).
      { ...p, training: { ...p.training, recompute: 'full', recomputeLayers: 2 } },
      { ...p, training: { ...p.training, seqLen: p.training.seqLen * 2 } },
      { ...p, training: { ...p.training, optimizer: 'sgd' } },
      // The precision regime (16-bit parameters, no fp32 copy) and the model implementation (transformers' saves).
      { ...p, training: { ...p.training, regime: 'bf16-true' } },
      { ...p, training: { ...p.training, modelImpl: 'hf' } },
    ];
    const values = variants.map((v) => peakMemoryFast(v));
    variants.forEach((v, i) => assert.equal(values[i], traceable(v), `variant ${i}`));
    // Each variant changes a term (precision, scores, recomputation, sequence, optimizer states): all differ from the first.
    for (let i = 1; i < values.length; i++) assert.notEqual(values[i], values[0], `variant ${i} should change the peak`);
  });

  test('a plan of the cached family with a bad micro batch or accumulation, or a broken training object, gets +∞ (planComputable rejects it)', () => {
    const p = searchedPlans(base(dense, 'fsdp2'))[0];
    const bad: Plan[] = [
      { ...p, training: { ...p.training, microBatch: 0 } },
      { ...p, training: { ...p.training, microBatch: Number.NaN } },
      { ...p, training: { ...p.training, gradAccum: -1 } },
      { ...p, training: { ...p.training, gradAccum: Number.POSITIVE_INFINITY } },
      { ...p, training: undefined as unknown as Plan['training'] },
    ];
    for (const [i, v] of bad.entries()) {
      // The family is cached first, so the bad plan is checked against it.
      assert.ok(Number.isFinite(peakMemoryFast(p)));
      assert.equal(peakMemoryFast(v), Number.POSITIVE_INFINITY, `bad plan ${i}`);
    }
  });
});
