/**
 * Step time over per-micro-batch stage times: the pipeline schedule (in closed form, or run pass by pass by
 * shared/sim/run.ts), plus exposed gradient sync, optimizer step and post-step traffic. `stepSecondsFast` is the
 * numeric path for the planner (same term functions, the same schedule run as the estimate).
 */
import type { Plan, PipelineSchedule } from '../plan/types';

export { groupOf } from './shape';
import { layoutRunnable } from './problems';
import { chunksPerStage, groupOf, microbatchesPerStep, posInt } from './shape';
import { stageLayerCount } from '../comm/stageParams';
import { moeLayersIn } from '../model/params';
import { TimeCache, sameKey, type LayoutEntry } from './cache';
import { contextSlot, type ContextSlot } from './context';
import { microbatchWork, recomputedLayers, type MicrobatchWork } from './microbatch';
import { scheduleTimes } from '../sim/run';
import { allStageTimings, newStageTimingScratch, stageTimingInto, type StageTiming, type StageTimingScratch } from './stage';

/** Per-micro-batch seconds of a stage for the schedule: forward + recompute + backward. */
export function stageMicrobatchSeconds(s: StageTiming): number {
  return s.forward + s.recompute + s.backward;
}

/**
 * Pipeline seconds: m·max_s T_s + (Σ_s T_s − max_s T_s)/v + 2(p−1)·t_p2p (pipelineHops) + the sends a balanced pipeline
 * cannot hide (pipelineSendWaits). For equal stages and free sends (m + (p−1)/v)·T: bubble (p−1)/m for GPipe and 1F1B,
 * (p−1)/(v·m) interleaved (Narayanan et al. 2021 §2.2); ZB-H1 leaves only (p−1)·(t_F + t_R) idle when the
 * weight-gradient half of backward fills the bubble (Qi et al. 2024). `counts[i]` repeats stage i (alike middle stages),
 * so p stages cost O(distinct stages); `g` is the interleaved schedule's group of micro-batches per chunk (Megatron p).
 * The closed form of the schedule that shared/sim/run.ts runs pass by pass (the planner ranks with it).
 */
export function pipelineSeconds(stages: readonly StageTiming[], m: number, v: number, schedule: PipelineSchedule, counts?: readonly number[], g?: number): number {
  let max = 0, sum = 0, maxFr = 0, sumFr = 0, p2p = 0, p = 0;
  for (let i = 0; i < stages.length; i++) {
    const s = stages[i];
    const c = counts ? counts[i] : 1;
    if (c <= 0) continue;
    const t = stageMicrobatchSeconds(s);
    const fr = s.forward + s.recompute;
    if (t > max) max = t;
    if (fr > maxFr) maxFr = fr;
    if (s.p2p > p2p) p2p = s.p2p;
    sum += c * t;
    sumFr += c * fr;
    p += c;
  }
  const fill = schedule === 'zb-h1' ? sumFr - maxFr : (sum - max) / Math.max(1, v);
  const oneFOneB = runsAsOneFOneB(schedule, v) && m >= p;
  const compute = oneFOneB ? oneFOneBCompute(stages, m, counts, sum, p) : m * max + fill;
  return compute + pipelineHops(p, v) * p2p + pipelineSendWaits(stages, m, v, schedule, counts, g ?? p, max, sum, p2p, p);
}

/** 1F1B, or an interleaved schedule with one chunk per stage (which runs as 1F1B). */
function runsAsOneFOneB(schedule: PipelineSchedule, v: number): boolean {
  return schedule === '1f1b' || (schedule === 'interleaved' && v <= 1);
}

/**
 * 1F1B's compute path with stages of any times (free sends): max_b [Σ_{s<b} T_s + (m − (p − 1 − b))·T_b + 2·Σ_{s>b} T_s].
 * The path through stage b fills to it (the first micro-batch's forward and its backward through the earlier
 * stages), crosses every later stage twice (the first micro-batch's round trip while b holds its p − 1 − b warm-up
 * forwards, and the last one's before b's cool-down), and runs b's other passes back to back. Equal stages give
 * (m + p − 1)·T for every b (Narayanan et al. 2021 §2.2); a lighter last stage moves the path to a middle stage,
 * which the m·max_s T_s + Σ_s T_s − max_s T_s form missed (by up to 5 % with the first and last stages ±15 %).
 * The longest paths of the pass-by-pass run (shared/sim/run.ts), enumerated over random stage times, have this form
 * whenever the stages share one backward/forward ratio; test/unit/sim/scheduleRun.test.ts. Stages of one run give
 * the same path (the terms in the run's index cancel), so one per run is enough. m ≥ p.
 */
