/**
 * Long steps (many micro-batches): the simulator draws each stage's first and last passes and sums the steady state
 * between them (shared/sim/run.ts DrawWindow, shared/sim/simulate.ts drawWindow), so a step of 10⁵–10⁶ passes gives a
 * timeline small enough to send to the dashboard, with the same numbers as drawing every pass.
 * Expected values:
 * - the run with a window and the run without it are the same arithmetic: every time, total, peak and live count is
 *   equal, and each drawn block is the full run's block at the same position;
 * - first principles: a stage runs every micro-batch's forward and backward once, so its busy compute is m·(F + R + B);
 *   under 1F1B stage s holds at most p − s micro-batches in flight whatever m (Narayanan et al. 2021 §2.2), so the
 *   activations above the static bytes peak the same at m = 20,000 as at m = 64 (the static bytes do grow with m
 *   here: torch.distributed.pipelining keeps receive buffers for every micro-batch, docs/engine-memory.md#pipeline).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Lane } from '../../../shared/sim/lane';
import { runPipeline } from '../../../shared/sim/run';
import { stageOps } from '../../../shared/sim/schedule';
import { DRAWN_PASSES, drawWindow, simulateStep } from '../../../shared/sim/simulate';
import { toChromeTrace } from '../../../shared/sim/trace';
import { estimateStepTime } from '../../../shared/time/estimate';
import type { StageTiming } from '../../../shared/time/stage';
import type { PipelineSchedule } from '../../../shared/plan/types';
import { elidedSentence } from '../../../shared/wording/comm';
import { A100, gpt, plan } from './fixtures';

/** A stage timing with what the schedule reads; unequal stages and some exposed communication in every pass. */
function stage(s: number): StageTiming {
  const parts = { forward: { comm: 0.01 }, backward: { comm: 0.02 }, recompute: { comm: 0 } };
  return {
    stage: s, layers: 1, forward: 1 + 0.1 * s, recompute: 0.25, backward: 2 + 0.05 * s, gradSync: 0, gradSyncWindow: 0, gradSyncCooldown: 0,
    optimizer: 0, postStep: 0, p2p: 0.003, work: { parts }, comm: { perMicrobatchForward: 0.005, perMicrobatchBackward: 0.01 },
  } as unknown as StageTiming;
}

function run(schedule: PipelineSchedule, p: number, v: number, m: number, window?: { head: number; tail: number }): Lane[] {
  const st = Array.from({ length: p }, (_, s) => stage(s));
  const ops = Array.from({ length: p }, (_, s) => stageOps(schedule, p, v, m, s, p));
  const acts = Array.from({ length: p }, (_, s) => 1e9 * (s + 1));
  const lanes = runPipeline(st, ops, m, v, schedule === 'zb-h1', acts, true, window);
  assert.ok(lanes, 'the schedule runs');
  return lanes;
}

describe('a window of drawn passes changes no number', () => {
  for (const [schedule, p, v, m] of [['1f1b', 4, 1, 64], ['interleaved', 4, 2, 64], ['gpipe', 3, 1, 40], ['zb-h1', 4, 1, 48]] as const) {
    test(`${schedule}, p ${p}, v ${v}, m ${m}`, () => {
      const full = run(schedule, p, v, m);
      const cut = run(schedule, p, v, m, { head: 6, tail: 6 });
      for (let s = 0; s < p; s++) {
        const a = full[s], b = cut[s];
        assert.equal(b.t, a.t, `stage ${s}: end`);
        assert.equal(b.busy, a.busy, `stage ${s}: busy`);
        assert.deepEqual(b.totals, a.totals, `stage ${s}: totals per kind`);
        assert.equal(b.actPeak, a.actPeak, `stage ${s}: activation peak`);
        assert.equal(b.maxLive, a.maxLive, `stage ${s}: most live chunks`);
        assert.deepEqual(b.chunkEnd, a.chunkEnd, `stage ${s}: chunk ends`);
        assert.equal(a.elided, undefined, 'the full run draws everything');
        const e = b.elided;
        assert.ok(e && e.passes > 0 && e.end > e.start, `stage ${s}: a span is elided`);
        // Every block kept is the full run's block; the ones left out lie inside the elided span.
        const key = (x: { start: number; end: number; kind: string; lane: string }) => `${x.kind}|${x.lane}|${x.start}|${x.end}`;
        const inFull = new Set(a.blocks.map(key));
        for (const blk of b.blocks) assert.ok(inFull.has(key(blk)), `stage ${s}: drawn block ${blk.label} is in the full run`);
        const kept = new Set(b.blocks.map(key));
        // Compute blocks left out lie inside the span; sends (communication lane) start inside it and may end after it.
        for (const blk of a.blocks) {
          if (kept.has(key(blk))) continue;
          assert.ok(blk.start >= e.start && (blk.lane === 'comm' ? blk.start <= e.end : blk.end <= e.end), `stage ${s}: ${blk.label} left out inside the span`);
        }
        // Memory points outside the span are the full run's points.
        const outside = (pts: [number, number][]) => pts.filter(([t]) => t < e.start || t > e.end).map(([t, x]) => `${t}|${x}`);
        assert.deepEqual(outside(b.mem), outside(a.mem), `stage ${s}: memory outside the span`);
      }
    });
  }
});

