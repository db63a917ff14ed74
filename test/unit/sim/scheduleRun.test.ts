/**
 * The pipeline schedule run pass by pass (shared/sim/run.ts), which both the estimate and the Simulate Step timeline
 * use. Expected values from first principles, with per-micro-batch stage times F (forward) and B (backward), v chunks
 * per stage (each pass F/v or B/v) and a send of d seconds between neighbouring stages:
 * - free sends, equal stages: (m + (p − 1)/v)·(F + B) (Narayanan et al. 2021 §2.2: the bubble (p − 1)/(v·m));
 * - equal stages, interleaved (Megatron's order, groups of g = p micro-batches): stage 0 finishes a group's p chunk
 *   passes exactly when the group's first micro-batch would come back around, so every one of the p·v − 1
 *   virtual-stage boundaries costs a send on the way in and again on the way out: 2(p·v − 1)·d, whatever m;
 * - equal stages, 1F1B: the cycle through all p stages and back (p slots, 2(p − 1) sends) sets the steady state, so
 *   p more micro-batches add p·(F + B) + 2(p − 1)·d;
 * - a last stage slower than the others by more than the sends: only the first forward and the last backward cross
 *   the boundaries on the path, 2(p − 1)·d beyond the compute.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runPipeline } from '../../../shared/sim/run';
import { stageOps } from '../../../shared/sim/schedule';
import { allStageTimings, type StageTiming } from '../../../shared/time/stage';
import type { PipelineSchedule } from '../../../shared/plan/types';
import { estimateStepTime } from '../../../shared/time/estimate';
import { pipelineSeconds } from '../../../shared/time/stepTime';
import { loadRuns } from '../../../bench/measured/runs';
import { loadCheckRuns } from '../../../bench/measured/checks';
import { closedFormStepSeconds } from '../../../shared/time/stepTime';
import { simulateStep } from '../../../shared/sim/simulate';
import { initFormats } from '../../../formats/index';
import { A100, gpt, plan } from './fixtures';

/** A stage timing with only what the schedule reads (no in-pass communication). */
function stage(s: number, forward: number, backward: number, p2p: number): StageTiming {
  const noComm = { comm: 0 };
  return {
    stage: s, layers: 1, forward, recompute: 0, backward, gradSync: 0, gradSyncWindow: 0, gradSyncCooldown: 0, optimizer: 0, postStep: 0, p2p,
    work: { parts: { forward: noComm, backward: noComm, recompute: noComm } }, comm: { perMicrobatchForward: 0, perMicrobatchBackward: 0 },
  } as unknown as StageTiming;
}

/** End of the last pass of any stage; `record` runs the timeline variant (the simulator's). */
function end(schedule: PipelineSchedule, p: number, v: number, m: number, times: readonly [number, number][], d: number, record = false): number {
  const st = times.map(([f, b], s) => stage(s, f, b, d));
  const ops = Array.from({ length: p }, (_, s) => stageOps(schedule, p, v, m, s, p));
  const lanes = runPipeline(st, ops, m, v, false, new Array<number>(p).fill(0), record);
  assert.ok(lanes, 'the schedule runs');
  return Math.max(...lanes.map((L) => L.t));
}

const equal = (p: number): [number, number][] => Array.from({ length: p }, () => [1, 2]);
const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

