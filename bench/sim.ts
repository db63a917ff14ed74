/**
 * Simulation and step-time throughput (issue 3 §4): simulateStep time for p=16, m=128, v=2, TP=8 (goal ≤ 50 ms, median
 * of runs) and full-model estimates per second (memory fast path + communication + step time) on one core (goal ≥ 10⁶).
 * Times are CPU time of this process (one core), medians of runs. Printed, never asserted. Run: node --import tsx bench/sim.ts
 */
import { findGpu } from '../shared/hardware/gpus';
import { findPreset } from '../shared/model/presets';
import { makePlan } from '../shared/plan/defaults';
import type { Plan } from '../shared/plan/types';
import { peakMemoryFast } from '../shared/memory/fast';
import { simulateStep } from '../shared/sim/simulate';
import { stepSecondsFast } from '../shared/time/stepTime';
import { TimeCache } from '../shared/time/cache';

/** Median of a list. */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** The plans of the benchmark: the p=16, m=128, v=2, TP=8 layout, and a small plain-DP one. */
export function simPlans(): Record<string, Plan> {
  const h100 = findGpu('h100-sxm');
  const llama70 = findPreset('llama-3.1-70b')?.model ?? findPreset('llama-3-70b')?.model;
  const llama8 = findPreset('llama-3-8b')?.model;
  if (!h100 || !llama70 || !llama8) throw new Error('bench presets missing');
  return {
    'llama3.1-70b tp8 pp16 v2 m128 dp4': makePlan({
      model: { ...llama70, layers: 96 }, training: { microBatch: 1, gradAccum: 128, seqLen: 8192, recompute: 'selective' },
      parallel: { tp: 8, pp: 16, dp: 4, sp: true, vpp: 2, schedule: 'interleaved', sharding: { style: 'megatron-distopt', stage: 1 } },
      cluster: { gpusPerNode: 8 },
    }, h100),
    'llama3-8b dp64 zero1': makePlan({
      model: llama8, training: { microBatch: 2, gradAccum: 4, seqLen: 8192 },
      parallel: { dp: 64, sharding: { style: 'deepspeed', stage: 1 } }, cluster: { gpusPerNode: 8 },
    }, h100),
  };
}

/** The core functions the benchmark times: from the TypeScript sources (tsx) or from an esbuild bundle (as shipped). */
interface Core {
  readonly peakMemoryFast: (p: Plan) => number;
  readonly stepSecondsFast: (p: Plan, cache: TimeCache) => number;
  readonly TimeCache: typeof TimeCache;
  readonly simulateStep: (p: Plan) => unknown;
}

/**
 * The same functions bundled by esbuild the way the CLI and server ship them. Under tsx every call across modules goes
 * through an export getter, which costs more than the arithmetic; the bundle shows the shipped speed.
 */
async function bundledCore(): Promise<Core | undefined> {
  try {
    const esbuild = await import('esbuild');
    const out = await esbuild.build({
      stdin: {
        contents: "export { peakMemoryFast } from './shared/memory/fast'; export { stepSecondsFast } from './shared/time/stepTime'; export { TimeCache } from './shared/time/cache';"
          + " export { simulateStep } from './shared/sim/simulate';",
        resolveDir: process.cwd(), loader: 'ts',
      },
      bundle: true, write: false, format: 'esm', platform: 'neutral', minify: false,
    });
    return (await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`)) as Core;
  } catch {
    return undefined;
  }
}

/**
 * CPU milliseconds of this process since `start` (user + system). Rates use CPU time, not wall time, so that other
 * processes on a shared machine do not count against "one core".
 */
function cpuMs(start: NodeJS.CpuUsage): number {
  const c = process.cpuUsage(start);
  return (c.user + c.system) / 1000;
}

/** Median CPU milliseconds of simulateStep. */
function simMs(core: Core, plan: Plan): number {
  for (let i = 0; i < 3; i++) core.simulateStep(plan);
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t0 = process.cpuUsage();
    core.simulateStep(plan);
    times.push(cpuMs(t0));
  }
  return median(times);
}

/** Full-model evaluations per second: memory fast path + step time fast path (which includes communication). */
function fullModelRate(core: Core, plan: Plan, batch: number, runs = 7): number {
  let sink = 0;
  const cache = new core.TimeCache();
  const one = () => core.peakMemoryFast(plan) + core.stepSecondsFast(plan, cache);
  for (let i = 0; i < batch; i++) sink += one();
  const rates: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < batch; i++) sink += one();
    rates.push(batch / (Math.max(1e-3, cpuMs(t0)) / 1000));
  }
  if (!Number.isFinite(sink)) rates.push(0);
  return median(rates);
}

/** Runs the simulation benchmark; returns figures for `npm run bench`. */
export async function benchSim(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  const plans = simPlans();
  const big = plans['llama3.1-70b tp8 pp16 v2 m128 dp4'];
  const dev: Core = { peakMemoryFast, stepSecondsFast, simulateStep, TimeCache };
  const shipped = await bundledCore();
  out['simulateStep CPU ms, p=16 m=128 v=2 TP=8 (tsx; goal ≤ 50)'] = Number(simMs(dev, big).toFixed(2));
  if (shipped) out['simulateStep CPU ms, p=16 m=128 v=2 TP=8 (esbuild bundle)'] = Number(simMs(shipped, big).toFixed(2));
  for (const [name, plan] of Object.entries(plans)) {
    out[`full model evals per CPU-s, ${name} (tsx)`] = Math.round(fullModelRate(dev, plan, 50_000));
    if (shipped) out[`full model evals per CPU-s, ${name} (esbuild bundle)`] = Math.round(fullModelRate(shipped, plan, 200_000));
  }
  out['full model goal evals/s'] = 1_000_000;
  return out;
}

if (process.argv[1] && /bench[\\/]sim\.ts$/.test(process.argv[1])) {
  void benchSim().then((r) => {
    for (const [k, v] of Object.entries(r)) console.log(`${k}: ${typeof v === 'number' ? v.toLocaleString('en') : v}`);
  });
}
