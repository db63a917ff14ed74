/**
 * `planLayouts`: the planner's public entry. It checks its options, runs the search with the fast estimators,
 * re-estimates the top layouts with the full traceable estimators and returns a JSON-serialisable result.
 * Bad input becomes a Problem in the result, never an exception.
 */
import type { Plan, Problem } from '../plan/types';
import { planForLayout } from './build';
import { coreEstimators } from './estimators';
import { spaceForFormat } from './formatSpace';
import { choiceOf, searchLayouts } from './search';
import { spaceBounds } from './space';
import type { Layout, PlannerEstimators, PlannerOptions, PlanResult } from './types';
import type { PlanPath } from '../plan/paths';

function problem(code: string, message: string, paths: PlanPath[] = [], severity: Problem['severity'] = 'error'): Problem {
  return { code, severity, message, paths };
}

/** Reads the options; returns problems instead of throwing. */
function checkOptions(base: Plan, opts: PlannerOptions): { gpus: number; margin: number; problems: Problem[] } {
  const problems: Problem[] = [];
  const world = base.cluster.gpusPerNode * base.cluster.nodes;
  const gpus = opts.gpus ?? world;
  const margin = opts.safetyMargin ?? 0.9;
  if (!Number.isInteger(gpus) || gpus < 1) problems.push(problem('planner-gpus', `The GPU count must be a positive integer, not ${gpus}.`, ['cluster.nodes']));
  else if (gpus > base.cluster.gpusPerNode && gpus % base.cluster.gpusPerNode !== 0) {
    problems.push(problem('planner-gpus', `${gpus} GPUs is not a whole number of ${base.cluster.gpusPerNode}-GPU nodes.`, ['cluster.gpusPerNode']));
  }
  if (!(margin > 0 && margin <= 1)) problems.push(problem('planner-margin', `The safety margin must be in (0, 1], not ${margin}.`));
  if (!(base.training.globalBatch >= 1) || !Number.isInteger(base.training.globalBatch)) {
    problems.push(problem('planner-global-batch', 'The global batch must be a positive integer to plan layouts.', ['training.globalBatch']));
  }
  if (!(base.model.layers >= 1 && base.model.heads >= 1 && base.model.kvHeads >= 1)) {
    problems.push(problem('planner-model', 'The model needs layers, heads and KV heads to plan layouts.', ['model.layers', 'model.heads']));
  }
  if (!(base.cluster.gpu.memoryBytes > 0)) problems.push(problem('planner-gpu-memory', 'The GPU memory is unknown.', ['cluster.gpu']));
  return { gpus, margin, problems };
}

/** Re-estimates one layout with the full estimators (when given), keeping the fast figures otherwise. */
function refine(base: Plan, layout: Layout, gpus: number, limit: number, est: PlannerEstimators): Layout {
  if (!est.full) return layout;
  const plan = planForLayout(base, choiceOf(layout), gpus);
  if (!plan) return layout;
  let full: ReturnType<NonNullable<PlannerEstimators['full']>>;
  try {
    full = est.full(plan);
  } catch {
    return layout;
  }
  const ok = (x: number): boolean => Number.isFinite(x) && x >= 0;
  if (!(ok(full.stepSeconds) && full.stepSeconds > 0 && ok(full.peakAllocatedBytes) && ok(full.peakReservedBytes))) return layout;
  return {
    ...layout, stepSeconds: full.stepSeconds, peakAllocatedBytes: full.peakAllocatedBytes,
    peakReservedBytes: full.peakReservedBytes, fits: full.peakReservedBytes <= limit, estimate: 'full',
  };
}

/**
 * Searches every runnable layout of `base`'s model, global batch and cluster (or `opts.gpus` GPUs of its type)
 * and returns the fastest that fit in GPU memory × `opts.safetyMargin`, best first.
 */
export function planLayouts(base: Plan, options: PlannerOptions = {}, estimators: PlannerEstimators = coreEstimators()): PlanResult {
  const start = performance.now();
  const opts: PlannerOptions = options.format ? { ...options, space: { ...spaceForFormat(options.format, base.parallel.sharding.style), ...options.space } } : options;
  const { gpus, margin, problems } = checkOptions(base, opts);
  const limit = Math.floor(base.cluster.gpu.memoryBytes * margin);
  if (problems.length) {
    return { evaluated: 0, pruned: {}, bounds: [], truncated: false, seconds: 0, gpus, memoryLimitBytes: Math.max(0, limit || 0), layouts: [], pareto: [], problems };
  }
  let out: ReturnType<typeof searchLayouts>;
  try {
    out = searchLayouts(base, gpus, limit, opts, estimators);
  } catch (err) {
    // An estimator bug must not escape the public entry point.
    problems.push(problem('planner-estimator-failed', `The estimate failed during the search: ${(err as Error).message}`));
    return { evaluated: 0, pruned: {}, bounds: [], truncated: false, seconds: (performance.now() - start) / 1000, gpus, memoryLimitBytes: limit, layouts: [], pareto: [], problems };
  }
  const refined = out.top.map((l) => refine(base, l, gpus, limit, estimators));
  const layouts = refined.filter((l) => l.fits).sort((a, b) => a.stepSeconds - b.stepSeconds || a.peakReservedBytes - b.peakReservedBytes);
  if (layouts.length < refined.length) {
    problems.push(problem('planner-estimates-disagree', `${refined.length - layouts.length} layout(s) fit by the fast estimate but not by the full one; they were left out.`, [], 'info'));
  }
  if (out.truncated) {
    problems.push(problem('planner-truncated', `The search stopped after ${out.evaluated} layouts (maxEvaluations); larger spaces were not looked at.`, [], 'warning'));
  }
  if (!layouts.length) {
    problems.push(problem('planner-nothing-fits', `No layout of ${gpus} GPUs fits in ${(limit / 2 ** 30).toFixed(1)} GiB per GPU.`, [], 'warning'));
  }
  return {
    evaluated: out.evaluated,
    pruned: out.pruned,
    bounds: spaceBounds(opts.space ?? {}, base.model.moe !== undefined),
    truncated: out.truncated,
    seconds: (performance.now() - start) / 1000,
    gpus,
    memoryLimitBytes: limit,
    layouts,
    // The front keeps the fast figures (it can hold dozens of layouts); the top layouts carry the full estimate.
    pareto: out.pareto,
    ...(out.lowestMemory ? { lowestMemory: refine(base, out.lowestMemory, gpus, limit, estimators) } : {}),
    problems,
  };
}
