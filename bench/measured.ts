/**
 * Published runs through the real pipeline (issue 14 §2): every case of data/calibration/measured-runs.json read by
 * the CLI's reader → resolver → model path, predicted vs measured tokens/s/GPU with the shipped parameters, and the
 * leave-one-source-out error (each source predicted by parameters fitted without it, from the priors). The in-sample
 * fit is printed beside it but is not the figure. When the team reference set is present (bench/measured/reference.ts),
 * its time rows the repository copy lacks are predicted too: never fitted on, they are out of sample by construction.
 */
import { resolve } from 'node:path';
import { FITTED_PARAMS } from '../shared/time/params';
import { TimeCache } from '../shared/time/cache';
import { CASES, errorsOf, loadRuns, predictedTokensPerGpu } from './measured/runs';
import { leaveOneSourceOut, medianMax, PRIORS } from './measured/fit';
import { findReferenceSet, inRepositoryCopy, loadReferenceRow, readReferenceRows } from './measured/reference';
import { loadCheckRuns } from './measured/checks';
import { chargesHost, leaveOneRowOut, type HostRow } from './measured/moeHost';

type Figures = Record<string, number | string>;
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const row = (measured: number, p: number) => `${measured.toFixed(0)} → ${p.toFixed(0)} (${pct(p / measured - 1)})`;

/** The reference set's lines: where it is, its rows the repository copy lacks (each predicted) and their error. */
async function referenceFigures(out: Figures): Promise<void> {
  const found = findReferenceSet(resolve(__dirname, '..'));
  if (!found.dir) {
    out['team reference set'] = `not present (looked for cases.json in ${found.looked.slice(0, 2).join(', ')} …); the repository copy is used`;
    return;
  }
  const { rows, problems, error } = readReferenceRows(found.dir);
  if (error) {
    out['team reference set'] = `unreadable, skipped: ${error}`;
    return;
  }
  const fresh = rows.filter((r) => !inRepositoryCopy(r, CASES));
  const differs = rows.filter((r) => !inRepositoryCopy(r, CASES) && CASES.some((c) => c.id === r.id.replace(/-tps$/, '')));
  out['team reference set'] = `${found.dir}: ${rows.length} time rows, ${rows.length - fresh.length} in the repository copy`
    + `${differs.length ? `; measured value DIFFERS for ${differs.map((d) => d.id).join(', ')}` : ''}`
    + `${problems.length ? `; unusable rows skipped: ${problems.join(' | ')}` : ''}`;
  const errors: number[] = [];
  for (const r of fresh) {
    const { plan, failure } = await loadReferenceRow(found.dir, r);
    const key = `${r.id} (reference set, not fitted; measured → predicted)`;
    if (!plan) { out[key] = `not read: ${failure}`; continue; }
    const p = predictedTokensPerGpu(plan, new TimeCache(FITTED_PARAMS));
    out[key] = row(r.measured, p);
    errors.push(p / r.measured - 1);
  }
  const m = medianMax(errors);
  out['rows not in the repository copy: median / max |error|'] = errors.length
    ? `${pct(m.median)} / ${pct(m.max)} (${errors.length} rows${errors.length < fresh.length ? `, ${fresh.length - errors.length} not read` : ''})`
    : fresh.length ? `none read (${fresh.length} rows)` : 'none (every time row of the set is in the repository copy)';
}

/**
 * The check set (data/calibration/checks/, bench/measured/checks.ts): published rows never fitted on, predicted with
 * the shipped parameters (the rows the MoE host constant is fitted on, each with the constant fitted on the others);
 * per group median, max and mean signed error, the long-sequence split of llm-foundry's rows
 * (they ran Triton FlashAttention, timed here on FlashAttention-2's rates) and each row with a launch file.
 */
/** Check rows whose throughput ratio the bench reports: [label, numerator row, denominator row]. */
const RATIO_CHECKS: readonly (readonly [string, string, string])[] = [
  ['torchtune 3B LoRA / full fine-tuning (both checkpointed and offloaded)', 'torchtune2411-3b-lora', 'torchtune2411-3b-6-activation-offloading'],
  ['torchtune 3B QLoRA / LoRA', 'torchtune2411-3b-qlora', 'torchtune2411-3b-lora'],
];