describe('simulating a long step', () => {
  const base = { model: gpt(24, 2048, 16), cluster: { gpu: A100, gpusPerNode: 8, nodes: 1 } };
  const longPlan = plan({ ...base, training: { microBatch: 1, globalBatch: 20_000, seqLen: 2048, precision: 'bf16-mixed' }, parallel: { tp: 1, pp: 4, dp: 1, schedule: '1f1b' } });
  const shortPlan = plan({ ...base, training: { microBatch: 1, globalBatch: 64, seqLen: 2048, precision: 'bf16-mixed' }, parallel: { tp: 1, pp: 4, dp: 1, schedule: '1f1b' } });
  const sim = simulateStep(longPlan);

  test('runs, with the estimate\'s step time', () => {
    assert.ok(sim.ok);
    const est = estimateStepTime(longPlan).stepSeconds;
    assert.ok(Math.abs(sim.stepSeconds - est) <= 1e-9 * est, `${sim.stepSeconds} vs ${est}`);
  });

  test('draws a bounded timeline and says what it left out', () => {
    const drawnPasses = sim.stages.reduce((a, st) => a + st.blocks.filter((b) => b.lane === 'compute' && (b.kind === 'forward' || b.kind === 'backward')).length, 0);
    // 20,000 micro-batches × 4 stages × 2 passes = 160,000 passes; the window draws at most DRAWN_PASSES of them.
    assert.ok(drawnPasses <= DRAWN_PASSES, `${drawnPasses} passes drawn`);
    for (const st of sim.stages) {
      const e = st.elided;
      assert.ok(e, `stage ${st.stage} has an elided span`);
      const drawn = st.blocks.filter((b) => b.lane === 'compute' && (b.kind === 'forward' || b.kind === 'backward')).length;
      assert.equal(e.passes + drawn, 2 * 20_000, `stage ${st.stage}: drawn and elided passes make every pass`);
      assert.ok(e.start > 0 && e.end < sim.stepSeconds);
      assert.equal(st.memory.filter((pt) => pt.t > e.start && pt.t < e.end).length, 0, 'no memory point inside the span');
    }
    assert.ok(JSON.stringify(sim).length < 8e6, 'the answer stays a few megabytes');
    assert.match(elidedSentence(sim.stages) ?? '', /passes of the steady state/);
    const trace = toChromeTrace(sim);
    assert.equal(trace.traceEvents.filter((x) => x.cat === 'elided').length, 4, 'one elided event per stage in the trace');
  });

  test('totals over every pass: m·(F + R + B) of busy compute per stage', () => {
    for (const st of sim.stages) {
      const c = st.computeSeconds;
      const passes = c.forward + c.backward + c.recompute + c.comm;
      assert.ok(Math.abs(passes - st.busySeconds) <= 1e-9 * st.busySeconds, `stage ${st.stage}: ${passes} vs busy ${st.busySeconds}`);
    }
    const short = simulateStep(shortPlan);
    assert.ok(short.ok);
    for (let s = 0; s < 4; s++) {
      // The same stage, 20,000 instead of 64 micro-batches: busy compute scales with m exactly.
      const ratio = sim.stages[s].busySeconds / short.stages[s].busySeconds;
      assert.ok(Math.abs(ratio - 20_000 / 64) < 1e-6 * ratio, `stage ${s}: busy ratio ${ratio}`);
    }
  });

  test('1F1B in flight: p − s micro-batches and the same activation peak as a short step', () => {
    const short = simulateStep(shortPlan);
    assert.ok(short.ok);
    for (let s = 0; s < 4; s++) {
      assert.equal(sim.stages[s].maxInFlight, 4 - s, `stage ${s}: in flight`);
      const act = (st: { peakBytes: number; staticBytes: number }) => st.peakBytes - st.staticBytes;
      assert.ok(act(sim.stages[s]) > 0);
      assert.ok(Math.abs(act(sim.stages[s]) - act(short.stages[s])) <= 1e-6 * act(short.stages[s]), `stage ${s}: activation peak`);
    }
  });

  test('short steps draw everything', () => {
    const short = simulateStep(shortPlan);
    assert.ok(short.ok && short.stages.every((st) => st.elided === undefined));
    assert.equal(elidedSentence(short.stages), undefined);
    assert.equal(drawWindow(Array.from({ length: 4 }, () => new Array(128).fill({ kind: 'F', mb: 0, chunk: 0 }))), undefined);
  });
});
