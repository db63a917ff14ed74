/**
 * DeepSpeed's estimator tables (docs/formulas.md#model-states): docs/code-docs/source/memory.rst for t5-3b (1 node × 8 GPUs) and
 * the transformers DeepSpeed docs for bigscience/T0_3B (1 × 1 and 1 × 2). Printed with 2 decimals of GiB.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { deepspeedEstimateForPlan, dsGiB, dsZero2Estimate, dsZero3Estimate } from '../../../shared/memory/deepspeedEstimator';
import { llamaPlan } from './helpers';

/** Asserts bytes print as `printed` GiB with two decimals (half a unit of the last digit). */
function prints(bytes: number, printed: number, what: string): void {
  assert.ok(Math.abs(dsGiB(bytes) - printed) <= 0.005 + 1e-9, `${what}: ${dsGiB(bytes)} vs ${printed}`);
}

// t5-3b live counts from its architecture (d_model 1024, d_ff 16384, 32 heads × 128, 24 + 24 layers, vocab 32128,
// tied): encoder layer 4·1024·4096 + 2·1024·16384 + 2·1024, decoder layer adds cross-attention and a third norm,
// + 2 relative-bias tables 32·32, 2 final norms, one shared embedding. The doc prints "2851M total params, 32M largest".
const T5_EMB = 32128 * 1024;
const T5_3B = 24 * (16_777_216 + 33_554_432 + 2048) + 24 * (2 * 16_777_216 + 33_554_432 + 3072) + 2 * 1024 + 2 * 1024 + T5_EMB;
// T0_3B (T5 v1.1 XL: d_model 2048, d_ff 5120 gated, 32 × 64 heads, 24 + 24 layers, vocab 32128) counted with the embedding
// once as DeepSpeed's data_ptr dedupe does and the LM head not separately: the doc prints "2783M total params, 65M largest".
const T0_EMB = 32128 * 2048;
const T0_3B = 24 * (16_777_216 + 31_457_280 + 4096) + 24 * (2 * 16_777_216 + 31_457_280 + 6144) + 2048 + 4096 + T0_EMB;

describe('DeepSpeed ZeRO-2 estimator, t5-3b, 1 × 8', () => {
  const c = { gpusPerNode: 8, nodes: 1 };
  test('counts match the printed 2851M / 32M', () => {
    assert.equal(Math.floor(T5_3B / 1e6), 2851);
    assert.equal(Math.floor(T5_EMB / 1e6), 32);
  });
  test('live: offload_optimizer=cpu 127.48 / 5.31', () => {
    const e = dsZero2Estimate(T5_3B, c, true);
    prints(e.cpuBytes, 127.48, 'cpu'); prints(e.gpuBytes, 5.31, 'gpu');
  });
  test('live: offload_optimizer=none 127.48 / 15.93 with the pre-2024 formula (docs)', () => {
    const e = dsZero2Estimate(T5_3B, c, false, 'pre-2024');
    prints(e.cpuBytes, 127.48, 'cpu'); prints(e.gpuBytes, 15.93, 'gpu');
  });
  test('cold (2851e6): 127.45 / 5.31 and 127.45 / 15.93 (pre-2024); current code gives 11.28 GiB', () => {
    prints(dsZero2Estimate(2851e6, c, true).cpuBytes, 127.45, 'cpu'); prints(dsZero2Estimate(2851e6, c, true).gpuBytes, 5.31, 'gpu');
    prints(dsZero2Estimate(2851e6, c, false, 'pre-2024').gpuBytes, 15.93, 'gpu old');
    // PR #5099 (2024-06): 2Ψ + 18Ψ/N instead of 4Ψ + 16Ψ/N (docs/formulas.md#model-states: "recomputed with current code 11.28").
    prints(dsZero2Estimate(2851e6, c, false).gpuBytes, 11.28, 'gpu new');
  });
});

