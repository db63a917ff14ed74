/**
 * Discrete-event simulation of one optimizer step: every pipeline stage runs its schedule's passes in order, a pass
 * starts when its stage is free and its inputs have arrived (the previous stage's pass plus one pipeline send), the
 * gradient sync overlaps the last backward, then the optimizer and post-step traffic run. Ranks of one stage are
 * symmetric, so one timeline per stage is simulated (a 16,384-GPU run is p timelines).
 */
import type { Plan } from '../plan/types';
import { activationBytesPerMicrobatch, staticBytes } from '../memory/fast';
import { TimeCache } from '../time/cache';
import { timeContext } from '../time/context';
import { operatorTerms, stepFlops } from '../time/estimate';
import { layoutProblems, timeAssumptionWarnings } from '../time/problems';
import { chunksPerStage, microbatchesPerStep, peakFlops, posInt } from '../time/shape';
import { allStageTimings, type StageTiming } from '../time/stage';
import { stageMicrobatchSeconds } from '../time/stepTime';
import { syncSchedule } from '../time/syncSchedule';
import { gradientsReady } from './gradientSync';
import { addBlock, type Lane } from './lane';
import { planOps, runPipeline, type DrawWindow } from './run';
import type { Op } from './schedule';
import type { MemoryPoint, Simulation, StageTimeline } from './types';

/** Collectives that make up the gradient sync after the last backward. */
const GRAD_SYNC: ReadonlySet<string> = new Set(['dp-grad-allreduce', 'edp-grad-allreduce', 'hsdp-replicate-allreduce']);
/** Reduce-scatters that are part of the step-end sync only when the engine reduces once per step (syncSchedule). */
const REDUCE_SCATTERS: ReadonlySet<string> = new Set(['zero-grad-reduce-scatter', 'expert-fsdp-reduce-scatter']);

/** Simulation with no timeline, for layouts that cannot run. */
function failed(plan: Plan, problems: Simulation['problems']): Simulation {
  return {
    ok: false, schedule: plan.parallel.schedule, pp: posInt(plan.parallel.pp), vpp: chunksPerStage(plan), microbatches: microbatchesPerStep(plan),
    stepSeconds: 0, bubbleFraction: 0, exposedCommSeconds: 0, mfu: 0, hfu: 0, tokensPerSecond: 0, stages: [], collectives: [],
    operatorTerms: [], provenance: [], problems,
  };
}

/**
 * Most passes a timeline draws over all its stages (about 500 bytes of JSON each with their sends and bubbles): a longer
 * step draws each stage's first and last passes and sums the steady state between them (StageTimeline.elided).
 */
export const DRAWN_PASSES = 8_000;

/** The passes drawn at each end of every stage's order, or undefined when the whole step fits DRAWN_PASSES. */
export function drawWindow(ops: readonly Op[][]): DrawWindow | undefined {
  const perEnd = Math.max(32, Math.floor(DRAWN_PASSES / (2 * Math.max(1, ops.length))));
  const longest = ops.reduce((a, o) => Math.max(a, o.length), 0);
  // A few passes more than the two ends are drawn rather than elided.
  return longest > 2 * perEnd + 16 ? { head: perEnd, tail: perEnd } : undefined;
}

/** The lane's allocated memory over time on top of the static bytes; also the peak and the most live micro-batches. */
function memoryCurve(L: Lane, base: number, act: number, v: number): { points: MemoryPoint[]; peak: number; live: number } {
  const points: MemoryPoint[] = [{ t: 0, bytes: base }];
  for (const [t, a] of L.mem) points.push({ t, bytes: base + a });
  return { points, peak: base + L.actPeak, live: act > 0 ? L.maxLive / v : 0 };
}

