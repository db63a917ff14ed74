/**
 * makePlan: a Plan from any subset of its inputs (tests, the CLI, the planner's callers). It is derivePlan (derive.ts)
 * with one convenience: without a micro batch it states ShardLens's default of 1, so a global batch alone is split
 * into accumulation steps rather than into a larger micro batch.
 */
import { derivePlan, TRAINING_DEFAULTS, type PlanInput } from './derive';
import type { GpuSpec, Plan } from './types';

export { TRAINING_DEFAULTS, type DeepPartial, type PlanInput } from './derive';
export { engineForStyle } from './derived';

/** Fills a Plan from a partial one; `gpu` is the cluster's GPU when the partial has none (default H100 SXM). */
export function makePlan(partial: PlanInput, gpu?: GpuSpec): Plan {
  const micro = partial.training?.microBatch;
  if (micro !== undefined) return derivePlan(partial, gpu).plan;
  const sources = { ...partial.sources, 'training.microBatch': partial.sources?.['training.microBatch'] ?? { kind: 'default', detail: TRAINING_DEFAULTS.microBatch[1] } } as const;
  return derivePlan({ ...partial, training: { ...partial.training, microBatch: 1 }, sources }, gpu).plan;
}
