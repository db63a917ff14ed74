/**
 * The search asks the step-time fast path for an exact figure only where one could enter its lists (top layouts and
 * memory/time front); elsewhere the fast path may answer with a lower bound and skip running the pipeline schedule
 * (shared/time/stepTime.ts scheduleLowerBound). Skipping must change nothing: the same search with every layout
 * timed exactly returns the same layouts, figures and front.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findGpu } from '../../../shared/hardware/gpus';
import { findPreset } from '../../../shared/model/presets';
import { makePlan } from '../../../shared/plan/defaults';
import type { GpuSpec, ModelSpec, Plan, ShardingStyle } from '../../../shared/plan/types';
import { coreEstimators } from '../../../shared/planner/estimators';
import { planLayouts } from '../../../shared/planner/plan-layouts';
import type { PlannerEstimators, PlanResult } from '../../../shared/planner/types';
import { TimeCache } from '../../../shared/time/cache';

const H100 = findGpu('h100-sxm') as GpuSpec;

const dense13: ModelSpec = {
  name: 'dense-13', layers: 13, hiddenSize: 2048, heads: 16, kvHeads: 4, headDim: 128, ffnSize: 8192, gatedMlp: true,
  attnBias: 'none', mlpBias: false, tiedEmbeddings: false, positions: 'rotary', maxPositions: 4096, norm: 'rmsnorm',
  qkNorm: false, vocabSize: 32000,
};

function small(style: ShardingStyle): Plan {
  return makePlan({ model: dense13, training: { microBatch: 1, globalBatch: 64, seqLen: 2048 }, parallel: { dp: 32, sharding: { style } }, cluster: { gpusPerNode: 8, nodes: 4 } });
}

/** Llama 3.1 405B on 2,048 H100 (126 layers: every PP of 4, 8, 16 and 32 splits unevenly), Megatron. */
function llama405(): Plan {
  const p = findPreset('llama-3.1-405b');
  assert.ok(p);
  return makePlan({
    engine: 'megatron', model: p.model, training: { microBatch: 1, globalBatch: 512, seqLen: 8192, precision: 'bf16-mixed' },
    parallel: { dp: 2048, sp: true, sharding: { style: 'megatron-distopt', overlapComm: true } }, cluster: { gpusPerNode: 8, nodes: 256 },
  }, H100);
}

/** The core estimators, with the step time always exact (the bound never offered). */
function exactOnly(): PlannerEstimators {
  const core = coreEstimators(new TimeCache());
  return { peakBytes: core.peakBytes, stepSeconds: (plan) => core.stepSeconds(plan), full: core.full };
}

const rows = (r: PlanResult) => r.layouts.map((l) => ({ ...l }));

describe('the search with lower bounds returns what the exact search returns', () => {
  const cases: [string, () => Plan, number][] = [['dense 13 layers, FSDP2', () => small('fsdp2'), 20], ['dense 13 layers, DeepSpeed', () => small('deepspeed'), 20], ['Llama 3.1 405B, Megatron', llama405, 10]];
  for (const [name, mk, topK] of cases) {
    test(name, () => {
      const b = mk();
      const withBound = planLayouts(b, { topK });
      const exact = planLayouts(b, { topK }, exactOnly());
      assert.ok(withBound.layouts.length > 0);
      assert.equal(withBound.evaluated, exact.evaluated);
      assert.deepEqual(rows(withBound), rows(exact));
      assert.deepEqual(withBound.pareto, exact.pareto);
    });
  }
});
