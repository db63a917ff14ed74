/**
 * The core's estimators as the planner calls them: the numeric fast paths for the search
 * (shared/memory/fast.ts `peakMemoryFast`, shared/time/stepTime.ts `stepSecondsFast`) and the traceable
 * estimates for the layouts returned (`estimateMemory`, `estimateStepTime`).
 */
import { estimateMemory } from '../memory/estimate';
import { peakMemoryFast } from '../memory/fast';
import { estimateStepTime } from '../time/estimate';
import { stepSecondsFast } from '../time/stepTime';
import type { PlannerEstimators } from './types';

export const coreEstimators: PlannerEstimators = {
  peakBytes: peakMemoryFast,
  stepSeconds: stepSecondsFast,
  full(plan) {
    const mem = estimateMemory(plan);
    let allocated = 0;
    let reserved = 0;
    for (const s of mem.stages) {
      allocated = Math.max(allocated, s.peakAllocatedBytes);
      reserved = Math.max(reserved, s.peakReservedBytes);
    }
    return { peakAllocatedBytes: allocated, peakReservedBytes: reserved, stepSeconds: estimateStepTime(plan).stepSeconds };
  },
};