function oneFOneBCompute(stages: readonly StageTiming[], m: number, counts: readonly number[] | undefined, sum: number, p: number): number {
  let best = 0, before = 0, b = 0;
  for (let i = 0; i < stages.length; i++) {
    const c = counts ? counts[i] : 1;
    if (c <= 0) continue;
    const t = stageMicrobatchSeconds(stages[i]);
    const path = before + (m - (p - 1 - b)) * t + 2 * (sum - before - t);
    if (path > best) best = path;
    before += c * t;
    b += c;
  }
  return best;
}

/**
 * The sends a pipeline of (nearly) equal stages puts on its path beyond the first forward's and the last backward's
 * 2(p−1); zero once the slowest stage's slack hides them (first principles, the schedules' dependencies; the pass-by-pass
 * run agrees, test/unit/sim/scheduleRun.test.ts):
 * - interleaved: each of the v − 1 later rounds of the fill starts at the slowest stage b when the round's first
 *   micro-batch comes back around: after the other stages' chunk passes and one send per stage, while b ran its group of
 *   g chunk passes: waits max(0, Σ_{s≠b} f_s + Σ_s d_s − (g − 1)·f_b) per round, with f the chunk's forward; the drain
 *   the same with the chunk's backward (recompute included). Equal stages: p·d a round, 2(p·v − 1) sends in all.
 * - 1F1B: the steady state runs at the mean of the cycle through all p stages and back, λ = (Σ_s T_s + 2(p−1)·d)/p,
 *   when that exceeds max_s T_s: m·(λ − max_s T_s) − 2d more (equal stages: 2(p−1) sends every p micro-batches; Megatron's
 *   `send_forward_recv_backward` exchanges block).
 * GPipe and ZB-H1 add none.
 */
export function pipelineSendWaits(
  stages: readonly StageTiming[], m: number, v: number, schedule: PipelineSchedule, counts: readonly number[] | undefined, g: number,
  max: number, sum: number, d: number, p: number,
): number {
  if (!(d > 0) || p < 2) return 0;
  if (runsAsOneFOneB(schedule, v)) {
    const lambda = (sum + 2 * (p - 1) * d) / p;
    return Math.max(0, m * (lambda - max) - 2 * d);
  }
  if (schedule !== 'interleaved') return 0;
  let sumF = 0, sumB = 0, sends = 0;
  for (let i = 0; i < stages.length; i++) {
    const c = counts ? counts[i] : 1;
    if (c <= 0) continue;
    const s = stages[i];
    sumF += c * s.forward;
    sumB += c * (s.recompute + s.backward);
    sends += c * s.p2p;
  }
  let wf = 0, wb = 0;
  for (let i = 0; i < stages.length; i++) {
    const s = stages[i];
    if ((counts && counts[i] <= 0) || stageMicrobatchSeconds(s) < max * (1 - 1e-12)) continue;
    const f = s.forward, b = s.recompute + s.backward;
    wf = Math.max(wf, (sumF - f - (g - 1) * f) / v + sends);
    wb = Math.max(wb, (sumB - b - (g - 1) * b) / v + sends);
  }
  return (v - 1) * (Math.max(0, wf) + Math.max(0, wb));
}

/**
 * Pipeline sends on the critical path of one step: 2(p−1), the first micro-batch's forward crossing the p − 1 stage
 * boundaries to reach the last stage and the last micro-batch's backward crossing them back. In between, a send hides
 * behind the receiving stage's other queued passes (1F1B and interleaved steady states keep one pass of slack per
 * boundary), as long as a send is shorter than a chunk's pass. The event simulation of the same schedules
 * (shared/sim/schedule.ts) moves by exactly 2(p − 1) sends per send second there, for any v and m
 * (test/unit/time/pipelineHops.test.ts).
 */
export function pipelineHops(p: number, _v: number): number {
  return p > 1 ? 2 * (p - 1) : 0;
}

