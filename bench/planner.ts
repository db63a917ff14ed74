/**
 * Layout planner figures (issue 8): layouts evaluated per second on one core with the core's fast paths
 * (goal ≥ 10⁶), the planner's own overhead per layout (no-op estimators), and the wall time of a full search for
 * Llama 3.1 405B on 16,384 H100s (goal ≤ 1 s). Printed, never asserted.
 */
import { pathToFileURL } from 'node:url';
import { findGpu } from '../shared/hardware/gpus';
import { findPreset } from '../shared/model/presets';
import { makePlan } from '../shared/plan/defaults';
import type { Plan } from '../shared/plan/types';
import { planLayouts } from '../shared/planner/plan-layouts';
import type { PlannerEstimators } from '../shared/planner/types';

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

export async function benchPlanner(): Promise<Record<string, number | string>> {
  const base = llama405b();
  // Warm up the JIT once, then take the median of three full searches.
  planLayouts(base);
  const runs = [0, 1, 2].map(() => planLayouts(base));
  const seconds = median(runs.map((r) => r.seconds));
  const r = runs[0];
  let n = 0;
  const noop: PlannerEstimators = { peakBytes: () => 1e9, stepSeconds: () => 1 + (n++ % 997) * 1e-6 };
  // The search alone is short (milliseconds): warm it up well and take the median of many runs.
  for (let i = 0; i < 10; i++) planLayouts(base, { exhaustive: true }, noop);
  const over = Array.from({ length: 21 }, () => planLayouts(base, { exhaustive: true }, noop));
  const overhead = median(over.map((x) => x.seconds / Math.max(1, x.evaluated)));
  const best = r.layouts[0];
  return {
    'layouts evaluated per second, core fast paths (goal ≥ 1e6)': r.evaluated / seconds,
    'layouts per second, search alone (no-op estimators)': 1 / overhead,
    'Llama 3.1 405B on 16,384 H100: full search, s (goal ≤ 1)': seconds,
    'Llama 3.1 405B: layouts evaluated': r.evaluated,
    'Llama 3.1 405B: layouts pruned (memory-monotone)': r.pruned['memory-monotone'] ?? 0,
    'Llama 3.1 405B: best layout': best
      ? `TP ${best.tp} PP ${best.pp} VPP ${best.vpp} CP ${best.cp} DP ${best.dp} ZeRO-${best.zero} b ${best.microBatch} ${best.recompute}, ` +
        `${(best.peakReservedBytes / 2 ** 30).toFixed(1)} GiB, ${best.stepSeconds.toFixed(2)} s`
      : 'none fits',
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  void benchPlanner().then((figures) => {
    for (const [k, v] of Object.entries(figures)) console.log(`${k.padEnd(62)} ${typeof v === 'number' ? Number(v.toPrecision(4)) : v}`);
  });
}
