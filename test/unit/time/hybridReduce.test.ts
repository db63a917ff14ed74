/**
 * FSDP's hybrid reduce behind a backward: per layer group a reduce-scatter within the shard group, then an all-reduce
 * of its shard across the replicas on a second stream (torch FSDP2 foreach_reduce). Expected values are worked by hand
 * from that two-stage pipeline: the first group's slower collective is exposed, each later one hides behind its share
 * of the pass (what overlaps still costs overlapCost of it), and the last group's faster collective is left at the end.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hybridReduceExposed, perLayerExposed } from '../../../shared/time/syncExposure';

const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-12, `${what}: ${a} vs ${b}`);

describe('hybrid (HSDP) reduce exposure', () => {
  test('the all-reduce is the slower stage: it sets the pace', () => {
    // 10 groups, 1 s of backward (0.1 s per group), reduce-scatter 0.01 s, all-reduce 0.03 s, overlapCost 0.1:
    // 0.03 exposed, 9 × 0.1 × 0.03 = 0.027 behind the pass, then the last reduce-scatter's 0.01.
    close(hybridReduceExposed(0.01, 0.03, 10, 1, true, 0.1), 0.067, 'all-reduce bound');
  });

  test('a collective longer than its share of the pass spills', () => {
    // 4 groups, 0.2 s of backward (0.05 s each), reduce-scatter 0.02 s, all-reduce 0.08 s, overlapCost 0:
    // 0.08 + 3 × (0.08 − 0.05) + 0.02 = 0.19.
    close(hybridReduceExposed(0.02, 0.08, 4, 0.2, true, 0), 0.19, 'spill');
  });

  test('without overlap every collective is on the path; without replicas it is the reduce-scatter alone', () => {
    close(hybridReduceExposed(0.01, 0.03, 10, 1, false, 0.1), 0.4, 'no overlap');
    close(hybridReduceExposed(0.01, 0, 10, 1, true, 0.1), perLayerExposed(0.01, 10, 1, true, 0.1), 'no replicas');
  });
});
