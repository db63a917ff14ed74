/**
 * The shipped step-time parameters (data/time/fitted.json) against published throughputs, read through the CLI's own
 * reader → resolver → model path from the launch files in data/calibration/measured-runs/ (the published tables:
 * torchtitan benchmarks/llama3_h100_202412_torchtitan.md and docs/performance.md, NeMo 24.07 performance_summary.md,
 * llm-foundry's benchmarking README, Narayanan et al. 2021 Table 1, Korthikanti et al. 2022 Table 5, torchtitan
 * benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md).
 *
 * Tolerance: the fit leaves at most 12.4 % between prediction and publication on 61 of its 62 rows (the fit's
 * provenance in data/time/fitted.json); each of them must stay within 15 %, and the Narayanan Table 1 rows within a
 * median of 8 %, so a change that moves the model by more than the fit's own spread fails. The 62nd, torchtitan's
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

  test('async TP gains what torchtitan measured: between the two measurements of one configuration, each pair within 9 points', () => {
    // Same model, batch and cluster in both rows of a pair, so the fit's level cancels in the ratio. Published gains
    // (tokens/s/GPU, async / vanilla): Dec-2024 Table 4, 70B float8, 876 / 829 = +5.7 %; June-2025 async-TP page, 70B
    // bf16 652.4 / 597.3 = +9.2 %, 70B float8 tensorwise 942.4 / 809.8 = +16.4 % (the Dec-2024 configuration measured
    // again on a later torch), 8B bf16 4809.4 / 4378 = +9.9 %, 8B tensorwise 5570.1 / 5078.1 = +9.7 %. The two
    // measurements of one configuration differ by 10.7 points, so a model without the torch version cannot sit closer
    // than ≈ 5.4 points to both. Known miss (docs/time-model.md): bf16 gains are modelled ≈ 8 points high. Timing async
    // TP's pulls at the link's peer-to-peer rate instead of the measured all-gather rate puts the 8B bf16 pair at +27 %.
    const at = (id: string) => { const r = runs.find((x) => x.case.id === id); assert.ok(r, id); return predictedTokensPerGpu(r.plan, new TimeCache(FITTED_PARAMS)); };
    const gainOf = (a: string, v: string) => at(a) / at(v) - 1;
    const repeated = gainOf('tt24-t4-70b-2d-asynctp', 'tt24-t4-70b-2d');
    assert.ok(repeated >= 876 / 829 - 1 && repeated <= 942.4 / 809.8 - 1, `70B float8: modelled gain ${(repeated * 100).toFixed(1)} %, published +5.7 % and +16.4 %`);
    const pairs: [string, string, number][] = [
      ['tt25-asynctp-70b-bf16-async', 'tt25-asynctp-70b-bf16-vanilla', 652.4 / 597.3 - 1],
      ['tt25-asynctp-70b-tensorwise-async', 'tt25-asynctp-70b-tensorwise-vanilla', 942.4 / 809.8 - 1],
      ['tt25-asynctp-8b-bf16-async', 'tt25-asynctp-8b-bf16-vanilla', 4809.4 / 4378 - 1],
      ['tt25-asynctp-8b-tensorwise-async', 'tt25-asynctp-8b-tensorwise-vanilla', 5570.1 / 5078.1 - 1],
    ];
    for (const [a, v, published] of pairs) {
      const gain = gainOf(a, v);
      assert.ok(gain > 0 && Math.abs(gain - published) <= 0.09, `${a}: modelled gain ${(gain * 100).toFixed(1)} %, published ${(published * 100).toFixed(1)} %`);
    }
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
