/** Communication per step: collectivesPerStep lists every collective of every distinct pipeline stage. */
import type { Plan } from '../plan/types';
import type { Collective } from '../comm/types';
import { TimeCache } from './cache';
import { timeContext } from './context';
import { layoutProblems } from './problems';
import { posInt } from './shape';
import { stageComm } from './stageComm';

/**
 * Every collective one rank takes part in during one optimizer step, for the first, second and last pipeline stage
 * (middle stages repeat the second under an even split), or every stage when the split is explicit. [] for bad layouts.
 */
export function collectivesPerStep(plan: Plan, cache: TimeCache = new TimeCache()): Collective[] {
  if (layoutProblems(plan).some((p) => p.severity === 'error')) return [];
  const p = posInt(plan.parallel.pp);
  const stages = plan.parallel.stageLayers || p <= 3 ? Array.from({ length: p }, (_, s) => s) : [0, 1, p - 1];
  const ctx = timeContext(plan, cache);
  return stages.flatMap((s) => stageComm(plan, s, cache, ctx).collectives);
}