/** Simulates one optimizer step of a plan. Bad layouts give problems and no timeline. */
export function simulateStep(plan: Plan, cache: TimeCache = new TimeCache()): Simulation {
  const problems = layoutProblems(plan);
  if (problems.some((x) => x.severity === 'error')) return failed(plan, problems);
  problems.push(...timeAssumptionWarnings(plan));
  const p = posInt(plan.parallel.pp);
  const v = chunksPerStage(plan);
  const m = microbatchesPerStep(plan);
  const sched = plan.parallel.schedule;
  const st = allStageTimings(plan, cache);
  const cost = cache.params.overlapCost;
  const acts = st.map((_, s) => activationBytesPerMicrobatch(plan, s) / v);
  const ops = planOps(plan, p, v, m);
  const lanes = runPipeline(st, ops, m, v, sched === 'zb-h1' && p > 1, acts, true, drawWindow(ops));
  if (!lanes) {
    return failed(plan, [...problems, { code: 'schedule-deadlock', severity: 'error', message: `The ${sched} schedule deadlocked for p=${p}, v=${v}, m=${m}.`, paths: ['parallel.schedule'] }]);
  }
  const pipeEnd = Math.max(...lanes.map((L) => L.t));
  const maxBusy = Math.max(...lanes.map((L) => L.busy));
  let step = 0;
  let exposedMax = 0;
  const syncExposed: number[] = [];
  // Each stage's gradient sync starts in its last backward; the optimizer waits for every stage (global gradient-norm
  // clipping all-reduces across the model-parallel group), then the post-step traffic runs.
  const ready = gradientsReady(lanes, st, v, cost, true);
  const R = Math.max(...ready);
  const timelines: StageTimeline[] = lanes.map((L, s) => {
    const T = st[s];
    const E = L.t;
    if (R > E) addBlock(L, { kind: 'idle', microbatch: -1, chunk: -1, start: E, end: R, label: E < pipeEnd ? 'pipeline drain / gradient sync' : 'gradient sync', lane: 'compute' });
    const optEnd = R + T.optimizer;
    addBlock(L, { kind: 'optimizer', microbatch: -1, chunk: -1, start: R, end: optEnd, label: 'optimizer step', lane: 'compute' });
    const postEnd = optEnd + T.postStep;
    if (T.postStep > 0) addBlock(L, { kind: 'comm', microbatch: -1, chunk: -1, start: optEnd, end: postEnd, label: 'parameter all-gather / offload copies', lane: 'comm' });
    const end = postEnd + cache.params.stepOverhead;
    if (cache.params.stepOverhead > 0) addBlock(L, { kind: 'optimizer', microbatch: -1, chunk: -1, start: postEnd, end, label: 'per-step overhead (fitted: grad-norm, clipping, data loading)', lane: 'compute' });
    step = Math.max(step, end);
    syncExposed[s] = ready[s] - E;
    const exposed = T.work.exposedCommSeconds * m + (T.forward + T.backward - T.work.forward - T.work.backward) * m + syncExposed[s] + T.postStep;
    exposedMax = Math.max(exposedMax, exposed);
    const base = staticBytes(plan, s);
    const mem = memoryCurve(L, base, acts[s], v);
    return {
      stage: s, blocks: L.blocks, computeSeconds: L.totals, ...(L.elided ? { elided: L.elided } : {}), memory: mem.points, staticBytes: base, peakBytes: mem.peak, maxInFlight: mem.live,
      busySeconds: L.busy, idleSeconds: Math.max(0, pipeEnd - L.busy), exposedCommSeconds: exposed, parts: T.work.parts,
    };
  });
  const flops = stepFlops(plan, st);
  const provenance = timeContext(plan, cache).provenance;
  const world = posInt(plan.parallel.dp) * posInt(plan.parallel.tp) * p * posInt(plan.parallel.cp);
  const peak = peakFlops(plan);
  // Gradient-sync collectives carry the exposure this simulation found (their share of the sync that outlasted compute).
  // A reduce-scatter FSDP issues in every micro-batch keeps its own exposure (in the backward passes), even with one.
  const rsAtEnd = !syncSchedule(plan, p, { dpSeconds: 0, hsdpLayerSeconds: 0 }).reduceEveryMicrobatch;
  const atStepEnd = (id: string, count: number) => GRAD_SYNC.has(id) || (REDUCE_SCATTERS.has(id) && rsAtEnd && count <= 1);
  const collectives = st.flatMap((T) => T.comm.collectives.map((c) => (atStepEnd(c.id, c.countPerStep)
    ? { ...c, exposedSeconds: T.gradSync > 0 ? Math.min(c.seconds, (syncExposed[T.stage] * c.seconds) / T.gradSync) : 0 } : c)));
  return {
    ok: true, schedule: sched, pp: p, vpp: v, microbatches: m, stepSeconds: step,
    bubbleFraction: maxBusy > 0 ? Math.max(0, pipeEnd - maxBusy) / maxBusy : 0, exposedCommSeconds: exposedMax,
    mfu: step > 0 ? flops.model / (step * world * peak) : 0, hfu: step > 0 ? flops.hardware / (step * world * peak) : 0,
    tokensPerSecond: step > 0 ? (plan.training.globalBatch * plan.training.seqLen) / step : 0,
    stages: timelines, collectives, problems, operatorTerms: operatorTerms(busiestStage(st), m, cache.params.stepOverhead, provenance), provenance,
  };
}

/** The stage with the longest micro-batch (forward + recompute + backward). */
function busiestStage(st: readonly StageTiming[]): StageTiming {
  return st.reduce((a, b) => (stageMicrobatchSeconds(b) > stageMicrobatchSeconds(a) ? b : a));
}
