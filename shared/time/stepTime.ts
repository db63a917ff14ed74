/**
 * Step time in closed form: the pipeline schedule over per-micro-batch stage times, plus exposed gradient sync,
 * optimizer step and post-step traffic. `stepSecondsFast` is the numeric path for the planner (same term functions).
 */
import type { Plan, PipelineSchedule } from '../plan/types';
import { layoutRunnable } from './problems';
import { chunksPerStage, microbatchesPerStep } from './shape';
import { stageLayerCount } from '../comm/stageParams';
import { moeLayersIn } from '../model/params';
import { timeContext } from './context';
import { recomputedLayers } from './microbatch';
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
 * Fast numeric step time for the planner: the same term functions without listing collectives. A stage's timing
 * depends only on whether it is first or last and on its layer, MoE-layer and recomputed-layer counts, so each run of
 * alike consecutive middle stages is evaluated once and weighted by its length (even splits: at most 4 stages; the
 * planner's uneven splits: 3). NaN for layouts with problems.
 */
export function stepSecondsFast(plan: Plan): number {
  if (!layoutRunnable(plan)) return Number.NaN;
  const p = plan.parallel.pp;
  const ctx = timeContext(plan);
  const model = plan.model;
  const stages = STAGES;
  const counts = COUNTS;
  stages.length = 0;
  counts.length = 0;
  let start = 0, prevN = -1, prevMoe = -1, prevMoeR = -1;
  for (let s = 0; s < p; s++) {
    const n = stageLayerCount(plan, s);
    const nR = recomputedLayers(plan, n);
    const nMoe = moeLayersIn(model, start, start + n);
    const nMoeR = moeLayersIn(model, start, start + nR);
    start += n;
    // Stages 0 and p − 1 differ from the middle ones (embedding, LM head), so they never join a run.
    if (s > 1 && s < p - 1 && n === prevN && nMoe === prevMoe && nMoeR === prevMoeR) {
      counts[counts.length - 1]++;
      continue;
    }
    stages.push(stageTiming(plan, s, false, ctx));
    counts.push(1);
    prevN = n;
    prevMoe = nMoe;
    prevMoeR = nMoeR;
  }
  return stepSecondsOf(plan, stages, counts);
}

/** Scratch lists of stepSecondsFast (reused; it is not re-entrant and never yields). */
const STAGES: StageTiming[] = [];
const COUNTS: number[] = [];
