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
 */
export function pipelineSeconds(stages: readonly StageTiming[], m: number, v: number, schedule: PipelineSchedule): number {
  let max = 0;
  let sum = 0;
  let maxFr = 0;
  let sumFr = 0;
  let p2p = 0;
  for (const s of stages) {
    const t = stageMicrobatchSeconds(s);
    if (t > max) max = t;
    sum += t;
    const fr = s.forward + s.recompute;
    if (fr > maxFr) maxFr = fr;
    sumFr += fr;
    if (s.p2p > p2p) p2p = s.p2p;
  }
  const p = stages.length;
  const fill = schedule === 'zb-h1' ? sumFr - maxFr : (sum - max) / Math.max(1, v);
  return m * max + fill + 2 * (p - 1) * p2p;
}

/** Gradient sync left after a stage's last backward: max(0, t_sync − window − slack), slack = later backwards of earlier stages. */
export function exposedGradSync(stages: readonly StageTiming[]): number {
  let slack = 0;
  let worst = 0;
  for (const s of stages) {
    worst = Math.max(worst, s.gradSync - s.gradSyncWindow - slack);
    slack += s.backward + s.recompute + s.p2p;
  }
  return Math.max(0, worst);
}

/** Step seconds = pipeline + exposed grad sync + max optimizer + max post-step traffic. */
export function stepSecondsOf(plan: Plan, stages: readonly StageTiming[]): number {
  const m = microbatchesPerStep(plan);
  let opt = 0;
  let post = 0;
  for (const s of stages) {
    opt = Math.max(opt, s.optimizer);
    post = Math.max(post, s.postStep);
  }
  return pipelineSeconds(stages, m, chunksPerStage(plan), plan.parallel.schedule) + exposedGradSync(stages) + opt + post;
}

/**
 * Fast numeric step time for the planner: evaluates only the first, last and the most loaded stage (O(1) each).
 * Returns NaN for layouts with problems.
 */
export function stepSecondsFast(plan: Plan): number {
  if (!layoutRunnable(plan)) return Number.NaN;
  const p = plan.parallel.pp;
  const ctx = timeContext(plan);
  if (p === 1) return stepSecondsOf(plan, [stageTiming(plan, 0, false, ctx)]);
  if (plan.parallel.stageLayers || plan.model.layers % p !== 0 || (plan.model.moe && plan.model.moe.layerFrequency > 1)) {
    const all: StageTiming[] = [];
    for (let s = 0; s < p; s++) all.push(stageTiming(plan, s, false, ctx));
    return stepSecondsOf(plan, all);
  }
  const first = stageTiming(plan, 0, false, ctx);
  const last = stageTiming(plan, p - 1, false, ctx);
  const mid = p > 2 ? stageTiming(plan, 1, false, ctx) : undefined;
  // Middle stages are alike under an even split; stand-ins keep the closed form's sums exact.
  const stages: StageTiming[] = [first];
  for (let s = 1; s < p - 1 && mid; s++) stages.push(mid);
  stages.push(last);
  return stepSecondsOf(plan, stages);
}