/**
 * Gradient sync left after a stage's last backward: max(0, t_sync − hide) + overlapCost·min(t_sync, hide), hide = window +
 * cooldown + slack: the last backward's buckets, an interleaved cooldown's earlier chunks (interleavedSyncHidden) and
 * the later backwards of earlier stages (the last micro-batch's backward reaches stage 0 last). Stages in order;
 * `counts` as above.
 */
export function exposedGradSync(stages: readonly StageTiming[], counts?: readonly number[], overlapCost = 0): number {
  let slack = 0;
  let worst = 0;
  for (let i = 0; i < stages.length; i++) {
    const s = stages[i];
    const c = counts ? counts[i] : 1;
    if (c <= 0) continue;
    const hide = s.gradSyncWindow + s.gradSyncCooldown + slack;
    worst = Math.max(worst, Math.max(0, s.gradSync - hide) + overlapCost * Math.min(s.gradSync, hide));
    slack += c * (s.backward + s.recompute + s.p2p);
  }
  return Math.max(0, worst);
}

/** Optimizer plus post-step traffic of the slowest stage: max_s(t_opt,s + t_post,s) (every stage starts together after the sync). */
export function stepTailSeconds(stages: readonly StageTiming[]): number {
  let tail = 0;
  for (const s of stages) tail = Math.max(tail, s.optimizer + s.postStep);
  return tail;
}


/** Step seconds = pipeline + exposed grad sync + max_s(optimizer + post-step traffic) + the fixed per-step overhead. */
export function stepSecondsOf(plan: Plan, stages: readonly StageTiming[], cache: TimeCache, counts?: readonly number[]): number {
  const m = microbatchesPerStep(plan);
  return pipelineSeconds(stages, m, chunksPerStage(plan), plan.parallel.schedule, counts, groupOf(plan, m))
    + exposedGradSync(stages, counts, cache.params.overlapCost) + stepTailSeconds(stages) + cache.params.stepOverhead;
}

/**
 * The closed form over the traceable stage timings. The estimate and the planner's fast path run the schedule pass by
 * pass (shared/sim/run.ts); the closed form differs where sends or unequal stages move the fill and drain
 * (docs/time-model.md §2) and is kept as the schedule tests' reference. NaN when the layout cannot run.
 */
export function closedFormStepSeconds(plan: Plan, cache: TimeCache = new TimeCache()): number {
  if (!layoutRunnable(plan)) return Number.NaN;
  return stepSecondsOf(plan, allStageTimings(plan, cache), cache);
}

/** Runs of alike consecutive stages: the first stage of each run and the run's length. */
export interface StageRuns {
  /** The plan the runs were computed for (the key for sameKey('runs', …)). */
  readonly plan: Plan;
  readonly firsts: readonly number[];
  readonly counts: readonly number[];
}

/**
 * A stage's timing depends only on whether it is first or last and on its layer, MoE-layer and recomputed-layer counts,
 * so consecutive middle stages with equal counts form one run (even splits: at most 4 runs; uneven planner splits: 3).
 */
export function stageRuns(plan: Plan): StageRuns {
  const p = posInt(plan.parallel.pp);
  const model = plan.model;
  const firsts: number[] = [];
  const counts: number[] = [];
  let start = 0, prevN = -1, prevMoe = -1, prevMoeR = -1;
  for (let s = 0; s < p; s++) {
    const n = stageLayerCount(plan, s);
    const nMoe = moeLayersIn(model, start, start + n);
    const nMoeR = moeLayersIn(model, start, start + recomputedLayers(plan, n));
    start += n;
    // Stages 0 and p − 1 differ from the middle ones (embedding, LM head), so they never join a run.
    if (s > 1 && s < p - 1 && n === prevN && nMoe === prevMoe && nMoeR === prevMoeR) {
      counts[counts.length - 1]++;
      continue;
    }
    firsts.push(s);
    counts.push(1);
    prevN = n;
    prevMoe = nMoe;
    prevMoeR = nMoeR;
  }
  return { plan, firsts, counts };
}

/** stageRuns, kept per layout (the TimeCache entry) and 'runs' key. */
function cachedStageRuns(plan: Plan, entry: LayoutEntry<ContextSlot, StageRuns>): StageRuns {
  const list = entry.runs;
  for (let i = 0; i < list.length; i++) {
    const r = list[i];
    if (sameKey('runs', r.plan, plan)) return r;
  }
  const r = stageRuns(plan);
  if (list.length >= 8) list.length = 0;
  list.push(r);
  return r;
}

