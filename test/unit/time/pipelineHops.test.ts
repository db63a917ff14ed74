/**
 * Pipeline sends on a step's critical path. First principles: the first micro-batch's forward must cross the p − 1
 * stage boundaries before the last stage can start its first backward, and the last micro-batch's backward must cross
 * them back before stage 0 ends; every other send has a queued pass of the receiving stage to hide behind as long as a
 * send is shorter than a chunk's pass. So a step grows by 2(p − 1) send times per second of send, for 1F1B and for
 * interleaved schedules alike, and independently of the micro-batch count. The event simulation (shared/sim) and the
 * closed form (shared/time/stepTime.ts pipelineHops) must both show it and agree to 0.1 %.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { simulateStep } from '../../../shared/sim/simulate';
import { estimateStepTime } from '../../../shared/time/estimate';
import { allStageTimings } from '../../../shared/time/stage';
import { TimeCache } from '../../../shared/time/cache';
import { pipelineHops } from '../../../shared/time/stepTime';
import type { Plan } from '../../../shared/plan/types';
import { A100, gpt, plan } from '../sim/fixtures';

/**
 * A Megatron layout whose every pipeline hop crosses the network (TP 2 × DP 4 fill a node), at a given adapter rate.
 * The output layer is untied: a tied one adds Megatron's embedding-group all-reduce between the first and last stage,
 * which crosses the same network once per step and is not a send.
 */
function layout(pp: number, vpp: number, microbatches: number, bytesPerSecond: number): Plan {
  const p = plan({
    engine: 'megatron', model: { ...gpt(pp * vpp * 2, 4096, 32), tiedEmbeddings: false }, training: { microBatch: 1, globalBatch: microbatches * 4, seqLen: 2048, precision: 'bf16-mixed' },
    parallel: { tp: 2, pp, vpp, dp: 4, sp: true, schedule: vpp > 1 ? 'interleaved' : '1f1b', sharding: { style: 'megatron-distopt', overlapComm: true } },
    cluster: { gpusPerNode: 8, nodes: pp },
  });
  return { ...p, cluster: { ...p.cluster, gpu: { ...A100, interNodeBandwidth: bytesPerSecond } } };
}

const CASES: readonly [number, number, number][] = [[2, 1, 8], [4, 1, 16], [8, 1, 32], [4, 2, 16], [4, 3, 32], [8, 2, 64], [16, 2, 32]];

describe('pipeline sends on the critical path', () => {
  test('the closed form counts 2(p − 1) sends, none without a pipeline', () => {
    assert.equal(pipelineHops(1, 1), 0);
    assert.equal(pipelineHops(4, 1), 6);
    assert.equal(pipelineHops(16, 8), 30);
  });

  for (const [pp, vpp, m] of CASES) {
    test(`PP ${pp}, VPP ${vpp}, ${m} micro-batches: the simulation moves by 2(p − 1) sends and the closed form agrees`, () => {
      const a = layout(pp, vpp, m, 25e9), b = layout(pp, vpp, m, 24e9);
      const xa = allStageTimings(a, new TimeCache())[1].p2p, xb = allStageTimings(b, new TimeCache())[1].p2p;
      assert.ok(xb > xa, 'a slower adapter makes each send longer');
      const sa = simulateStep(a), sb = simulateStep(b);
      assert.ok(sa.ok && sb.ok);
      const hops = (sb.stepSeconds - sa.stepSeconds) / (xb - xa);
      assert.ok(Math.abs(hops - 2 * (pp - 1)) < 1e-6, `simulated ${hops} sends on the critical path, expected ${2 * (pp - 1)}`);
      for (const [p, s] of [[a, sa], [b, sb]] as const) {
        const e = estimateStepTime(p).stepSeconds;
        assert.ok(Math.abs(s.stepSeconds / e - 1) <= 1e-3, `simulated ${s.stepSeconds} vs closed form ${e}`);
      }
    });
  }
});
