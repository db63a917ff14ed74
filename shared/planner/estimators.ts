/**
 * The core's estimators as the planner calls them: the numeric fast paths for the search
 * (shared/memory/fast.ts `peakMemoryFast`, shared/time/stepTime.ts `stepSecondsFast`) and, for the layouts returned,
 * the figures of the traceable estimates: the stage peaks of `estimateMemory` (computed by `stagePeaks` from the same
 * stage numbers, without labels) and `estimateStepTime`.
 */
import { peakMemoryFast, stagePeaks } from '../memory/fast';
import { layoutImpossible, validatePlan } from '../plan/validate';
import type { Plan, Problem } from '../plan/types';
import { TimeCache } from '../time/cache';
import { estimateStepTime } from '../time/estimate';
import { stepSecondsFast } from '../time/stepTime';
import type { PlannerEstimators } from './types';

/** Peak allocated and reserved bytes over the stages, as estimateMemory reports them (zeros when its layout is impossible). */
function fullMemory(plan: Plan): { allocated: number; reserved: number } {
  try {
    let problems: Problem[];
    try {
      problems = validatePlan(plan);
    } catch {
      problems = [{ code: 'value-not-finite', severity: 'error', message: 'The plan is malformed.', paths: [] }];
    }
    return layoutImpossible(problems) ? { allocated: 0, reserved: 0 } : stagePeaks(plan);
  } catch {
    return { allocated: 0, reserved: 0 };
  }
}

/**
 * The core estimators over one step-time cache: the planner makes one cache per search and every fast and full
 * estimate of that search shares it (shared/time/cache.ts); nothing is cached between searches.
 */
export function coreEstimators(cache: TimeCache = new TimeCache()): PlannerEstimators {
  return {
    peakBytes: peakMemoryFast,
    stepSeconds: (plan, worth) => stepSecondsFast(plan, cache, worth),
    full(plan) {
      const mem = fullMemory(plan);
      return { peakAllocatedBytes: mem.allocated, peakReservedBytes: mem.reserved, stepSeconds: estimateStepTime(plan, cache).stepSeconds };
    },
  };
}