async function checkFigures(out: Figures): Promise<void> {
  const runs = await loadCheckRuns();
  const failed = runs.filter((r) => !r.plan);
  const cache = new TimeCache(FITTED_PARAMS);
  // The rows the MoE host constant is fitted on are predicted with the constant fitted on the other such rows.
  const hostRows: HostRow[] = runs.flatMap((r) => (r.plan && chargesHost(r.plan) ? [{ id: r.id, measured: r.measured, plan: r.plan }] : []));
  const heldOut = new Map(leaveOneRowOut(hostRows).map((x) => [x.id, x] as const));
  const errs = runs.filter((r) => r.plan).map((r) => ({ ...r, e: heldOut.get(r.id)?.error ?? predictedTokensPerGpu(r.plan!, cache) / r.measured - 1 }));
  out['check set: rows read through the CLI pipeline (never fitted)'] = `${errs.length} of ${runs.length}${failed.length ? `; failed: ${failed.map((f) => `${f.id}: ${f.failure}`).join(' | ')}` : ''}`;
  out[`MoE host constant, ms per MoE layer forward and micro-batch (shipped, fitted on ${hostRows.length} check rows; data/time/moeHost.json)`] = ((FITTED_PARAMS.moeHostSeconds ?? 0) * 1e3).toFixed(2);
  for (const [id, x] of heldOut) out[`MoE host constant left out of ${id}: fitted on the others (ms) → row error`] = `${(x.seconds * 1e3).toFixed(2)} → ${pct(x.error)}`;
  out['MoE host rows, each predicted with the constant fitted on the others: median / max |error|'] = (() => { const m = medianMax([...heldOut.values()].map((x) => x.error)); return `${pct(m.median)} / ${pct(m.max)} (${heldOut.size} rows)`; })();
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const line = (xs: number[]) => { const m = medianMax(xs); return `${pct(m.median)} / ${pct(m.max)} (${xs.length} rows, mean signed ${pct(mean(xs))})`; };
  const groups = [...new Set(errs.map((r) => r.group))];
  for (const g of groups) {
    const rows = errs.filter((r) => r.group === g);
    out[`check ${g}: median / max |error|`] = line(rows.map((r) => r.e));
    if (!g.startsWith('llm-foundry')) for (const r of rows) out[`check ${r.id} (measured → predicted)`] = `${r.measured.toFixed(0)} → ${(r.measured * (1 + r.e)).toFixed(0)} (${pct(r.e)})`;
  }
  // Ratios of rows from one table that differ in one setting: the source's common offset cancels, the setting's
  // modelled cost remains (LoRA's adapters against full fine-tuning with the same checkpointing and offloading; a 4-bit
  // base's dequantization against LoRA).
  const byId = new Map(errs.map((r) => [r.id, r] as const));
  for (const [label, a, b] of RATIO_CHECKS) {
    const x = byId.get(a), y = byId.get(b);
    if (!x || !y) continue;
    const measured = x.measured / y.measured, predicted = (x.measured * (1 + x.e)) / (y.measured * (1 + y.e));
    out[`check ratio ${label} (measured → predicted)`] = `${measured.toFixed(3)} → ${predicted.toFixed(3)} (${pct(predicted / measured - 1)})`;
  }
  const foundry = errs.filter((r) => r.group.startsWith('llm-foundry'));
  out['check llm-foundry, sequences ≤ 8192: median / max |error|'] = line(foundry.filter((r) => r.seqLen <= 8192).map((r) => r.e));
  out['check llm-foundry, sequences > 8192 (Triton attention): median / max |error|'] = line(foundry.filter((r) => r.seqLen > 8192).map((r) => r.e));
  out['check set, all rows: median / max |error|'] = line(errs.map((r) => r.e));
}

export async function benchMeasured(): Promise<Figures> {
  const out: Figures = {};
  const { runs, failures } = await loadRuns();
  out['cases read through the CLI pipeline'] = `${runs.length} of ${CASES.length}${failures.length ? `; failed: ${failures.join(' | ')}` : ''}`;
  // Each fold starts from the priors: starting from the shipped (all-rows) fit would carry the held-out rows in.
  const loso = leaveOneSourceOut(runs, PRIORS);
  const heldOut = new Map<string, number>();
  for (const f of loso) runs.filter((r) => r.case.source === f.source).forEach((r, i) => heldOut.set(r.case.id, f.errors[i]));
  for (const r of runs) {
    const p = predictedTokensPerGpu(r.plan, new TimeCache(FITTED_PARAMS));
    const held = heldOut.get(r.case.id);
    out[`${r.case.id} (tokens/s/GPU measured → predicted)`] = `${r.case.measured.toFixed(0)} → ${p.toFixed(0)}: in sample ${pct(p / r.case.measured - 1)}`
      + `${held === undefined ? '' : `, source left out ${pct(held)}`}`;
  }
  const inSample = medianMax(errorsOf(runs, FITTED_PARAMS));
  out['in-sample |error|, shipped parameters: median / max (not the figure)'] = `${pct(inSample.median)} / ${pct(inSample.max)}`;
  for (const r of loso) {
    const m = medianMax(r.errors);
    out[`leave-one-source-out ${r.source} (${r.rows} rows): median / max |error|`] = `${pct(m.median)} / ${pct(m.max)}`;
  }
  const all = medianMax(loso.flatMap((r) => r.errors));
  out['leave-one-source-out, all rows: median |error| (goal ≤ 6 %)'] = pct(all.median);
  out['leave-one-source-out, all rows: max |error| (goal ≤ 15 %)'] = pct(all.max);
  await referenceFigures(out);
  await checkFigures(out);
  return out;
}
