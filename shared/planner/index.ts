/** The layout planner: search, ranking and the layout → plan mapping. */
export { planLayouts } from './plan-layouts';
export { planForLayout, layoutOfPlan, type LayoutChoice } from './build';
export { divisors, stageSplit } from './space';
export type { Layout, PlanResult, PlannerOptions, PlannerEstimators, PruneReason, SearchSpace } from './types';
export { spaceForFormat } from './formatSpace';
