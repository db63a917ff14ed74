/**
 * Calibration from a measured run: the kernel speed divides every kernel's time (first principles: a cluster whose
 * kernels run at s × the modelled rate takes 1/s of the time), the solved speed reproduces the measured step, and a
 * training log's figures become a stored correction. The measured run is torchtitan's Dec-2024 Table 2 row "FSDP 8,
 * CP 1" (Llama 3.1 8B, 8 × H100 96 GB at 500 W, 3,890 tokens/s/GPU, peak reserved 83.9 GiB;
 * pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md at 31a17bf), its launch file the repository's copy.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { initFormats } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { correctionFromLog } from '../../../shared/calibration/fromLog';
import { MAX_SPEED, MIN_SPEED, solveKernelSpeed, withKernelSpeed } from '../../../shared/calibration/kernelSpeed';
import type { LogMeasurement } from '../../../shared/logs/types';
import { estimateMemory } from '../../../shared/memory/estimate';
import { applyCalibration, type ClusterCorrection } from '../../../shared/plan/calibration';
import type { Plan } from '../../../shared/plan/types';
import { kernelTimers } from '../../../shared/time/context';
import { estimateStepTime } from '../../../shared/time/estimate';
import { TimeCache } from '../../../shared/time/cache';
import { memoryHost } from '../formats/helpers';
import { findGpu } from '../../../shared/hardware/gpus';
import { findPreset } from '../../../shared/model/presets';
import { makePlan } from '../../../shared/plan/defaults';

const ROOT = join(__dirname, '../../..');
const GIB = 2 ** 30;
/** torchtitan's tps is tokens per second per GPU; one GPU's step is local batch 1 × 32,768 tokens. */
const MEASURED_TPS = 3890;
const MEASURED_STEP = 32768 / MEASURED_TPS;
const MEASURED_RESERVED = 83.9 * GIB;

let plan: Plan;

const torchtitanLog = (over: Partial<LogMeasurement> = {}): LogMeasurement => ({
  engine: 'torchtitan', steps: 18, warnings: [],
  tokensPerSecondPerGpu: { value: MEASURED_TPS, line: 40, detail: 'tps, median of 18 logged steps' },
  peakReservedBytes: { value: MEASURED_RESERVED, line: 40, detail: 'memory (max reserved GiB), largest logged' },
  ...over,
});

