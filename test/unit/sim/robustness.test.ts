/**
 * Bad input never throws out of the public entry points and never yields NaN, ∞ or negative figures (issue 3 §5):
 * seeded random plans with zero, negative, fractional, huge and NaN inputs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collectivesPerStep } from '../../../shared/time/collectives';
import { simulateStep } from '../../../shared/sim/simulate';
import { toChromeTrace } from '../../../shared/sim/trace';
import { estimateStepTime } from '../../../shared/time/estimate';
import { stepSecondsFast } from '../../../shared/time/stepTime';
import { TimeCache } from '../../../shared/time/cache';
import type { PipelineSchedule } from '../../../shared/plan/types';
import { A100, gpt, plan } from './fixtures';

/** Deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ODD = [0, -1, 1, 2, 3, 4, 7, 8, 16, 0.5, 1e9, Number.NaN];
const SCHEDULES: PipelineSchedule[] = ['gpipe', '1f1b', 'interleaved', 'zb-h1'];

test('300 random plans: no throw, finite non-negative figures', () => {
  const r = rng(20261129);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  for (let i = 0; i < 300; i++) {
    const small = () => (r() < 0.8 ? pick([1, 2, 4, 8]) : pick(ODD));
    const pl = plan({
      model: gpt(pick([1, 2, 8, 12, 24]), 1024, 16),
      training: { microBatch: small(), gradAccum: r() < 0.9 ? pick([1, 2, 4, 8, 16]) : pick(ODD), seqLen: r() < 0.9 ? 1024 : pick(ODD), recompute: pick(['none', 'selective', 'full'] as const) },
      parallel: { tp: small(), pp: small(), dp: small(), cp: r() < 0.8 ? 1 : small(), vpp: small(), schedule: pick(SCHEDULES), sp: r() < 0.5,
        sharding: { style: 'deepspeed', stage: pick([0, 1, 2, 3] as const), offloadOptimizer: r() < 0.2 ? 'cpu' : 'none' } },
      cluster: { gpu: A100, gpusPerNode: pick([1, 4, 8]) },
    });
    const where = `plan ${i}: ${JSON.stringify({ t: pl.training, p: { ...pl.parallel, sharding: undefined } })}`;
    const est = estimateStepTime(pl);
    const sim = simulateStep(pl);
    const cs = collectivesPerStep(pl);
    const fast = stepSecondsFast(pl, new TimeCache());
    const nums = [est.stepSeconds, est.mfu, est.hfu, est.tokensPerSecond, est.bubbleFraction, est.exposedCommSeconds, sim.stepSeconds, sim.mfu,
      sim.bubbleFraction, sim.tokensPerSecond, ...cs.flatMap((c) => [c.seconds, c.exposedSeconds, c.bytesPerRank])];
    for (const x of nums) assert.ok(Number.isFinite(x) && x >= 0, where);
    assert.ok(Number.isNaN(fast) || (Number.isFinite(fast) && fast > 0), where);
    if (sim.ok) {
      assert.ok(sim.stepSeconds > 0, where);
      // The estimate and the planner's fast path run the same schedule as the simulation over the same timings.
      assert.ok(Math.abs(sim.stepSeconds - est.stepSeconds) <= 1e-9 * est.stepSeconds, `estimate = simulation: ${where}`);
      assert.ok(Math.abs(fast - sim.stepSeconds) <= 1e-9 * fast, `fast path = simulation: ${where}`);
      assert.ok(toChromeTrace(sim).traceEvents.length > 0);
    } else {
      assert.ok(sim.problems.length > 0 && sim.stages.length === 0, where);
    }
  }
});
