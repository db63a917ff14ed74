/**
 * The fake-tensor oracle grid (issue 13 §4): ShardLens's estimate of each grid configuration (validation/torch/
 * oracleGrid.ts) beside torch's own peaks per category (probe/oracle on torch 2.x, fake tensors, no GPU). Needs the
 * project's .venv (scripts/setup-python.sh); says so when it is missing.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { COMPARED } from '../validation/torch/oracleCompare';
import type { AllocatorComparison } from '../validation/torch/oracleAllocator';
import { findPreset } from '../shared/model/presets';
import { makePlan } from '../shared/plan/defaults';
import { runOracleGrid, type GridCase } from '../validation/torch/oracleGrid';

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)}%`;
const pct1 = (x: number) => `${(x * 100).toFixed(1)} %`;
const GB = (x: number) => (x / 1e9).toFixed(1);

/** The allocator column of one stage: replay R (expandable), replay R − A, estimated R − A, the two errors. */
function allocatorCells(a: AllocatorComparison): string {
  const over = (r: number, al: number) => `+${((r / al - 1) * 100).toFixed(0)}%`;
  return `R ${GB(a.oracleReserved)} GB (exp ${GB(a.oracleExpandable)}), replay ${over(a.oracleReserved, a.oracleAllocated)} est ${over(a.estimateReserved, a.estimateAllocated)}`
    + ` → ${pct(a.reservedError)}, terms ${pct(a.cachedError)}`;
}

/** Llama-3-8B at its full 32 layers: the allocator replay beside the estimate where depth no longer favours the root. */
const FULL_DEPTH: GridCase[] = (() => {
  const model = findPreset('llama-3.1-8b')!.model;
  const plan = (name: string, input: Record<string, unknown>): GridCase => ({ name, plan: makePlan({ model, ...input } as never) });
  return [
    plan('Llama-3-8B torchtitan FSDP8, full AC, 32k tokens (Table 2 shape, eager bf16)', {
      engine: 'fsdp2', training: { microBatch: 1, seqLen: 32_768, precision: 'bf16-mixed', optimizer: 'adamw', recompute: 'full', modelImpl: 'torchtitan' },
      parallel: { dp: 8, sharding: { style: 'fsdp2', stage: 3 } }, cluster: { gpusPerNode: 8, nodes: 1 },
    }),
    plan('Llama-3-8B HF DDP4 autocast, 4k tokens', {
      engine: 'ddp', training: { microBatch: 1, seqLen: 4096, precision: 'bf16-mixed', optimizer: 'adamw', modelImpl: 'hf' },
      parallel: { dp: 4, sharding: { style: 'ddp', stage: 0 } }, cluster: { gpusPerNode: 4, nodes: 1 },
    }),
    plan('Llama-3-8B Megatron DP8, distributed optimizer, 4k tokens', {
      engine: 'megatron', training: { microBatch: 1, seqLen: 4096, precision: 'bf16-mixed', optimizer: 'adamw', gradDtype: 'fp32' },
      parallel: { dp: 8, sharding: { style: 'megatron-distopt', stage: 1 } }, cluster: { gpusPerNode: 8, nodes: 1 },
    }),
  ];
})();

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN; };

export async function benchOracleGrid(): Promise<Record<string, number | string>> {
  const py = resolve(__dirname, '../.venv/bin/python');
  if (!existsSync(py)) return { 'oracle grid': 'skipped: no .venv (run bash scripts/setup-python.sh)' };
  const t0 = Date.now();
  const results = await runOracleGrid(py);
  const out: Record<string, number | string> = {};
  out['configurations (stages)'] = `${results.length} (${results.reduce((a, r) => a + (r.comparison?.stages.length ?? 0), 0)}), ${((Date.now() - t0) / 1000).toFixed(0)} s`;
  out['columns'] = COMPARED.map((c) => c.slice(0, 5)).join(' ') + ' — estimate / oracle − 1 per category (✓ within 3 %, total within 2 %)'
    + ' | reserved: replay R (native allocator; expandable segments), its R − A; estimated R − A; estimated R / R − 1; allocator terms alone (oracle A + estimated R − A) / R − 1';
  const errs: Record<string, number[]> = {};
  let stagesOk = 0, totalsOk = 0, stages = 0;
  const reservedErrs: number[] = [], cachedErrs: number[] = [];
  for (const r of results) {
    if (!r.comparison) { out[r.case.name] = `not run: ${r.error}`; continue; }
    for (const st of r.comparison.stages) {
      stages++;
      if (st.ok) stagesOk++;
      const total = st.rows.find((x) => x.category === 'total');
      if (total?.ok) totalsOk++;
      for (const x of st.rows) (errs[x.category] ??= []).push(Math.abs(x.relError));
      const a = r.allocator?.find((x) => x.stage === st.stage);
      if (a) { reservedErrs.push(Math.abs(a.reservedError)); cachedErrs.push(Math.abs(a.cachedError)); }
      out[`${r.case.name}${r.comparison.stages.length > 1 ? ` (stage ${st.stage})` : ''}`] = st.rows.map((x) => `${x.ok ? '✓' : '✗'}${pct(x.relError)}`).join(' ') + (a ? ` | ${allocatorCells(a)}` : '');
    }
  }
  for (const c of COMPARED) out[`median |error| ${c}`] = `${(median(errs[c] ?? []) * 100).toFixed(1)} %`;
  out['reserved vs the allocator replay: median / max |error| (estimated R / R − 1)'] = `${pct1(median(reservedErrs))} / ${pct1(Math.max(...reservedErrs))} (${reservedErrs.length} stages)`;
  out['allocator terms alone: median / max |error| ((oracle A + estimated R − A) / R − 1)'] = `${pct1(median(cachedErrs))} / ${pct1(Math.max(...cachedErrs))}`;
  out['stages with every category within tolerance'] = `${stagesOk} of ${stages}`;
  // The grid is built at 2 layers; at full depth the root-sized transients weigh less (the allocator column only).
  for (const r of await runOracleGrid(py, FULL_DEPTH)) {
    const a = r.allocator?.[0];
    out[`full depth: ${r.case.name}`] = a ? allocatorCells(a) : `not run: ${r.error}`;
  }
  out['stages with the total within 2 %'] = `${totalsOk} of ${stages}`;
  return out;
}