/**
 * Fast numeric step time for the planner: the same term functions without listing collectives, one stage per run of
 * alike stages (stageRuns), with the cache's scratch records (no StageTiming or StageComm is allocated), and the same
 * pipeline schedule run as the estimate (scheduleTimes), so the figure is the estimate's. `worth`: the caller's test of
 * whether a step time could still matter to it; where the schedule's lower bound (scheduleLowerBound plus the tail)
 * fails it, that bound is returned without running the schedule. Without a pipeline the closed form is the run's own
 * figure (m·T). NaN for layouts with problems.
 */
export function stepSecondsFast(plan: Plan, cache: TimeCache, worth?: (lowerBound: number) => boolean): number {
  const entry = cache.entry<ContextSlot, StageRuns>(plan);
  if (!layoutRunnable(plan, entry.runnable)) return Number.NaN;
  const slot = contextSlot(plan, cache, entry);
  const ctx = slot.ctx;
  const runs = cachedStageRuns(plan, entry);
  const firsts = runs.firsts;
  const t = plan.training;
  // The micro-batch work reads no sharding field: layouts that differ only in sharding share it (one context slot).
  const kind = t.recomputeLayers !== undefined ? -1 : t.recompute === 'none' ? 0 : t.recompute === 'selective' ? 1 : t.recompute === 'full' ? 2 : -1;
  let stages = cache.scratch[firsts.length] as StageTimingScratch[] | undefined;
  if (!stages) {
    stages = [];
    cache.scratch[firsts.length] = stages;
  }
  for (let i = 0; i < firsts.length; i++) {
    const s = firsts[i];
    let work = kind >= 0 ? slot.works[s * 3 + kind] : undefined;
    if (!work) {
      work = microbatchWork(plan, s, ctx);
      if (kind >= 0) slot.works[s * 3 + kind] = work;
    }
    if (i >= stages.length) stages.push(newStageTimingScratch(work));
    computeOnlyInto(work, stages[i]);
  }
  // ctx.m and ctx.v are microbatchesPerStep and chunksPerStage of this plan (its context slot shares dp, vpp and schedule).
  const counts = runs.counts;
  const m = ctx.m, v = ctx.v;
  const pipeline = posInt(plan.parallel.pp) > 1;
  const overhead = cache.params.stepOverhead;
  const zb = plan.parallel.schedule === 'zb-h1';
  // The same bound over the stages' compute alone, before any communication is costed (computeOnlyInto); below the full
  // bound when no overlapped communication can speed the compute up (overlapCost ≥ 0). A layout whose communication,
  // optimizer or send would come out NaN (a NaN catalog or overhead figure) can still have a finite compute bound: when
  // that bound is not worth it the layout is set aside here as not worth costing, where the full estimate would have
  // given NaN and the search would have counted it as 'invalid-estimate'. What the search keeps is the same; only its
  // pruning counts by reason differ.
  if (pipeline && worth && cache.params.overlapCost >= 0) {
    const compute = scheduleLowerBound(stages, m, v, zb, cache.params.overlapCost, counts) + overhead;
    if (compute > 0 && compute < Infinity && !worth(compute)) return compute;
  }
  for (let i = 0; i < firsts.length; i++) stageTimingInto(plan, firsts[i], ctx, stages[i].work, cache, entry, stages[i]);
  if (pipeline) {
    // A pipeline: the schedule run pass by pass, as the estimate runs it, unless even its lower bound is not worth it.
    if (worth) {
      const bound = scheduleLowerBound(stages, m, v, zb, cache.params.overlapCost, counts) + stepTailSeconds(stages) + overhead;
      if (!worth(bound)) return bound;
    }
    const run = scheduleTimes(plan, expandRuns(stages, counts), m, v, cache.params.overlapCost, overhead);
    if (run) return run.stepSeconds;
  }
  return pipelineSeconds(stages, m, v, plan.parallel.schedule, counts, groupOf(plan, m)) + exposedGradSync(stages, counts, cache.params.overlapCost)
    + stepTailSeconds(stages) + cache.params.stepOverhead;
}

