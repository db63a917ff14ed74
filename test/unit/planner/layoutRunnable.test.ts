/**
 * The fast step-time path checks a layout's parallel spec, model and GPU once and the training spec on every call
 * (shared/time/problems.ts). Whatever the order of evaluation, it must refuse exactly the plans layoutProblems reports.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makePlan } from '../../../shared/plan/defaults';
import type { ModelSpec, Plan } from '../../../shared/plan/types';
import { layoutProblems } from '../../../shared/time/problems';
import { stepSecondsFast } from '../../../shared/time/stepTime';
import { TimeCache } from '../../../shared/time/cache';

/** A 12-layer dense model: 2 stages of 2 virtual chunks divide it evenly. */
const toyModel: ModelSpec = {
  name: 'dense-12', layers: 12, hiddenSize: 2048, heads: 16, kvHeads: 4, headDim: 128, ffnSize: 8192, gatedMlp: true,
  attnBias: 'none', mlpBias: false, tiedEmbeddings: false, positions: 'rotary', maxPositions: 4096, norm: 'rmsnorm',
  qkNorm: false, vocabSize: 32000,
};

const good = makePlan({
  model: toyModel, training: { microBatch: 1, globalBatch: 16, seqLen: 1024 },
  parallel: { tp: 2, pp: 2, dp: 2 }, cluster: { gpusPerNode: 8, nodes: 1 },
});

/** Variants that share the parallel spec, model or GPU objects of `good` and break one field each. */
const variants: [string, Plan][] = [
  ['good', good],
  ['micro batch × DP above the global batch', { ...good, training: { ...good.training, microBatch: 16 } }],
  ['fractional micro batch', { ...good, training: { ...good.training, microBatch: 1.5 } }],
  ['pp above the layers', { ...good, parallel: { ...good.parallel, pp: toyModel.layers + 1 } }],
  ['zero TP', { ...good, parallel: { ...good.parallel, tp: 0 } }],
  ['split not summing to the layers', { ...good, parallel: { ...good.parallel, stageLayers: [1, 1] } }],
  ['GPU without HBM bandwidth', { ...good, cluster: { ...good.cluster, gpu: { ...good.cluster.gpu, hbmBandwidth: 0 } } }],
  ['interleaved, m a multiple of p', {
    ...good, parallel: { ...good.parallel, schedule: 'interleaved', vpp: 2 }, training: { ...good.training, gradAccum: 4, globalBatch: 8 },
  }],
  ['interleaved, m not a multiple of p', {
    ...good, parallel: { ...good.parallel, schedule: 'interleaved', vpp: 2 }, training: { ...good.training, gradAccum: 3, globalBatch: 6 },
  }],
];

test('stepSecondsFast refuses exactly the plans with layout problems, in any order', () => {
  // Forward, backward and interleaved with the good plan, so every check runs after a cached one.
  const order = [...variants, ...[...variants].reverse(), ...variants.flatMap((v) => [variants[0], v])];
  const refused = new Set<string>();
  const cache = new TimeCache();
  for (const [name, plan] of order) {
    const problems = layoutProblems(plan).filter((p) => p.code !== 'simulation-too-large');
    const t = stepSecondsFast(plan, cache);
    if (Number.isNaN(t)) refused.add(name);
    assert.equal(Number.isNaN(t), problems.length > 0, `${name}: ${problems.map((p) => p.code).join(', ') || 'no problem'}, fast path ${t}`);
  }
  // Every broken variant is refused, the two good ones are not.
  assert.equal(refused.size, variants.length - 2, [...refused].join('; '));
});
