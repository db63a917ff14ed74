/**
 * Published runs through the real pipeline (issue 14 §2): every case of data/calibration/measured-runs.json read by
 * the CLI's reader → resolver → model path, predicted vs measured tokens/s/GPU with the shipped parameters, and the
 * leave-one-source-out error (each source predicted by parameters fitted without it). The in-sample fit is printed
 * beside it but is not the figure. When the team reference set (../shared/reference/measured-runs) is present, the
 * bench also says whether the repository's copy still matches it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { FITTED_PARAMS } from '../shared/time/params';
import { TimeCache } from '../shared/time/cache';
import { CASES, errorsOf, loadRuns, predictedTokensPerGpu } from './measured/runs';
import { leaveOneSourceOut, medianMax } from './measured/fit';

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** Whether every time row of the team reference set is in the repository copy with the same measured value. */
function referenceCheck(): string {
  const ref = resolve(__dirname, '../../../shared/reference/measured-runs/cases.json');
  if (!existsSync(ref)) return 'not present here (the repository copy is used)';
  const rows = (JSON.parse(readFileSync(ref, 'utf8')) as { id: string; kind: string; measured: number }[]).filter((c) => c.kind === 'time');
  const missing = rows.filter((r) => !CASES.some((c) => c.id === r.id.replace(/-tps$/, '') && c.measured === r.measured));
  return missing.length ? `DIFFERS: ${missing.map((m) => m.id).join(', ')}` : `in sync (${rows.length} time rows)`;
}

export async function benchMeasured(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  const { runs, failures } = await loadRuns();
  out['cases read through the CLI pipeline'] = `${runs.length} of ${CASES.length}${failures.length ? `; failed: ${failures.join(' | ')}` : ''}`;
  out['team reference set'] = referenceCheck();
  for (const r of runs) {
    const p = predictedTokensPerGpu(r.plan, new TimeCache(FITTED_PARAMS));
    out[`${r.case.id} (tokens/s/GPU measured → predicted)`] = `${r.case.measured.toFixed(0)} → ${p.toFixed(0)} (${pct(p / r.case.measured - 1)})`;
  }
  const inSample = medianMax(errorsOf(runs, FITTED_PARAMS));
  out['in-sample |error|, shipped parameters: median / max (not the figure)'] = `${pct(inSample.median)} / ${pct(inSample.max)}`;
  const loso = leaveOneSourceOut(runs, FITTED_PARAMS);
  for (const r of loso) {
    const m = medianMax(r.errors);
    out[`leave-one-source-out ${r.source} (${r.rows} rows): median / max |error|`] = `${pct(m.median)} / ${pct(m.max)}`;
  }
  const all = medianMax(loso.flatMap((r) => r.errors));
  out['leave-one-source-out, all rows: median |error| (goal ≤ 6 %)'] = pct(all.median);
  out['leave-one-source-out, all rows: max |error| (goal ≤ 15 %)'] = pct(all.max);
  return out;
}