describe('the schedule run pass by pass', () => {
  for (const [p, v, m] of [[4, 1, 16], [8, 1, 32], [4, 2, 16], [8, 4, 32], [4, 10, 32], [8, 8, 32]] as const) {
    test(`free sends, equal stages, p ${p} v ${v} m ${m}: (m + (p − 1)/v)·T`, () => {
      close(end(v > 1 ? 'interleaved' : '1f1b', p, v, m, equal(p), 0), (m + (p - 1) / v) * 3, 'pipeline');
    });
  }

  for (const [p, v, m] of [[4, 2, 16], [8, 4, 32], [4, 10, 32], [8, 8, 32], [8, 8, 64]] as const) {
    test(`interleaved, equal stages, p ${p} v ${v} m ${m}: 2(p·v − 1) sends on the path`, () => {
      const d = 1e-3;
      close(end('interleaved', p, v, m, equal(p), d) - end('interleaved', p, v, m, equal(p), 0), 2 * (p * v - 1) * d, 'sends');
    });
  }

  for (const p of [4, 8]) {
    test(`1F1B, equal stages, p ${p}: p more micro-batches add p·T + 2(p − 1) sends`, () => {
      const d = 1e-3;
      const grow = end('1f1b', p, 1, 5 * p, equal(p), d) - end('1f1b', p, 1, 4 * p, equal(p), d);
      close(grow, p * 3 + 2 * (p - 1) * d, 'p micro-batches more');
    });
  }

  for (const [sched, p, v, m] of [['1f1b', 8, 1, 32], ['interleaved', 4, 2, 16], ['interleaved', 8, 4, 32]] as const) {
    test(`${sched} p ${p} v ${v}: a last stage slower than the sends leaves 2(p − 1) sends on the path`, () => {
      const times = equal(p).map(([f, b], s): [number, number] => (s === p - 1 ? [f * 1.1, b * 1.1] : [f, b]));
      const d = 1e-3;
      close(end(sched, p, v, m, times, d) - end(sched, p, v, m, times, 0), 2 * (p - 1) * d, 'sends');
    });
  }

  test('the timeline run (the simulator) and the times-only run (the estimate) end together', () => {
    const times: [number, number][] = [[0.9, 1.9], [1, 2], [1, 2.1], [1.2, 2.3]];
    for (const [sched, v, m] of [['1f1b', 1, 12], ['interleaved', 2, 8], ['gpipe', 1, 6]] as const) {
      close(end(sched, 4, v, m, times, 0.01, true), end(sched, 4, v, m, times, 0.01, false), sched);
    }
  });

  test('one stage: a million micro-batches cost a million times one, without a pass-by-pass loop', () => {
    const mk = (m: number) => plan({
      model: gpt(4, 1024, 16), training: { microBatch: 1, gradAccum: m, globalBatch: m * 8, seqLen: 1024 },
      parallel: { dp: 8 }, cluster: { gpu: A100, gpusPerNode: 8 },
    });
    const a = estimateStepTime(mk(1000)), b = estimateStepTime(mk(1_000_000));
    assert.ok(a.stepSeconds > 0 && b.stepSeconds > 0);
    close(b.pipelineSeconds, 1000 * a.pipelineSeconds, 'pipeline');
  });

  test('1F1B with unequal stages: the closed form follows the path to the slowest stage that the run takes', () => {
    // A lighter last stage moves the path to a middle stage: Σ_{s<b} T_s + (m − (p − 1 − b))·T_b + 2·Σ_{s>b} T_s.
    for (const [first, last] of [[0.9, 1], [1, 0.9], [0.9, 0.9], [1.1, 1], [1, 1.1], [0.95, 0.97]] as const) {
      for (const [p, m] of [[4, 8], [4, 16], [8, 16], [8, 40]] as const) {
        const times = equal(p).map(([f, b], s): [number, number] => (s === 0 ? [f * first, b * first] : s === p - 1 ? [f * last, b * last] : [f, b]));
        const st = times.map(([f, b], s) => stage(s, f, b, 0));
        close(pipelineSeconds(st, m, 1, '1f1b'), end('1f1b', p, 1, m, times, 0), `first ${first} last ${last} p ${p} m ${m}`);
      }
    }
  });

  test('the closed form (the planner\'s ranking) counts the same sends for equal stages', () => {
    const d = 1e-3;
    for (const [sched, p, v, m] of [['interleaved', 4, 2, 16], ['interleaved', 8, 4, 32], ['interleaved', 8, 8, 32], ['1f1b', 4, 1, 16], ['1f1b', 8, 1, 32]] as const) {
      const st = equal(p).map(([f, b], s) => stage(s, f, b, d));
      close(pipelineSeconds(st, m, v, sched, undefined, p), end(sched, p, v, m, equal(p), d), `${sched} p ${p} v ${v} m ${m}`);
    }
  });
});

/**
 * The published layouts of the calibration and check sets (data/calibration): the closed form the planner ranks with
 * against the run the estimate and the timeline show. Sends are counted alike, and 1F1B's path through unequal stages
 * (above); what is left is the interleaved fill and drain of unequal first and last stages (torchtitan's 405B with 8
 * micro-batches, Megatron-Bridge's 70B with an uneven pipeline layout), where the closed form is at most 1 % slower,
 * and 1F1B through stages whose backward/forward ratios differ (the closed form's 1F1B path is exact when the stages
 * share one ratio, shared/time/stepTime.ts oneFOneBCompute): Megatron-Bridge's DeepSeek-V3 on B300, whose first stage
 * holds the three dense layers and whose MoE layers carry host time in the forward only, within 1 %.
 */
describe('published layouts: the closed form against the run', () => {
  before(async () => { await initFormats(); });
  test('within 0.1 % on every even split and every 1F1B layout of one backward/forward ratio, 1 % on uneven interleaved and mixed-ratio ones', async () => {
    const { runs } = await loadRuns();
    const checks = await loadCheckRuns();
    const plans = [...runs.map((r) => ({ id: r.case.id, plan: r.plan })), ...checks.flatMap((r) => (r.plan ? [{ id: r.id, plan: r.plan }] : []))]
      .filter((r) => r.plan.parallel.pp > 1);
    assert.ok(plans.length >= 30, `${plans.length} pipelined layouts`);
    for (const { id, plan: pl } of plans) {
      const sim = simulateStep(pl).stepSeconds, closed = closedFormStepSeconds(pl);
      const rel = Math.abs(closed / sim - 1);
      const uneven = !!pl.parallel.stageLayers && pl.parallel.schedule === 'interleaved';
      const ratios = allStageTimings(pl).map((x) => x.backward / (x.forward + x.recompute));
      const mixed = Math.max(...ratios) / Math.min(...ratios) - 1 > 0.01;
      assert.ok(rel <= (uneven || mixed ? 1e-2 : 1e-3), `${id}: closed form ${closed} vs run ${sim} (${(rel * 100).toFixed(3)} %)`);
    }
  });
});
