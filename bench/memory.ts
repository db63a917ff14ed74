/**
 * Memory-model throughput: plan evaluations per second of the fast path on one core (goal ≥ 10⁶, issue 2 §4),
 * and of the traceable estimate. Printed, never asserted. Run: node --import tsx bench/memory.ts
 */
import { fileURLToPath } from 'node:url';
import { findGpu } from '../shared/hardware/gpus';
import { findPreset } from '../shared/model/presets';
import { makePlan } from '../shared/plan/defaults';
import type { Plan } from '../shared/plan/types';
import { estimateMemory } from '../shared/memory/estimate';
import { peakMemoryFast } from '../shared/memory/fast';

/** Evaluations per second of `fn(plan)`: median of `runs` timed batches. */
function rate(fn: (p: Plan) => number, plan: Plan, batch: number, runs = 7): number {
  let sink = 0;
  for (let i = 0; i < batch; i++) sink += fn(plan);
  const rates: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) sink += fn(plan);
    rates.push(batch / ((performance.now() - t0) / 1000));
  }
  if (!Number.isFinite(sink)) rates.push(0);
  rates.sort((a, b) => a - b);
  return rates[Math.floor(rates.length / 2)];
}

/** The typical plans of the benchmark. */
export function benchPlans(): Record<string, Plan> {
  const h100 = findGpu('h100-sxm');
  const llama8 = findPreset('llama-3-8b')?.model;
  const llama405 = findPreset('llama-3.1-405b')?.model;
  if (!llama8 || !llama405 || !h100) throw new Error('bench presets missing');
  return {
    'llama3-8b tp2 pp2 dp4 zero1': makePlan({
      model: llama8, training: { microBatch: 1, gradAccum: 8, seqLen: 8192 },
      parallel: { tp: 2, pp: 2, dp: 4, sp: true, sharding: { style: 'deepspeed', stage: 1 } },
    }, h100),
    'llama3.1-405b tp8 pp14 dp8 distopt interleaved': makePlan({
      model: llama405, training: { microBatch: 1, gradAccum: 28, seqLen: 8192, recompute: 'full' },
      parallel: { tp: 8, pp: 14, dp: 8, sp: true, vpp: 3, schedule: 'interleaved', sharding: { style: 'megatron-distopt', stage: 1 } },
    }, h100),
  };
}

/**
 * The fast path as shipped: bundled by esbuild like the CLI and server (tsx's module interop adds a getter per
 * cross-module call, which costs about half the throughput). Undefined when esbuild is unavailable.
 */
async function bundledFastPath(): Promise<((p: Plan) => number) | undefined> {
  try {
    const esbuild = await import('esbuild');
    const entry = fileURLToPath(new URL('../shared/memory/fast.ts', import.meta.url));
    const r = await esbuild.build({ entryPoints: [entry], bundle: true, format: 'esm', platform: 'node', write: false, logLevel: 'silent' });
    const mod = (await import(`data:text/javascript;base64,${Buffer.from(r.outputFiles[0].text).toString('base64')}`)) as { peakMemoryFast: (p: Plan) => number };
    return mod.peakMemoryFast;
  } catch {
    return undefined;
  }
}

/** Runs the memory benchmark; returns figures for `npm run bench`. */
export async function benchMemory(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  const bundled = await bundledFastPath();
  for (const [name, plan] of Object.entries(benchPlans())) {
    if (bundled) out[`memory fast path evals/s, bundled (${name})`] = Math.round(rate(bundled, plan, 500_000));
    out[`memory fast path evals/s, tsx (${name})`] = Math.round(rate(peakMemoryFast, plan, 200_000));
    out[`memory traceable estimates/s (${name})`] = Math.round(rate((p) => estimateMemory(p).stages.length, plan, 200, 5));
  }
  out['memory goal evals/s'] = 1_000_000;
  return out;
}

if (process.argv[1] && /bench[\\/]memory\.ts$/.test(process.argv[1])) {
  void benchMemory().then((r) => {
    for (const [k, v] of Object.entries(r)) console.log(`${k}: ${typeof v === 'number' ? v.toLocaleString('en') : v}`);
  });
}
