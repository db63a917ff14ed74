/**
 * Fits the step-time model's free parameters to the published runs of data/calibration/measured-runs.json and writes
 * them, with the fit's provenance (rows, in-sample and leave-one-source-out errors), to data/time/fitted.json.
 * Run: node --import tsx scripts/fit-time-model.ts   (then `npm run bench` reports the same figures).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { errorsOf, loadRuns } from '../bench/measured/runs';
import { fitParams, leaveOneSourceOut, medianMax, PRIORS } from '../bench/measured/fit';
import { PARAM_NAMES, type TimeParams } from '../shared/time/params';

const FILE = resolve(__dirname, '../data/time/fitted.json');
const pct = (x: number) => Math.round(x * 1000) / 10;

/** Rounds parameters to 4 significant digits (the fit is not more precise than that). */
function rounded(p: TimeParams): TimeParams {
  const out: Record<string, number> = {};
  for (const k of PARAM_NAMES) out[k] = Number(p[k].toPrecision(4));
  return out as unknown as TimeParams;
}

async function main(): Promise<void> {
  const { runs, failures } = await loadRuns();
  if (failures.length) throw new Error(`cases the pipeline cannot read:\n${failures.join('\n')}`);
  const fit = fitParams(runs, PRIORS);
  const params = rounded(fit.params);
  const inSample = medianMax(errorsOf(runs, params));
  const loso = leaveOneSourceOut(runs, PRIORS);
  const out = medianMax(loso.flatMap((r) => r.errors));
  let commit = 'unknown';
  try { commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(); } catch { /* not a checkout */ }
  const file = JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, unknown>;
  file.params = params;
  file.fit = {
    status: 'fitted', script: 'scripts/fit-time-model.ts', commit, rows: runs.length, sources: [...new Set(runs.map((r) => r.case.source))],
    objective: 'mean over sources of mean squared log(predicted/measured tokens/s/GPU), ridge 0.002 towards the priors',
    inSampleAbsErrorPercent: { median: pct(inSample.median), max: pct(inSample.max) },
    leaveOneSourceOutAbsErrorPercent: {
      median: pct(out.median), max: pct(out.max),
      bySource: Object.fromEntries(loso.map((r) => { const m = medianMax(r.errors); return [r.source, { rows: r.rows, median: pct(m.median), max: pct(m.max) }]; })),
    },
  };
  writeFileSync(FILE, JSON.stringify(file, null, 2) + '\n');
  console.log(JSON.stringify(file.params), JSON.stringify(file.fit, null, 1));
}

void main();
