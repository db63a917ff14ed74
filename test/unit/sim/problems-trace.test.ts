/**
 * Layouts that cannot run give typed problems and no timeline (issue 3 §5), and the Chrome trace-event export follows
 * the Trace Event Format (complete events 'X' with pid/tid, microsecond ts/dur; metadata 'M'; counters 'C').
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { simulateStep } from '../../../shared/sim/simulate';
import { toChromeTrace } from '../../../shared/sim/trace';
import { estimateStepTime } from '../../../shared/time/estimate';
import { stepSecondsFast } from '../../../shared/time/stepTime';
import { TimeCache } from '../../../shared/time/cache';
import { collectivesPerStep } from '../../../shared/time/collectives';
import type { PlanInput } from '../../../shared/plan/defaults';
import { A100, gpt, plan } from './fixtures';

const BAD: readonly [string, string, PlanInput][] = [
  ['more stages than layers', 'pp-exceeds-layers', { model: gpt(4, 1024, 16), parallel: { pp: 8 }, training: { gradAccum: 8 } }],
  ['micro batch larger than the global batch allows', 'micro-batch-too-large',
    { model: gpt(8, 1024, 16), training: { microBatch: 8, globalBatch: 16, gradAccum: 1 }, parallel: { dp: 4 } }],
  ['interleaved with m not a multiple of p', 'interleaved-microbatches',
    { model: gpt(16, 1024, 16), training: { gradAccum: 6 }, parallel: { pp: 4, vpp: 2, schedule: 'interleaved' } }],
  ['interleaved with v not dividing the stage layers', 'vpp-divides-layers',
    { model: gpt(12, 1024, 16), training: { gradAccum: 8 }, parallel: { pp: 4, vpp: 2, schedule: 'interleaved' } }],
  ['zero pipeline stages', 'bad-degree', { model: gpt(8, 1024, 16), parallel: { pp: 0 } }],
  ['negative sequence length', 'bad-size', { model: gpt(8, 1024, 16), training: { seqLen: -5 } }],
];

describe('bad layouts: problems, no timeline, no NaN', () => {
  for (const [name, code, input] of BAD) {
    test(name, () => {
      const pl = plan({ ...input, cluster: { gpu: A100 } });
      const sim = simulateStep(pl);
      assert.equal(sim.ok, false);
      assert.equal(sim.stages.length, 0);
      assert.ok(sim.problems.some((p) => p.code === code && p.severity === 'error'), JSON.stringify(sim.problems));
      const est = estimateStepTime(pl);
      assert.ok(est.problems.some((p) => p.code === code));
      for (const x of [sim.stepSeconds, sim.mfu, est.stepSeconds, est.mfu, est.tokensPerSecond]) assert.ok(Number.isFinite(x) && x >= 0);
      assert.ok(Number.isNaN(stepSecondsFast(pl, new TimeCache())), 'the fast path rejects it');
      assert.deepEqual(collectivesPerStep(pl), []);
    });
  }
});

test('Chrome trace: one process per stage, compute and comm threads, X events in µs', () => {
  const pl = plan({
    model: gpt(16, 2048, 16), training: { microBatch: 1, gradAccum: 8, seqLen: 2048 },
    parallel: { tp: 2, pp: 4, dp: 2, vpp: 2, schedule: 'interleaved' }, cluster: { gpu: A100, gpusPerNode: 8 },
  });
  const sim = simulateStep(pl);
  const trace = toChromeTrace(sim);
  const round = JSON.parse(JSON.stringify(trace)) as typeof trace;
  const xs = round.traceEvents.filter((e) => e.ph === 'X');
  assert.deepEqual([...new Set(xs.map((e) => e.pid))].sort(), [0, 1, 2, 3]);
  assert.ok(xs.some((e) => e.tid === 1), 'communication thread has events');
  for (const e of xs) assert.ok(e.ts >= 0 && (e.dur ?? -1) >= 0 && typeof e.name === 'string');
  // Forward passes per stage: m·v = 16 (one per micro-batch and chunk).
  assert.equal(xs.filter((e) => e.pid === 0 && e.cat === 'forward').length, 16);
  const lastEnd = Math.max(...xs.map((e) => e.ts + (e.dur ?? 0)));
  assert.ok(Math.abs(lastEnd / 1e6 - sim.stepSeconds) < 1e-9, 'trace ends at the step time');
  assert.ok(round.traceEvents.some((e) => e.ph === 'M' && e.name === 'process_name'));
});