/**
 * Writes a stage's compute alone into its scratch record: the micro-batch work without the communication stageTimingInto
 * adds (non-negative exposed seconds), and no sync, optimizer, post-step or send. Every field is at most the stage
 * timing's, and scheduleLowerBound only adds, scales by positive counts and takes maxima, so its bound over these
 * records is at most its bound over the full timings (floating-point rounding is monotone), and so below the step.
 */
function computeOnlyInto(work: MicrobatchWork, out: StageTimingScratch): void {
  out.forward = work.forward; out.recompute = work.recompute; out.backward = work.backward;
  out.gradSync = 0; out.gradSyncWindow = 0; out.gradSyncCooldown = 0; out.optimizer = 0; out.postStep = 0; out.p2p = 0;
  out.layers = work.layers; out.work = work;
}

/** One entry per stage from one per run of alike stages (the run's record repeated). */
function expandRuns<T>(stages: readonly T[], counts: readonly number[]): T[] {
  const out: T[] = [];
  for (let i = 0; i < counts.length; i++) for (let c = 0; c < counts[i]; c++) out.push(stages[i]);
  return out;
}

/**
 * A lower bound on when the schedule run (shared/sim/run.ts scheduleTimes) has every stage's gradients ready, from the
 * stage timings alone. First principles, the schedules' dependencies:
 * - stage b cannot start before micro-batch 0's first chunk has crossed stages 0…b−1 (Σ_{s<b} f_s/v + d_s), then runs
 *   all its chunk passes one after another (m·T_b);
 * - b's last pass, the last micro-batch's backward of chunk 0 (GPipe, 1F1B and the interleaved order all end on it),
 *   crosses b−1…0 before stage 0 ends (Σ_{s<b} (r_s + b_s)/v + d_{s+1}, with the smallest send for d);
 * - a stage's gradients are ready its exposed sync after its last pass: max(0, t_sync − w) + overlapCost·min(t_sync, w),
 *   w = min(window, the last backward's b_s/v), as the run launches it (gradientsReady); zero for Megatron's per-chunk
 *   sync and for ZB-H1, whose lanes end on deferred weight-gradient passes (their crossing back is left out too).
 * Equal stages with free sends and no sync give the run's own (m + (p−1)/v)·T. `counts[i]` repeats stage i (alike
 * consecutive stages; the first record is stage 0); the bound of a run is at its last stage.
 */
export function scheduleLowerBound(stages: readonly StageTiming[], m: number, v: number, zb: boolean, overlapCost: number, counts?: readonly number[]): number {
  // A backward send into stage s leaves stage s + 1: the smallest send of any stage keeps the bound below the path.
  let dMin = Infinity;
  for (let i = 0; i < stages.length; i++) if (!counts || counts[i] > 0) dMin = Math.min(dMin, stages[i].p2p);
  let laneEnds = 0, toStage0 = 0, arrive = 0, both = 0, sync0 = -1;
  for (let i = 0; i < stages.length; i++) {
    const c = counts ? counts[i] : 1;
    if (c <= 0) continue;
    const s = stages[i];
    const sync = zb ? 0 : syncAfterLastPass(s, v, overlapCost);
    if (sync0 < 0) sync0 = sync;
    const work = m * stageMicrobatchSeconds(s);
    // What each stage before b adds: its forward of the first chunk and send, and (not for ZB-H1) the last backward.
    const fwd = s.forward / v + s.p2p;
    const cross = fwd + (zb ? 0 : (s.recompute + s.backward) / v + dMin);
    laneEnds = Math.max(laneEnds, arrive + (c - 1) * fwd + work + sync);
    toStage0 = Math.max(toStage0, both + (c - 1) * cross + work);
    arrive += c * fwd;
    both += c * cross;
  }
  return Math.max(laneEnds, toStage0 + Math.max(0, sync0));
}

/** The run's exposed gradient sync after a stage's last pass (shared/sim/gradientSync.ts gradientsReady); 0 for per-chunk syncs. */
function syncAfterLastPass(s: StageTiming, v: number, overlapCost: number): number {
  if (!(s.gradSync > 0) || s.gradSyncCooldown > 0) return 0;
  const w = Math.min(s.gradSyncWindow, s.backward / v);
  return Math.max(0, s.gradSync - w) + overlapCost * Math.min(s.gradSync, w);
}
