/**
 * Step time in closed form: the pipeline schedule over per-micro-batch stage times, plus exposed gradient sync,
 * optimizer step and post-step traffic. `stepSecondsFast` is the numeric path for the planner (same term functions).
 */
import type { Plan, PipelineSchedule } from '../plan/types';
import { layoutRunnable } from './problems';
import { chunksPerStage, microbatchesPerStep } from './shape';
import { timeContext } from './context';
import { stageTiming, type StageTiming } from './stage';

/** Per-micro-batch seconds of a stage for the schedule: forward + recompute + backward. */
export function stageMicrobatchSeconds(s: StageTiming): number {
  return s.forward + s.recompute + s.backward;
}

/**
 * Pipeline seconds: m·max_s T_s + (Σ_s T_s − max_s T_s)/v + 2(p−1)·t_p2p. For equal stages (m + (p−1)/v)·T:
 * bubble (p−1)/m for GPipe and 1F1B, (p−1)/(v·m) interleaved (Narayanan et al. 2021 §2.2); ZB-H1 leaves only
 * (p−1)·(t_F + t_R) idle when the weight-gradient half of backward fills the bubble (Qi et al. 2024).
 * `counts[i]` repeats stage i (alike middle stages), so p stages cost O(distinct stages).
 */
export function pipelineSeconds(stages: readonly StageTiming[], m: number, v: number, schedule: PipelineSchedule, counts?: readonly number[]): number {
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
  return m * max + fill + 2 * (p - 1) * p2p;
}

/**
 * Gradient sync left after a stage's last backward: max(0, t_sync − window − slack), slack = the later backwards of
 * earlier stages (the last micro-batch's backward reaches stage 0 last). Stages in order; `counts` as above.
 */
export function exposedGradSync(stages: readonly StageTiming[], counts?: readonly number[]): number {
  let slack = 0;
  let worst = 0;
  for (let i = 0; i < stages.length; i++) {
    const s = stages[i];
    const c = counts ? counts[i] : 1;
    if (c <= 0) continue;
    worst = Math.max(worst, s.gradSync - s.gradSyncWindow - slack);
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

/** Step seconds = pipeline + exposed grad sync + max_s(optimizer + post-step traffic). */
export function stepSecondsOf(plan: Plan, stages: readonly StageTiming[], counts?: readonly number[]): number {
  const m = microbatchesPerStep(plan);
  return pipelineSeconds(stages, m, chunksPerStage(plan), plan.parallel.schedule, counts)
    + exposedGradSync(stages, counts) + stepTailSeconds(stages);
}

/**
 * Fast numeric step time for the planner: the same term functions without listing collectives. Under the default split
 * stages differ only in being first or last and in holding ⌈L/p⌉ or ⌊L/p⌋ layers, so one representative per run of
 * alike stages is evaluated and weighted by its count (at most 4 stages). Explicit splits and MoE layer frequencies > 1
 * evaluate every stage. NaN for layouts with problems.
 */
export function stepSecondsFast(plan: Plan): number {
  if (!layoutRunnable(plan)) return Number.NaN;
  const p = plan.parallel.pp;
  const ctx = timeContext(plan);
  if (p === 1) return stepSecondsOf(plan, [stageTiming(plan, 0, false, ctx)]);
  const stages: StageTiming[] = [];
  const counts: number[] = [];
  if (plan.parallel.stageLayers || (plan.model.moe && plan.model.moe.layerFrequency > 1)) {
    for (let s = 0; s < p; s++) stages.push(stageTiming(plan, s, false, ctx));
    return stepSecondsOf(plan, stages);
  }
  // Runs of alike stages in order: 0 | 1..r−1 (⌈L/p⌉ layers) | max(1, r)..p−2 (⌊L/p⌋ layers) | p−1.
  const r = plan.model.layers % p;
  const mid = Math.max(1, r);
  for (let k = 0; k < 4; k++) {
    const first = k === 0 ? 0 : k === 1 ? 1 : k === 2 ? mid : p - 1;
    const count = k === 0 || k === 3 ? 1 : k === 1 ? r - 1 : p - 1 - mid;
    if (count <= 0) continue;
    stages.push(stageTiming(plan, first, false, ctx));
    counts.push(count);
  }
  return stepSecondsOf(plan, stages, counts);
}