describe('calibration from a measured run', () => {
  before(async () => {
    await initFormats();
    const path = '/ws/tt24_t2_8b_fsdp8_cp1.toml';
    const text = readFileSync(join(ROOT, 'data/calibration/measured-runs/tt24_t2_8b_fsdp8_cp1.toml'), 'utf8');
    plan = loadConfigGraph(path, memoryHost({ [path]: text }), { settings: { gpu: 'h100-96gb-500w', worldSize: 8, gpusPerNode: 8 } }).resolved.plan!;
    assert.ok(plan, 'the launch file resolves');
  });

  test('a kernel speed s divides every kernel\'s time by s: GEMMs (16 and 8 bit), attention and memory-bound', () => {
    const params = new TimeCache().params;
    const one = kernelTimers(plan, params).timers;
    const two = kernelTimers(withKernelSpeed(plan, 2), params).timers;
    const near = (a: number, b: number) => assert.ok(Math.abs(a / b - 1) < 1e-12, `${a} vs ${b}`);
    near(two.gemm16(8192, 4096, 4096), one.gemm16(8192, 4096, 4096) / 2);
    near(two.gemm8(8192, 14336, 4096), one.gemm8(8192, 14336, 4096) / 2);
    near(two.attention('bwd', 1e13, 32768, true), one.attention('bwd', 1e13, 32768, true) / 2);
    near(two.hbm(1e9), one.hbm(1e9) / 2);
  });

  test('the solved speed reproduces the measured step time, and says so in the provenance', () => {
    const fit = solveKernelSpeed(plan, MEASURED_STEP)!;
    assert.ok(fit, 'solved');
    const after = estimateStepTime(withKernelSpeed(plan, fit.speed));
    assert.ok(Math.abs(after.stepSeconds / MEASURED_STEP - 1) < 1e-4, `${after.stepSeconds} vs ${MEASURED_STEP}`);
    assert.ok(Math.abs(fit.calibratedSeconds / MEASURED_STEP - 1) < 1e-4);
    // The model is within about 10 % on this row (docs/time-model.md): the speed is near 1, and no warning.
    assert.ok(fit.speed > 0.8 && fit.speed < 1.25, String(fit.speed));
    assert.deepEqual(fit.warnings, []);
    assert.ok(after.provenance.some((p) => /kernels: ×/.test(p)), after.provenance.join('\n'));
    // Every kernel term names the measured speed; collectives and launch gaps are not kernels.
    for (const t of after.operatorTerms) {
      const kernel = t.name === 'gemm' || t.name === 'attention' || t.name === 'elementwise' || t.name === 'fp8' || t.name === 'adapters';
      assert.equal(/speed measured on this cluster/.test(t.provenance), kernel, `${t.name}: ${t.provenance}`);
    }
  });

  test('a step no kernel speed can reach is clamped and said (too fast: communication is left; too slow: not the kernels)', () => {
    const fast = solveKernelSpeed(plan, 1e-6)!;
    assert.equal(fast.speed, MAX_SPEED);
    assert.match(fast.warnings.join(' '), /shorter than the estimate with kernels/);
    const slow = solveKernelSpeed(plan, 1e6)!;
    assert.equal(slow.speed, MIN_SPEED);
    assert.match(slow.warnings.join(' '), /something other than kernels/);
    assert.equal(solveKernelSpeed(plan, Number.NaN), undefined);
    assert.equal(solveKernelSpeed(plan, -1), undefined);
  });

  test('a torchtitan log: the step follows from tps, and the correction reproduces both figures', () => {
    const { comparison, correction, after } = correctionFromLog(plan, torchtitanLog(), 'grand-teton', '2026-12-04T00:00:00Z', 'train.log');
    assert.ok(Math.abs(comparison.step!.measured - MEASURED_STEP) < 1e-12);
    assert.equal(comparison.memory!.kind, 'reserved');
    assert.equal(comparison.memory!.measured, MEASURED_RESERVED);
    assert.ok(Math.abs(after.step!.estimated / MEASURED_STEP - 1) < 1e-4);
    // torchtitan logs torch's reserved_bytes peak, which leaves the CUDA context term out (shared/memory/torchView.ts).
    const stage0 = estimateMemory(plan).stages[0]!;
    const estimated = stage0.peakReservedBytes - stage0.terms.cudaContext!.bytes;
    assert.equal(comparison.memory!.estimated, estimated);
    if (estimated <= MEASURED_RESERVED) {
      // The overhead is what the run held beyond the estimate, added once to every stage's context term.
      assert.equal(correction.overheadBytes, Math.round(MEASURED_RESERVED - estimated));
      assert.ok(Math.abs(after.memory!.estimated - MEASURED_RESERVED) <= 1);
    } else {
      assert.equal(correction.overheadBytes, 0);
      assert.match(correction.warnings.join(' '), /above the measured peak/);
    }
    assert.equal(correction.clusterId, 'grand-teton');
    assert.equal(correction.source.engine, 'torchtitan');
  });

  test('an estimate above the measured peak is not stored as a negative overhead', () => {
    const low = torchtitanLog({ peakReservedBytes: { value: 10 * GIB, line: 3, detail: 'memory' } });
    const { correction } = correctionFromLog(plan, low, 'x', 'now', 'train.log');
    assert.equal(correction.overheadBytes, 0);
    assert.match(correction.warnings.join(' '), /GiB above the measured peak: not stored/);
  });

  test('recalibrating a plan that carries a stored correction solves against the catalog, not on top of it', () => {
    const stored: ClusterCorrection = {
      clusterId: 'grand-teton', overheadBytes: 3 * GIB, efficiency: 0.5, warnings: [],
      source: { device: 'd', mode: 'm', worldSize: 8, createdAt: 'then', engine: 'torchtitan' },
    };
    const fresh = correctionFromLog(plan, torchtitanLog(), 'grand-teton', 'now', 'train.log');
    const again = correctionFromLog(applyCalibration(plan, stored), torchtitanLog(), 'grand-teton', 'now', 'train.log', stored);
    assert.ok(Math.abs(again.correction.efficiency / fresh.correction.efficiency - 1) < 1e-9);
    assert.equal(again.correction.overheadBytes, fresh.correction.overheadBytes);
    // What the user saw before is the calibrated estimate: half-speed kernels make it slower than the measured step.
    assert.ok(again.comparison.step!.estimated > fresh.comparison.step!.estimated);
  });

  test('a Megatron log states the step; a global samples/s converts through the global batch', () => {
    const meg = correctionFromLog(plan, { engine: 'megatron', steps: 9, warnings: [], stepSeconds: { value: 9, line: 7, detail: 'elapsed time per iteration' } }, 'c', 'now', 'l');
    assert.equal(meg.comparison.step!.measured, 9);
    assert.equal(meg.comparison.memory, undefined);
    assert.match(meg.correction.warnings.join(' '), /no peak memory/);
    // Global batch 8 sequences (local batch 1 × 8 GPUs): 0.5 samples/s is 16 s per step.
    const ds = correctionFromLog(plan, { engine: 'deepspeed', steps: 5, warnings: [], samplesPerSecond: { value: 0.5, scope: 'global', line: 2, detail: 'samples/s' } }, 'c', 'now', 'l');
    assert.equal(ds.comparison.step!.measured, 16);
    const perGpu = correctionFromLog(plan, { engine: 'deepspeed', steps: 5, warnings: [], samplesPerSecond: { value: 0.5, scope: 'per-gpu', line: 2, detail: 'samples/s' } }, 'c', 'now', 'l');
    assert.equal(perGpu.comparison.step!.measured, 2);
  });

  test('memory is compared with the stage whose ranks log it: Megatron every stage (the largest), torchtitan rank 0', () => {
    const pp = makePlan({
      model: findPreset('llama-3.1-8b')!.model,
      training: { microBatch: 1, globalBatch: 64, seqLen: 4096, precision: 'bf16-mixed' },
      parallel: { tp: 1, pp: 4, cp: 1, dp: 2, sharding: { style: 'megatron-distopt' } },
      cluster: { gpusPerNode: 8, nodes: 1 },
    }, findGpu('h100-sxm'));
    const est = estimateMemory(pp);
    assert.ok(est.peakStage !== 0 || est.stages[0]!.peakReservedBytes > est.stages[3]!.peakReservedBytes);
    const mem = { value: 50 * GIB, line: 1, detail: 'max reserved' };
    const meg = correctionFromLog(pp, { engine: 'megatron', steps: 5, warnings: [], peakReservedBytes: mem }, 'c', 'now', 'l').comparison;
    assert.equal(meg.memory!.stage, est.peakStage);
    const torchView = (i: number) => est.stages[i]!.peakReservedBytes - est.stages[i]!.terms.cudaContext!.bytes;
    assert.equal(meg.memory!.estimated, torchView(est.peakStage));
    const titan = correctionFromLog(pp, { engine: 'torchtitan', steps: 5, warnings: [], peakReservedBytes: mem }, 'c', 'now', 'l').comparison;
    assert.equal(titan.memory!.stage, 0);
    assert.equal(titan.memory!.estimated, torchView(0));
  });
});
