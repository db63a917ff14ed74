/**
 * The schedule's lower bound (shared/time/stepTime.ts scheduleLowerBound), which lets the planner skip running the
 * schedule of a layout that could not enter its lists. Expected values from first principles:
 * - equal stages, free sends: the run's own (m + (p − 1)/v)·T (Narayanan et al. 2021 §2.2) — the bound is the path
 *   through the last stage, which is the run's path there;
 * - equal stages with sends d: the compute plus the first forward's and the last backward's 2(p − 1) sends (the
 *   waits behind a round's sends are left out);
 * - a stage's gradient sync starts inside its last backward: a sync longer than that backward by x adds x;
 * - never above the run's gradients-ready time, for any stage times, sends, syncs, schedule and micro-batch count
 *   (random stages, a fixed seed).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gradientsReady } from '../../../shared/sim/gradientSync';
import { runPipeline } from '../../../shared/sim/run';
import { stageOps } from '../../../shared/sim/schedule';
import type { StageTiming } from '../../../shared/time/stage';
import type { PipelineSchedule } from '../../../shared/plan/types';
import { scheduleLowerBound } from '../../../shared/time/stepTime';
import { rng } from '../../../shared/random';

/** A stage timing with only what the schedule reads (no in-pass communication). */
function stage(forward: number, recompute: number, backward: number, p2p: number, gradSync = 0, gradSyncWindow = 0, gradSyncCooldown = 0): StageTiming {
  const noComm = { comm: 0 };
  return {
    stage: 0, layers: 1, forward, recompute, backward, gradSync, gradSyncWindow, gradSyncCooldown, optimizer: 0, postStep: 0, p2p,
    work: { parts: { forward: noComm, backward: noComm, recompute: noComm } }, comm: { perMicrobatchForward: 0, perMicrobatchBackward: 0 },
  } as unknown as StageTiming;
}

/** When the run has every stage's gradients ready (Megatron's groups of p micro-batches when interleaved). */
function runReady(schedule: PipelineSchedule, st: StageTiming[], v: number, m: number, cost: number): number {
  const p = st.length;
  const ops = Array.from({ length: p }, (_, s) => stageOps(schedule, p, v, m, s, p));
  const lanes = runPipeline(st, ops, m, v, schedule === 'zb-h1', new Array<number>(p).fill(0), false);
  assert.ok(lanes, 'the schedule runs');
  return Math.max(...gradientsReady(lanes, st, v, cost, false));
}

describe('the schedule\'s lower bound', () => {
  for (const [p, v, m] of [[4, 1, 16], [8, 1, 32], [4, 2, 16], [8, 4, 32], [16, 7, 32]] as const) {
    test(`equal stages, p ${p} v ${v} m ${m}: (m + (p − 1)/v)·T, plus 2(p − 1) sends`, () => {
      const T = 3;
      const free = scheduleLowerBound(Array.from({ length: p }, () => stage(1, 0, 2, 0)), m, v, false, 0);
      assert.ok(Math.abs(free - (m + (p - 1) / v) * T) <= 1e-9 * free, `${free}`);
      const d = 1e-3;
      const sends = scheduleLowerBound(Array.from({ length: p }, () => stage(1, 0, 2, d)), m, v, false, 0);
      assert.ok(Math.abs(sends - free - 2 * (p - 1) * d) <= 1e-9 * free, `${sends - free}`);
    });
  }

  test('a sync longer than the last backward it starts in adds the difference', () => {
    // Equal stages, 1F1B, p 4, m 8, T = 3: the bound (m + p − 1)·T = 33; each stage's sync of 1.5 s starts within its
    // last backward of 2 s behind a window of 0.5 s, so 1 s of it is left: 34, plus 0.1 × 0.5 hidden at overlapCost 0.1.
    const st = Array.from({ length: 4 }, () => stage(1, 0, 2, 0, 1.5, 0.5));
    assert.ok(Math.abs(scheduleLowerBound(st, 8, 1, false, 0.1) - 34.05) <= 1e-9);
    // Megatron's per-chunk syncs hide in the cooldown: no sync term.
    const chunked = Array.from({ length: 4 }, () => stage(1, 0, 2, 0, 1.5, 0.5, 1));
    assert.ok(Math.abs(scheduleLowerBound(chunked, 8, 1, false, 0.1) - 33) <= 1e-9);
  });

  test('runs of alike stages give the bound of the stages written out', () => {
    const st = [stage(0.9, 0, 1.7, 0.01, 0.5, 0.2), stage(1, 0.3, 2, 0.02, 2, 0.5), stage(1, 0.3, 2, 0.02, 2, 0.5), stage(1, 0.3, 2, 0.02, 2, 0.5), stage(0.8, 0, 2.1, 0.01)];
    const runs = [st[0], st[1], st[4]];
    for (const zb of [false, true]) {
      const a = scheduleLowerBound(st, 16, 2, zb, 0.2);
      const b = scheduleLowerBound(runs, 16, 2, zb, 0.2, [1, 3, 1]);
      assert.ok(Math.abs(a - b) <= 1e-12 * a, `${a} vs ${b}`);
    }
  });

  test('never above the run: 600 random pipelines with gradient syncs', () => {
    const r = rng(20261204);
    const schedules: PipelineSchedule[] = ['1f1b', 'interleaved', 'gpipe', 'zb-h1'];
    for (let i = 0; i < 600; i++) {
      const schedule = schedules[i % 4];
      const p = 2 + Math.floor(r() * 7);
      const v = schedule === 'interleaved' ? 2 + Math.floor(r() * 3) : 1;
      const m = schedule === 'interleaved' ? p * (1 + Math.floor(r() * 3)) : 1 + Math.floor(r() * 3 * p);
      const d = r() < 0.3 ? 0 : 0.05 * r();
      const st = Array.from({ length: p }, () => {
        const f = 0.5 + r();
        const sync = r() < 0.4 ? 0 : 3 * f * r();
        return stage(f, r() < 0.5 ? 0 : f * r(), f * (1 + 2 * r()), r() < 0.7 ? d : 0.05 * r(), sync, f * 2 * r(), r() < 0.2 ? sync * r() : 0);
      });
      const cost = r() < 0.5 ? 0 : 0.3 * r();
      const bound = scheduleLowerBound(st, m, v, schedule === 'zb-h1', cost);
      const run = runReady(schedule, st, v, m, cost);
      assert.ok(bound <= run * (1 + 1e-12), `${schedule} p ${p} v ${v} m ${m}: bound ${bound} above the run's ${run}`);
      // Not vacuous: at least the busiest stage's own passes.
      const busiest = Math.max(...st.map((s) => m * (s.forward + s.recompute + s.backward)));
      assert.ok(bound >= busiest, `${bound} below one stage's work ${busiest}`);
    }
  });
});
