/** The layout planner: search, ranking and the layout → plan mapping. */
export { planLayouts } from './plan-layouts';
export { spaceForFormat } from './formatSpace';
export { coreEstimators } from './estimators';
export { planForLayout, layoutOfPlan, type LayoutChoice } from './build';
export { choiceOf } from './search';
export { divisors, stageSplit } from './space';
export type { Layout, PlanResult, PlannerOptions, PlannerEstimators, PruneReason, SearchSpace } from './types';
