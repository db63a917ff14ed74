/**
 * The shipped step-time parameters (data/time/fitted.json) against published throughputs, read through the CLI's own
 * reader → resolver → model path from the launch files in data/calibration/measured-runs/ (the published tables:
 * torchtitan benchmarks/llama3_h100_202412_torchtitan.md and docs/performance.md, NeMo 24.07 performance_summary.md,
 * llm-foundry's benchmarking README, Narayanan et al. 2021 Table 1, Korthikanti et al. 2022 Table 5).
 *
 * Tolerance: the fit leaves at most 11 % between prediction and publication on 53 of its 54 rows (the fit's
 * provenance in data/time/fitted.json); each of them must stay within 15 %, and the Narayanan Table 1 rows within a
 * median of 8 %, so a change that moves the model by more than the fit's own spread fails. The 54th, torchtitan's
 * CP 2 row, is held to 18 %: at equal tokens per GPU its step grows 2.37× to CP 4 (Table 2), more than the 2× any
 * model with a non-negative fixed cost per step allows, so a physical model misses one of the pair by ≥ 8.5 % and,
 * with this run's fixed ≈ 2.6 s of linears per step, no model linear in cp misses the four CP rows by less than
 * ≈ 13 % (docs/time-model.md, known misses); the fit's level, set mostly by the other sources, adds the rest. The
 * out-of-sample figure is `npm run bench` (leave-one-source-out), not this test.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats } from '../../../formats/index';
import { loadRuns, predictedTokensPerGpu, type MeasuredRun } from '../../../bench/measured/runs';
import { TimeCache } from '../../../shared/time/cache';
import { FITTED_PARAMS } from '../../../shared/time/params';
import fitted from '../../../data/time/fitted.json';

let runs: MeasuredRun[] = [];
const err = (r: MeasuredRun) => predictedTokensPerGpu(r.plan, new TimeCache(FITTED_PARAMS)) / r.case.measured - 1;

describe('published throughputs, shipped parameters', () => {
  before(async () => {
    await initFormats();
    const loaded = await loadRuns();
    assert.deepEqual(loaded.failures, [], 'every published run reads through the pipeline');
    runs = loaded.runs;
  });

  for (const id of ['nemo2407-llama2-7b', 'nemo2407-llama3-70b', 'korthikanti2022-175b-seqsel', 'ttperf-l3-70b-full', 'mpt-70b-s2048-64gpu', 'tt24-t4-70b-2d']) {
    test(`${id}: within 15 % of the published tokens/s/GPU`, () => {
      const r = runs.find((x) => x.case.id === id);
      assert.ok(r, `${id} in data/calibration/measured-runs.json`);
      const e = err(r);
      assert.ok(Math.abs(e) <= 0.15, `${id}: ${(e * 100).toFixed(1)} % (published ${r.case.measured})`);
    });
  }

  test('every row within 15 %, torchtitan\'s CP 2 row within 18 % (see the tolerance above)', () => {
    for (const r of runs) {
      const bound = r.case.id === 'tt24-t2-8b-cp2' ? 0.18 : 0.15;
      assert.ok(Math.abs(err(r)) <= bound, `${r.case.id}: ${(err(r) * 100).toFixed(1)} %`);
    }
  });

  test('torchtitan Table 4: async TP gains what the page measured (876 / 829 = +5.7 %) within 6 points', () => {
    // Same model, batch and cluster in both rows, so the fit's level cancels in the ratio. PyTorch's async TP sums
    // the reduce-scattered partials in an exposed kernel (asyncTpReduceBytes); without it the model gained +14.8 %.
    const at = (id: string) => { const r = runs.find((x) => x.case.id === id); assert.ok(r, id); return predictedTokensPerGpu(r.plan, new TimeCache(FITTED_PARAMS)); };
    const gain = at('tt24-t4-70b-2d-asynctp') / at('tt24-t4-70b-2d') - 1;
    assert.ok(Math.abs(gain - (876 / 829 - 1)) <= 0.06, `modelled gain ${(gain * 100).toFixed(1)} %`);
  });

  test('Narayanan et al. 2021 Table 1: median |error| ≤ 8 %, every row ≤ 15 %', () => {
    const rows = runs.filter((r) => r.case.source === 'narayanan-2021');
    assert.equal(rows.length, 10);
    const errs = rows.map(err).map(Math.abs).sort((a, b) => a - b);
    const median = (errs[4] + errs[5]) / 2;
    assert.ok(median <= 0.08, `median ${(median * 100).toFixed(1)} %`);
    assert.ok(errs[9] <= 0.15, `max ${(errs[9] * 100).toFixed(1)} %`);
  });

  test('the shipped parameters are the last full fit (its in-sample error is what fitted.json records)', () => {
    // A model change without `node --import tsx scripts/fit-time-model.ts` leaves fitted.json describing another model.
    const errs = runs.map(err).map(Math.abs).sort((a, b) => a - b);
    const mid = errs.length >> 1;
    const median = errs.length % 2 ? errs[mid] : (errs[mid - 1] + errs[mid]) / 2;
    const rec = fitted.fit.inSampleAbsErrorPercent;
    assert.equal(fitted.fit.rows, runs.length);
    assert.ok(Math.abs(median * 100 - rec.median) <= 0.05 && Math.abs(errs[errs.length - 1] * 100 - rec.max) <= 0.05,
      `computed ${(median * 100).toFixed(2)} / ${(errs[errs.length - 1] * 100).toFixed(2)} %, fitted.json ${rec.median} / ${rec.max} %`);
  });
});
