/**
 * The fast paths keep per-layout numbers between calls (shared/time/cache.ts, shared/memory/fast.ts) and share
 * them between consecutive layouts that differ only in sharding. Evaluated in the planner's own order, every layout
 * must still get exactly what the traceable estimates give it alone: the step seconds of estimateStepTime (the
 * schedule run pass by pass over the same stage timings), a lower bound of them when told no time is worth an exact
 * figure, and the largest stage peaks of estimateMemory.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateMemory } from '../../../shared/memory/estimate';
import { peakMemoryFast } from '../../../shared/memory/fast';
import { makePlan } from '../../../shared/plan/defaults';
import type { ModelSpec, Plan, ShardingStyle } from '../../../shared/plan/types';
import { coreEstimators } from '../../../shared/planner/estimators';
import { planLayouts } from '../../../shared/planner/plan-layouts';
import { estimateStepTime } from '../../../shared/time/estimate';
import { stepSecondsFast } from '../../../shared/time/stepTime';
import { TimeCache } from '../../../shared/time/cache';

const dense: ModelSpec = {
  name: 'dense-13', layers: 13, hiddenSize: 2048, heads: 16, kvHeads: 4, headDim: 128, ffnSize: 8192, gatedMlp: true,
  attnBias: 'none', mlpBias: false, tiedEmbeddings: false, positions: 'rotary', maxPositions: 4096, norm: 'rmsnorm',
  qkNorm: false, vocabSize: 32000,
};

/** MoE every second layer after two dense ones: stages differ in their MoE-layer mix. */
const moe: ModelSpec = {
  ...dense, name: 'moe-14', layers: 14,
  moe: { experts: 8, topK: 2, expertFfnSize: 2048, sharedExperts: 1, sharedExpertFfnSize: 2048, sharedExpertGate: false, denseFirstLayers: 2, layerFrequency: 2 },
};

/** Two multi-token-prediction modules on the last stage, with a tied head: the embedding-group all-reduce under Megatron. */
const mtp: ModelSpec = { ...moe, name: 'moe-14-mtp', mtpLayers: 2, tiedEmbeddings: true };

function base(model: ModelSpec, style: ShardingStyle): Plan {
  return makePlan({
    model, training: { microBatch: 1, globalBatch: 64, seqLen: 2048 },
    parallel: { dp: 32, sharding: { style } }, cluster: { gpusPerNode: 8, nodes: 4 },
  });
}

/** Every plan the search evaluates, in its order (the estimator records and answers with the real fast paths). */
function searchedPlans(b: Plan): Plan[] {
  const plans: Plan[] = [];
  const cache = new TimeCache();
  planLayouts(b, { exhaustive: true, topK: 1 }, {
    peakBytes: (p) => { plans.push(p); return peakMemoryFast(p); },
    stepSeconds: (p) => stepSecondsFast(p, cache),
  });
  return plans;
}

const rel = (a: number, b: number) => (a === b ? 0 : Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b)));

describe('fast paths with their caches equal the traceable estimates, in search order', () => {
  for (const [model, style] of [[dense, 'fsdp2'], [dense, 'deepspeed'], [moe, 'megatron-distopt'], [moe, 'fsdp2'], [mtp, 'megatron-distopt']] as const) {
    test(`${model.name}, ${style}`, () => {
      const plans = searchedPlans(base(model, style));
      assert.ok(plans.length > 100, `only ${plans.length} layouts searched`);
      // The fast paths first, in search order, so that consecutive layouts share cached numbers.
      const cache = new TimeCache();
      const core = coreEstimators(cache);
      const fast = plans.map((p) => stepSecondsFast(p, cache));
      const full = plans.map((p, i) => (i % 5 === 0 ? core.full?.(p) : undefined));
      let compared = 0;
      for (let i = 0; i < plans.length; i++) {
        // A deep copy has no cached numbers: the traceable estimates compute it from scratch.
        const p = structuredClone(plans[i]);
        const est = estimateStepTime(p);
        if (est.problems.some((x) => x.severity === 'error')) {
          assert.ok(Number.isNaN(fast[i]), `layout ${i}: a layout with problems gets NaN`);
          continue;
        }
        // The fast path runs the same schedule as the estimate (pipelines) or its closed form, which is that run's
        // own figure without a pipeline: the same number either way.
        assert.ok(rel(fast[i], est.stepSeconds) < 1e-12, `layout ${i}: fast ${fast[i]} vs estimate ${est.stepSeconds}`);
        // Told that no time is worth an exact figure, it may answer with a lower bound: never above the run.
        const bound = stepSecondsFast(plans[i], cache, () => false);
        assert.ok(bound > 0 && bound <= est.stepSeconds * (1 + 1e-12), `layout ${i}: bound ${bound} above the run's ${est.stepSeconds}`);
        const f = full[i];
        if (f) {
          const mem = estimateMemory(p);
          assert.equal(f.peakAllocatedBytes, Math.max(0, ...mem.stages.map((s) => s.peakAllocatedBytes)), `layout ${i}: allocated`);
          assert.equal(f.peakReservedBytes, Math.max(0, ...mem.stages.map((s) => s.peakReservedBytes)), `layout ${i}: reserved`);
          assert.ok(rel(f.stepSeconds, est.stepSeconds) < 1e-12, `layout ${i}: full step seconds`);
        }
        compared++;
      }
      assert.ok(compared > 50, `only ${compared} runnable layouts compared`);
    });
  }
});
