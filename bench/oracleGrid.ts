/**
 * The fake-tensor oracle grid (issue 13 §4): ShardLens's estimate of each grid configuration (validation/torch/
 * oracleGrid.ts) beside torch's own peaks per category (probe/oracle on torch 2.x, fake tensors, no GPU). Needs the
 * project's .venv (scripts/setup-python.sh); says so when it is missing.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { COMPARED } from '../validation/torch/oracleCompare';
import { runOracleGrid } from '../validation/torch/oracleGrid';

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)}%`;
const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN; };

export async function benchOracleGrid(): Promise<Record<string, number | string>> {
  const py = resolve(__dirname, '../.venv/bin/python');
  if (!existsSync(py)) return { 'oracle grid': 'skipped: no .venv (run bash scripts/setup-python.sh)' };
  const t0 = Date.now();
  const results = await runOracleGrid(py);
  const out: Record<string, number | string> = {};
  out['configurations (stages)'] = `${results.length} (${results.reduce((a, r) => a + (r.comparison?.stages.length ?? 0), 0)}), ${((Date.now() - t0) / 1000).toFixed(0)} s`;
  out['columns'] = COMPARED.map((c) => c.slice(0, 5)).join(' ') + ' — estimate / oracle − 1 per category (✓ within 3 %, total within 2 %)';
  const errs: Record<string, number[]> = {};
  let stagesOk = 0, totalsOk = 0, stages = 0;
  for (const r of results) {
    if (!r.comparison) { out[r.case.name] = `not run: ${r.error}`; continue; }
    for (const st of r.comparison.stages) {
      stages++;
      if (st.ok) stagesOk++;
      const total = st.rows.find((x) => x.category === 'total');
      if (total?.ok) totalsOk++;
      for (const x of st.rows) (errs[x.category] ??= []).push(Math.abs(x.relError));
      out[`${r.case.name}${r.comparison.stages.length > 1 ? ` (stage ${st.stage})` : ''}`] = st.rows.map((x) => `${x.ok ? '✓' : '✗'}${pct(x.relError)}`).join(' ');
    }
  }
  for (const c of COMPARED) out[`median |error| ${c}`] = `${(median(errs[c] ?? []) * 100).toFixed(1)} %`;
  out['stages with every category within tolerance'] = `${stagesOk} of ${stages}`;
  out['stages with the total within 2 %'] = `${totalsOk} of ${stages}`;
  return out;
}
