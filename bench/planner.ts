/**
 * Layout planner figures (issue 8): layouts evaluated per second on one core with the core's fast paths
 * (goal ≥ 10⁶), the planner's own overhead per layout (no-op estimators), and the time of a full search for
 * Llama 3.1 405B on 16,384 H100s (goal ≤ 1 s). Rates use CPU time of this process (medians of runs), from the
 * TypeScript sources (tsx) and from an esbuild bundle (as shipped). Printed, never asserted.
 */
import { pathToFileURL } from 'node:url';
import { findGpu } from '../shared/hardware/gpus';
import { findPreset } from '../shared/model/presets';
import { makePlan } from '../shared/plan/defaults';
import type { Plan } from '../shared/plan/types';
import { planLayouts } from '../shared/planner/plan-layouts';
import { peakMemoryFast } from '../shared/memory/fast';
import { stepSecondsFast } from '../shared/time/stepTime';
import { TimeCache } from '../shared/time/cache';
import { coreEstimators } from '../shared/planner/estimators';
import type { PlannerEstimators, PlannerOptions, PlanResult } from '../shared/planner/types';

/** Llama 3.1 405B as in the Llama 3 paper §3.3: 8K sequences, 16M-token batches (2,048 sequences), 16,384 H100s. */
function llama405b(): Plan {
  const preset = findPreset('llama-3.1-405b');
  if (!preset) throw new Error('preset llama-3.1-405b missing');
  return makePlan({
    model: preset.model,
    training: { microBatch: 1, globalBatch: 2048, seqLen: 8192, precision: 'bf16-mixed' },
    parallel: { tp: 8, pp: 16, cp: 1, dp: 128, sharding: { style: 'fsdp2' } },
    cluster: { gpusPerNode: 8, nodes: 2048 },
  }, findGpu('h100-sxm'));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** The planner entry and the fast paths it searches with, from the sources or from a bundle. */
interface Core {
  readonly planLayouts: (base: Plan, opts?: PlannerOptions, est?: PlannerEstimators) => PlanResult;
  readonly peakMemoryFast: (p: Plan) => number;
  readonly stepSecondsFast: (p: Plan, cache: TimeCache, worth?: (lowerBound: number) => boolean) => number;
  readonly TimeCache: typeof TimeCache;
  readonly coreEstimators: typeof coreEstimators;
}

/** The same functions bundled by esbuild the way the CLI and server ship them (undefined when esbuild is missing). */
async function bundledCore(): Promise<Core | undefined> {
  try {
    const esbuild = await import('esbuild');
    const out = await esbuild.build({
      stdin: {
        contents: "export { planLayouts } from './shared/planner/plan-layouts'; export { peakMemoryFast } from './shared/memory/fast';"
          + " export { stepSecondsFast } from './shared/time/stepTime'; export { TimeCache } from './shared/time/cache';"
          + " export { coreEstimators } from './shared/planner/estimators';",
        resolveDir: process.cwd(), loader: 'ts',
      },
      bundle: true, write: false, format: 'esm', platform: 'neutral', minify: false,
    });
    return (await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`)) as Core;
  } catch {
    return undefined;
  }
}

/** Median CPU seconds of a search and its result after warm-up runs (CPU time of this process: other processes do not count). */
function timed(run: () => PlanResult, runs: number, warm = 5): { seconds: number; result: PlanResult } {
  let result = run();
  for (let i = 1; i < warm; i++) result = run();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.cpuUsage();
    result = run();
    const c = process.cpuUsage(t0);
    times.push((c.user + c.system) / 1e6);
  }
  return { seconds: median(times), result };
}

/** Figures of one build of the core. */
function figures(core: Core, base: Plan, tag: string): Record<string, number> {
  const full = timed(() => core.planLayouts(base), 9);
  // Repeated searches share one step-time cache, as the language server's PlannerCache does (layer costs of a model on
  // a cluster are reused across searches); the first figure above starts every search from an empty cache.
  const shared = new core.TimeCache();
  // The fast paths alone: no re-estimation of the returned layouts with the traceable estimators.
  const fast = (): PlannerEstimators => ({ peakBytes: core.peakMemoryFast, stepSeconds: (p, w) => core.stepSecondsFast(p, shared, w) });
  const searchOnly = timed(() => core.planLayouts(base, {}, fast()), 9);
  const exhaustive = timed(() => core.planLayouts(base, { exhaustive: true }, fast()), 5);
  let n = 0;
  const noop: PlannerEstimators = { peakBytes: () => 1e9, stepSeconds: () => 1 + (n++ % 997) * 1e-6 };
  const over = timed(() => core.planLayouts(base, { exhaustive: true }, noop), 21, 10);
  // The first figure includes JIT warm-up of the traceable estimators (few calls per search): the same search once warm.
  const fullWarm = timed(() => core.planLayouts(base, {}, core.coreEstimators(shared)), 9, 50);
  return {
    [`layouts/CPU-s, first searches of the process incl. re-estimating the top layouts, JIT cold (${tag})`]: full.result.evaluated / full.seconds,
    [`layouts/CPU-s, full search after 50 warm-up searches (${tag}; goal ≥ 1e6)`]: fullWarm.result.evaluated / fullWarm.seconds,
    [`layouts/CPU-s, search with the fast paths only (${tag})`]: searchOnly.result.evaluated / searchOnly.seconds,
    [`layouts/CPU-s, exhaustive search, fast paths only (${tag})`]: exhaustive.result.evaluated / exhaustive.seconds,
    [`layouts/CPU-s, search alone, no-op estimators (${tag})`]: over.result.evaluated / over.seconds,
    [`Llama 3.1 405B on 16,384 H100: full search, CPU s (${tag}; goal ≤ 1)`]: full.seconds,
    // A per-search cost, not per layout: re-estimating the returned layouts with the traceable estimators.
    [`re-estimating the top layouts, CPU ms per search (${tag}; full − fast-only medians)`]: Math.max(0, full.seconds - searchOnly.seconds) * 1e3,
    [`the same once warm, CPU ms per search (${tag})`]: Math.max(0, fullWarm.seconds - searchOnly.seconds) * 1e3,
  };
}

export async function benchPlanner(): Promise<Record<string, number | string>> {
  const base = llama405b();
  const dev: Core = { planLayouts, peakMemoryFast, stepSecondsFast, TimeCache, coreEstimators };
  const out: Record<string, number | string> = { ...figures(dev, base, 'tsx') };
  const shipped = await bundledCore();
  if (shipped) Object.assign(out, figures(shipped, base, 'esbuild bundle'));
  const r = planLayouts(base);
  const best = r.layouts[0];
  out['Llama 3.1 405B: layouts evaluated'] = r.evaluated;
  out['Llama 3.1 405B: layouts pruned (memory-monotone)'] = r.pruned['memory-monotone'] ?? 0;
  out['Llama 3.1 405B: best layout'] = best
    ? `TP ${best.tp} PP ${best.pp} VPP ${best.vpp} CP ${best.cp} DP ${best.dp} ZeRO-${best.zero} b ${best.microBatch} ${best.recompute}, `
      + `${(best.peakReservedBytes / 2 ** 30).toFixed(1)} GiB, ${best.stepSeconds.toFixed(2)} s`
    : 'none fits';
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  void benchPlanner().then((figs) => {
    for (const [k, v] of Object.entries(figs)) console.log(`${k.padEnd(62)} ${typeof v === 'number' ? Number(v.toPrecision(4)) : v}`);
  });
}