describe('DeepSpeed ZeRO-3 estimator, t5-3b, 1 × 8', () => {
  const c = { gpusPerNode: 8, nodes: 1 };
  // [offload_param, offload_optimizer, zero_init, live cpu, live gpu, cold cpu, cold gpu] from memory.rst.
  const ROWS: [boolean, boolean, boolean, number, number, number, number][] = [
    [true, true, true, 71.71, 0.12, 71.69, 0.12],
    [true, true, false, 127.48, 0.12, 127.45, 0.12],
    [false, true, true, 63.74, 0.79, 63.72, 0.78],
    [false, true, false, 127.48, 0.79, 127.45, 0.78],
    [false, false, true, 1.47, 6.10, 1.43, 6.09],
    [false, false, false, 127.48, 6.10, 127.45, 6.09],
  ];
  for (const [offloadParams, offloadOptimizer, zeroInit, lc, lg, cc, cg] of ROWS) {
    test(`offload_param=${offloadParams} offload_optimizer=${offloadOptimizer} zero_init=${zeroInit}`, () => {
      const o = { offloadParams, offloadOptimizer, zeroInit };
      const live = dsZero3Estimate(T5_3B, T5_EMB, c, o);
      prints(live.cpuBytes, lc, 'live cpu'); prints(live.gpuBytes, lg, 'live gpu');
      const cold = dsZero3Estimate(2851e6, 32e6, c, o);
      prints(cold.cpuBytes, cc, 'cold cpu'); prints(cold.gpuBytes, cg, 'cold gpu');
    });
  }
});

describe('DeepSpeed ZeRO-3 estimator, bigscience/T0_3B', () => {
  test('counts match the printed 2783M / 65M', () => {
    assert.equal(Math.floor(T0_3B / 1e6), 2783);
    assert.equal(Math.floor(T0_EMB / 1e6), 65);
  });
  // transformers docs/source/en/deepspeed.md (1 GPU) and the older main_classes/deepspeed.md (2 GPUs).
  const TABLES: [number, [boolean, boolean, boolean, number, number][]][] = [
    [1, [
      [true, true, true, 70.0, 0.25], [true, true, false, 70.0, 0.25], [false, true, true, 62.23, 5.43],
      [false, true, false, 62.23, 5.43], [false, false, true, 0.37, 46.91], [false, false, false, 15.56, 46.91],
    ]],
    [2, [
      [true, true, true, 70.0, 0.25], [true, true, false, 70.0, 0.25], [false, true, true, 62.23, 2.84],
      [false, true, false, 62.23, 2.84], [false, false, true, 0.74, 23.58], [false, false, false, 31.11, 23.58],
    ]],
  ];
  for (const [gpus, rows] of TABLES) {
    for (const [offloadParams, offloadOptimizer, zeroInit, cpu, gpu] of rows) {
      test(`1 × ${gpus}: param=${offloadParams} opt=${offloadOptimizer} zero_init=${zeroInit} → ${cpu} / ${gpu}`, () => {
        const e = dsZero3Estimate(T0_3B, T0_EMB, { gpusPerNode: gpus, nodes: 1 }, { offloadParams, offloadOptimizer, zeroInit });
        prints(e.cpuBytes, cpu, 'cpu'); prints(e.gpuBytes, gpu, 'gpu');
      });
    }
  }
});

describe('DeepSpeed estimator for a plan', () => {
  test('Llama-3-8B ZeRO-3 on 8 GPUs: largest layer = embedding V·h, GPU = 4·V·h + int(18Ψ/8)', () => {
    const e = deepspeedEstimateForPlan(llamaPlan({ parallel: { dp: 8, sharding: { style: 'deepspeed', stage: 3 } }, cluster: { gpusPerNode: 8, nodes: 1 } }));
    assert.equal(e?.largestLayerParams, 128_256 * 4096);
    assert.equal(e?.gpuBytes, 4 * 128_256 * 4096 + Math.trunc((18 * 8_030_261_248) / 8));
  });
  test('no DeepSpeed estimator below ZeRO-2 (DeepSpeed issue #5102)', () => {
    assert.equal(deepspeedEstimateForPlan(llamaPlan({ parallel: { sharding: { style: 'deepspeed', stage: 1 } } })), undefined);
  });
});
