/**
 * Fits the MoE host constant (shared/time/moeHost.ts) on the check set's rows that charge it (bench/measured/moeHost.ts)
 * with the six jointly fitted parameters as shipped, and writes it with the fit's provenance (its rows and each row's
 * error when predicted with the constant fitted on the others) to data/time/moeHost.json. Run after
 * scripts/fit-time-model.ts: node --import tsx scripts/fit-moe-host.ts   (then `npm run bench` reports the same figures).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadCheckRuns } from '../bench/measured/checks';
import { chargesHost, fitHost, hostErrors, leaveOneRowOut, type HostRow } from '../bench/measured/moeHost';

const FILE = resolve(__dirname, '../data/time/moeHost.json');
const pct = (x: number) => Math.round(x * 1000) / 10;

async function main(): Promise<void> {
  const checks = await loadCheckRuns();
  const rows: HostRow[] = checks.flatMap((r) => (r.plan && chargesHost(r.plan) ? [{ id: r.id, measured: r.measured, plan: r.plan }] : []));
  if (rows.length < 2) throw new Error(`the constant needs at least two rows to report an out-of-sample error; found ${rows.length}`);
  const value = Number(fitHost(rows).toPrecision(3));
  const loo = leaveOneRowOut(rows);
  const inSample = hostErrors(rows, value);
  let commit = 'unknown';
  try { commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(); } catch { /* not a checkout */ }
  const file = JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, unknown>;
  file.value = value;
  file.fit = {
    status: 'fitted', script: 'scripts/fit-moe-host.ts', commit,
    objective: 'mean squared log(predicted/measured tokens/s/GPU) over the rows, the other parameters as in data/time/fitted.json',
    rows: rows.map((r, i) => ({ id: r.id, measured: r.measured, inSampleErrorPercent: pct(inSample[i]) })),
    leaveOneRowOut: loo.map((x) => ({ id: x.id, fittedMilliseconds: Number((x.seconds * 1e3).toFixed(2)), errorPercent: pct(x.error) })),
  };
  writeFileSync(FILE, JSON.stringify(file, null, 2) + '\n');
  console.log(JSON.stringify(file, null, 1));
}

void main();
