/**
 * The planner's search: axis rules, ranking collections, pruning checked against brute force, bad input and
 * truncation. A small first-principles estimator is used here so these checks do not depend on the core's
 * calibration; test/unit/planner/narayanan.test.ts checks the planner with the core's own estimators.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePlan } from '../../../shared/plan/defaults';
import type { ModelSpec, Plan } from '../../../shared/plan/types';
import { planLayouts } from '../../../shared/planner/plan-layouts';
import { ParetoFront, TopK } from '../../../shared/planner/ranking';
import { divisors, stageSplit } from '../../../shared/planner/space';
import type { Layout, PlannerEstimators } from '../../../shared/planner/types';
import { coreEstimators } from '../../../shared/planner/estimators';
import { bruteForce, toyEstimators } from './toyModel';

const model: ModelSpec = {
  name: 'toy', layers: 12, hiddenSize: 2048, heads: 16, kvHeads: 4, headDim: 128, ffnSize: 8192, gatedMlp: false,
  attnBias: 'none', mlpBias: false, tiedEmbeddings: true, positions: 'rotary', maxPositions: 4096, norm: 'rmsnorm',
  qkNorm: false, vocabSize: 32000,
};

function base(gpus = 16, globalBatch = 64, style: 'deepspeed' | 'ddp' | 'fsdp2' = 'deepspeed'): Plan {
  return makePlan({
    model,
    training: { microBatch: 1, globalBatch, seqLen: 4096 },
    parallel: { dp: gpus, sharding: { style } },
    cluster: { gpusPerNode: Math.min(8, gpus), nodes: Math.max(1, gpus / 8) },
  });
}

describe('search space rules', () => {
  test('divisors', () => {
    assert.deepEqual(divisors(12), [1, 2, 3, 4, 6, 12]);
    assert.deepEqual(divisors(1), [1]);
    assert.deepEqual(divisors(0), []);
  });
  test('uneven pipeline split: Llama 3 405B, 126 layers on 16 stages, first and last stage one layer short (Llama 3 paper §3.3.2)', () => {
    const split = stageSplit(126, 16);
    assert.deepEqual(split, [7, ...Array(14).fill(8), 7]);
    assert.equal(stageSplit(96, 8), undefined);
    assert.equal(stageSplit(5, 2), null);
  });
  test('TP divides heads and KV heads and stays in a node; DP keeps the global batch', () => {
    const r = planLayouts(base(), { topK: 50 }, toyEstimators);
    assert.ok(r.layouts.length > 0);
    for (const l of r.layouts) {
      assert.equal(model.heads % l.tp, 0);
      assert.equal(model.kvHeads % l.tp, 0);
      assert.ok(l.tp <= 8);
      assert.equal(l.tp * l.pp * l.cp * l.dp, 16);
      assert.equal(l.microBatch * l.gradAccum * l.dp, 64);
      if (l.vpp > 1) assert.equal(l.gradAccum % l.pp, 0);
    }
  });
});

describe('engine rules', () => {
  test('DeepSpeed: no pipeline with ZeRO-2 or 3 (its PipelineEngine asserts the stage is below 2), and the skips are counted', () => {
    const r = planLayouts(base(), { topK: 500, exhaustive: true }, toyEstimators);
    assert.ok(r.layouts.some((l) => l.pp > 1) && r.layouts.some((l) => l.zero >= 2));
    for (const l of [...r.layouts, ...r.pareto]) assert.ok(!(l.pp > 1 && l.zero >= 2), JSON.stringify(l));
    assert.ok((r.pruned['engine-pipeline-zero'] ?? 0) > 0);
  });
});

describe('ranking collections agree with naive definitions', () => {
  // Park–Miller minimal standard generator, so failures reproduce.
  let s = 7;
  const next = (): number => (s = (s * 48271) % 2147483647) / 2147483647;
  test('TopK keeps the K smallest keys in order', () => {
    const top = new TopK<number>(5);
    const keys = Array.from({ length: 200 }, () => Math.round(next() * 1000));
    keys.forEach((k) => top.add(k, k));
    assert.deepEqual(top.values(), [...keys].sort((a, b) => a - b).slice(0, 5));
  });
  test('ParetoFront equals the non-dominated set', () => {
    const pts = Array.from({ length: 300 }, () => [Math.round(next() * 100), Math.round(next() * 100)] as const);
    const front = new ParetoFront<readonly [number, number]>();
    pts.forEach((p) => front.add(p[0], p[1], p));
    const naive = pts.filter((p) => !pts.some((q) => q[0] <= p[0] && q[1] <= p[1] && (q[0] < p[0] || q[1] < p[1])));
    const key = (p: readonly [number, number]): string => `${p[0]},${p[1]}`;
    assert.deepEqual([...new Set(front.values().map(key))].sort(), [...new Set(naive.map(key))].sort());
  });
});

describe('pruning never drops a faster fitting layout (brute force)', () => {
  const cases: [string, Plan, number][] = [
    ['DeepSpeed, 16 GPUs, 14 GB', base(16, 64, 'deepspeed'), 14e9],
    ['Megatron DDP/distributed optimizer, 16 GPUs, 12 GB', base(16, 32, 'ddp'), 12e9],
    ['FSDP2, 8 GPUs, 10 GB', base(8, 16, 'fsdp2'), 10e9],
    ['FSDP2 with HSDP, 32 GPUs, 8 GB', base(32, 64, 'fsdp2'), 8e9],
  ];
  for (const [name, plan, memory] of cases) {
    test(name, () => {
      const p: Plan = { ...plan, cluster: { ...plan.cluster, gpu: { ...plan.cluster.gpu, memoryBytes: memory } } };
      const r = planLayouts(p, { topK: 3, safetyMargin: 1 }, toyEstimators);
      const brute = bruteForce(p, toyEstimators, memory);
      assert.ok(brute.best, 'brute force finds a fitting layout');
      assert.equal(r.layouts[0].stepSeconds, brute.best.stepSeconds);
      assert.deepEqual(r.pareto.map((l) => [l.peakAllocatedBytes, l.stepSeconds]), brute.front);
      const exhaustive = planLayouts(p, { topK: 3, safetyMargin: 1, exhaustive: true }, toyEstimators);
      assert.deepEqual(exhaustive.layouts.map((l) => l.stepSeconds), r.layouts.map((l) => l.stepSeconds));
      assert.ok((r.pruned['memory-monotone'] ?? 0) > 0, 'the micro-batch pruning did skip something');
    });
  }
});

describe("pruning never drops a faster fitting layout under the core's own estimators (brute force)", () => {
  // Integer memory sizes, so GPU memory × margin 1 is exactly the brute-force limit.
  const cases: [string, Plan, number][] = [
    ['DeepSpeed, 16 GPUs, 8 GiB', base(16, 64, 'deepspeed'), 8 * 2 ** 30],
    ['Megatron DDP/distributed optimizer, 16 GPUs, 8 GiB', base(16, 32, 'ddp'), 8 * 2 ** 30],
    ['FSDP2, 8 GPUs, 6 GiB', base(8, 16, 'fsdp2'), 6 * 2 ** 30],
    ['FSDP2 with HSDP, 32 GPUs, 6 GiB', base(32, 64, 'fsdp2'), 6 * 2 ** 30],
  ];
  for (const [name, plan, memory] of cases) {
    test(name, () => {
      const p: Plan = { ...plan, cluster: { ...plan.cluster, gpu: { ...plan.cluster.gpu, memoryBytes: memory } } };
      const core = coreEstimators();
      const fast = { peakBytes: core.peakBytes, stepSeconds: core.stepSeconds };
      const r = planLayouts(p, { topK: 3, safetyMargin: 1 }, fast);
      const brute = bruteForce(p, fast, memory);
      assert.ok(brute.best, 'brute force finds a fitting layout');
      assert.equal(r.layouts[0].stepSeconds, brute.best.stepSeconds);
      assert.deepEqual(r.pareto.map((l) => [l.peakReservedBytes, l.stepSeconds]), brute.front);
      assert.ok((r.pruned['memory-monotone'] ?? 0) > 0, 'the micro-batch pruning did skip something');
    });
  }
});

describe('results and bad input', () => {
  test('the result survives JSON', () => {
    const r = planLayouts(base(), {}, toyEstimators);
    assert.deepEqual(JSON.parse(JSON.stringify(r)), r);
    for (const k of ['tp', 'pp', 'vpp', 'cp', 'ep', 'dp', 'zero', 'microBatch', 'recompute', 'stepSeconds', 'peakAllocatedBytes'] as const) {
      assert.ok(k in r.layouts[0], k);
    }
  });
  test('bad options become problems, not exceptions', () => {
    for (const opts of [{ gpus: 0 }, { gpus: 12 }, { gpus: 2.5 }, { safetyMargin: 2 }, { safetyMargin: Number.NaN }]) {
      const r = planLayouts(base(), opts, toyEstimators);
      assert.equal(r.layouts.length, 0);
      assert.ok(r.problems.some((p) => p.severity === 'error'), JSON.stringify(opts));
    }
  });
  test('estimators returning NaN are counted, never ranked', () => {
    const broken: PlannerEstimators = { peakBytes: () => Number.NaN, stepSeconds: () => 1 };
    const r = planLayouts(base(), {}, broken);
    assert.equal(r.layouts.length, 0);
    assert.equal(r.pruned['invalid-estimate'], r.evaluated);
  });
  test('nothing fits: the lowest-memory layout and a warning', () => {
    const p = base();
    const tiny: Plan = { ...p, cluster: { ...p.cluster, gpu: { ...p.cluster.gpu, memoryBytes: 1e6 } } };
    const r = planLayouts(tiny, {}, toyEstimators);
    assert.equal(r.layouts.length, 0);
    assert.ok(r.lowestMemory && !r.lowestMemory.fits);
    assert.ok(r.problems.some((x) => x.code === 'planner-nothing-fits'));
  });
  test('a capped search says so', () => {
    const r = planLayouts(base(), { maxEvaluations: 10 }, toyEstimators);
    assert.equal(r.evaluated, 10);
    assert.equal(r.truncated, true);
    assert.ok((r.pruned.cap ?? 0) > 0);
    assert.ok(r.problems.some((x) => x.code === 'planner-truncated'));
  });
  test('FSDP hybrid sharding is searched: one node per shard group, strategy HYBRID_SHARD', () => {
    // 6 GB GPUs and data parallelism only: replicated states (16 bytes × 0.67 B parameters) do not fit, so states shard.
    const p = base(32, 64, 'fsdp2');
    const small: Plan = { ...p, cluster: { ...p.cluster, gpu: { ...p.cluster.gpu, memoryBytes: 6e9 } } };
    const r = planLayouts(small, { topK: 20, space: { tp: [1], pp: [1], cp: [1] } }, toyEstimators);
    const hsdp = r.layouts.filter((l) => l.shardGroup !== undefined);
    assert.ok(hsdp.length > 0);
    for (const l of hsdp) {
      assert.equal(l.shardGroup, 8);
      assert.equal(l.fsdpStrategy, l.zero === 3 ? 'HYBRID_SHARD' : '_HYBRID_SHARD_ZERO2');
    }
  });
  test('a format limits the space to what it can write (DeepSpeed JSON under the HF Trainer: DP and ZeRO only)', () => {
    const r = planLayouts(base(), { format: 'deepspeed', topK: 20 }, toyEstimators);
    assert.ok(r.layouts.length > 0);
    for (const l of r.layouts) {
      assert.deepEqual([l.tp, l.pp, l.cp, l.ep], [1, 1, 1, 1]);
      assert.notEqual(l.recompute, 'selective');
    }
  });
  test('more GPUs than the base cluster', () => {
    const r = planLayouts(base(), { gpus: 64 }, toyEstimators);
    assert.equal(r.gpus, 64);
    const l: Layout = r.layouts[0];
    assert.equal(l.tp * l.pp * l.cp * l.dp, 64);
  });
});

test('an estimator that throws becomes a problem, not an exception', () => {
  const throwing: PlannerEstimators = { peakBytes: () => { throw new Error('boom'); }, stepSeconds: () => 1 };
  const r = planLayouts(base(), {}, throwing);
  assert.equal(r.layouts.length, 0);
  assert.ok(r.problems.some((p) => p.code === 'planner-estimator-failed' && p.message.includes('boom')));
});
