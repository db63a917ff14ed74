/**
 * Validation-run figures (issue 6): wall time of 4 ranks × {DDP, ZeRO-1, ZeRO-2, ZeRO-3} × 5 steps of the scaled
 * Llama-3-8B family (≈ 0.56 M parameters) on wasm, goal ≤ 15 s on 2 cores. Needs `npm run build` (the runner bundle).
 * Printed, not asserted. Run alone: `node --import tsx bench/validation.ts`.
 */
import { availableParallelism } from 'node:os';
import { makePlan } from '../shared/plan/defaults';
import type { ModelSpec } from '../shared/plan/types';
import { probeBackends, runValidation } from '../validation/index';

const LLAMA3_8B: ModelSpec = {
  name: 'Llama-3-8B', layers: 32, hiddenSize: 4096, heads: 32, kvHeads: 8, headDim: 128, ffnSize: 14336,
  gatedMlp: true, attnBias: 'none', mlpBias: false, tiedEmbeddings: false, positions: 'rotary', maxPositions: 8192,
  norm: 'rmsnorm', qkNorm: false, vocabSize: 128256,
};

export async function benchValidation(): Promise<Record<string, number | string>> {
  const t0 = performance.now();
  const probes = await probeBackends();
  const probeMs = performance.now() - t0;
  const plan = makePlan({ model: LLAMA3_8B, training: { microBatch: 2, seqLen: 4096 } });
  const t1 = performance.now();
  const r = await runValidation({ plan, ranks: 4, steps: 5, backend: 'wasm' });
  const wallS = (performance.now() - t1) / 1000;
  const out: Record<string, number | string> = {
    'cores (availableParallelism)': availableParallelism(),
    'backend probes, 4 child processes, ms': probeMs,
    'usable backends': probes.filter((p) => p.ok).map((p) => p.name).join(', '),
    'status': r.status + (r.error ? `: ${r.error}` : ''),
    'backend': r.backendLabel,
    'parameters Ψ of the scaled model': r.parameters,
    '4 ranks × 4 modes × 5 steps, wall s (goal ≤ 15 on 2 cores)': wallS,
    'checks passed / total': `${r.checks.filter((c) => c.passed === true).length} / ${r.checks.filter((c) => c.passed !== null).length}`,
  };
  for (const run of r.runs) {
    const times = run.ranks.map((k) => k.measured.stepTimeMs).sort((a, b) => a - b);
    out[`${run.label}: median rank step, ms`] = times[times.length >> 1] ?? 0;
    out[`${run.label}: tfjs tape peak rank 0, MiB`] = (run.ranks[0]?.measured.tapePeakBytes ?? 0) / 2 ** 20;
  }
  return out;
}

if (require.main === module) {
  void benchValidation().then((f) => {
    for (const [k, v] of Object.entries(f)) console.log(`${k.padEnd(62)} ${typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(4)) : v}`);
  });
}
