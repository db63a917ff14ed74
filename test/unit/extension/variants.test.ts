/**
 * The memory dashboard's sharding variants and DP sweep (extension/dashboard/variants.ts) computed with the real core.
 * Expected values: Rajbhandari et al. 2020 (ZeRO), Table 1 / Figure 1: a 7.5B-parameter model with mixed-precision
 * Adam (K = 12) on Nd = 64 GPUs needs 120 GB (baseline), 31.4 GB (Pos), 16.6 GB (Pos+g) and 1.88 GB (Pos+g+p)
 * of model states per GPU; in general (2+2+K)Ψ, 4Ψ+KΨ/Nd, 2Ψ+(2+K)Ψ/Nd and (4+K)Ψ/Nd.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePlan } from '../../../shared/plan/defaults';
import { findPreset } from '../../../shared/model/presets';
import { findGpu } from '../../../shared/hardware/gpus';
import { estimateMemory } from '../../../shared/memory/estimate';
import { dpSweep, memoryVariants, sweepSizes } from '../../../extension/dashboard/variants';

const preset = findPreset('megatron-7.5b');
assert.ok(preset, 'the 7.5B preset (Megatron-LM paper, Table 1 row) is bundled');
const gpu = findGpu('a100-80gb');
// ZeRO's figures are DeepSpeed's mixed-precision regime (16-bit weights and gradients, fp32 master and Adam: K = 12).
const plan = makePlan({ engine: 'deepspeed', model: preset.model, parallel: { dp: 64 }, cluster: { gpusPerNode: 8, nodes: 8 } }, gpu);
const psi = estimateMemory(plan).model.parameters;

/** Relative closeness. */
const near = (got: number, want: number, tol: number) => Math.abs(got - want) / want <= tol;

describe('DP sweep reproduces ZeRO Table 1', () => {
  const sweep = dpSweep(plan, estimateMemory);
  assert.ok(sweep);
  const at64 = sweep.dpSizes.indexOf(64);
  const rows: [string, number, number][] = [
    // label, formula (bytes) with Ψ of this model, published figure for Ψ = 7.5e9 (GB).
    ['DP (replicated)', 16 * psi, 120e9],
    ['ZeRO-1', 4 * psi + (12 * psi) / 64, 31.4e9],
    ['ZeRO-2', 2 * psi + (14 * psi) / 64, 16.6e9],
    ['ZeRO-3', (16 * psi) / 64, 1.88e9],
  ];
  for (const [label, formula, paper] of rows) {
    test(`${label} at Nd = 64`, () => {
      const got = sweep.series.find((s) => s.label === label)?.bytes[at64];
      assert.ok(got !== undefined);
      assert.ok(near(got, formula, 1e-6), `${label}: ${got} vs formula ${formula}`);
      // The preset has Ψ = 7.47e9 rather than exactly 7.5e9, so the paper's rounded figures agree within 1 %.
      assert.ok(near(got, paper, 0.01), `${label}: ${got} vs paper ${paper}`);
    });
  }
  test('every series falls (or stays) as Nd grows', () => {
    for (const s of sweep.series) for (let i = 1; i < s.bytes.length; i++) assert.ok(s.bytes[i] <= s.bytes[i - 1] * (1 + 1e-12), s.label);
  });
  test('no sweep without an estimator', () => assert.equal(dpSweep(plan, undefined), undefined));
});

describe('sharding variants of the current file', () => {
  const memory = estimateMemory(plan);
  const variants = memoryVariants(plan, memory, estimateMemory);
  const byId = new Map(variants.map((v) => [v.id, v.stages[0]]));
  test('the file comes first and is marked current', () => {
    assert.equal(variants[0].id, 'current');
    assert.equal(variants[0].current, true);
    assert.equal(variants.filter((v) => v.current).length, 1);
  });
  test('ZeRO-k shards optimizer states, then gradients, then parameters by Nd (ZeRO §5)', () => {
    const r = byId.get('replicated')!.bytes, z1 = byId.get('zero1')!.bytes, z2 = byId.get('zero2')!.bytes, z3 = byId.get('zero3')!.bytes;
    assert.ok(near(z1.optimizer!, r.optimizer! / 64, 1e-9));
    assert.equal(z1.gradients, r.gradients);
    // DeepSpeed sizes a rank's ZeRO-2 gradient partition to the whole parameters that overlap its 1/64 of the flat
    // group (runtime/zero/stage_1_and_2.py get_partition_info, copy_grads_in_partition): at least 2Ψ/64, at most one
    // parameter more at each end (here rank 0's partition lies in the 51,200 × 4,096 embedding, which it holds whole).
    const embedding = 2 * 51_200 * 4096;
    assert.ok(z2.gradients! >= r.gradients! / 64 * (1 - 1e-9) && z2.gradients! <= r.gradients! / 64 + 2 * embedding, `${z2.gradients}`);
    assert.equal(z2.parameters, r.parameters);
    assert.ok(near(z3.parameters!, r.parameters! / 64, 1e-9));
  });
  test('HSDP shards within a node of 8 GPUs only (Zhao et al. 2023, PyTorch FSDP §3.2.2)', () => {
    const r = byId.get('replicated')!.bytes, h = byId.get('hsdp')!.bytes;
    assert.ok(near(h.optimizer!, r.optimizer! / 8, 1e-9));
  });
  test('without an estimator only the file and its replicated baseline are shown', () => {
    assert.deepEqual(memoryVariants(plan, memory, undefined).map((v) => v.id), ['current', 'replicated']);
  });
  test('an estimator that throws drops the variant instead of failing', () => {
    const v = memoryVariants(plan, memory, () => { throw new Error('boom'); });
    assert.deepEqual(v.map((x) => x.id), ['current']);
  });
});

test('sweep sizes are powers of two up to 1024 and include the file\'s DP size', () => {
  assert.deepEqual(sweepSizes(8), [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
  assert.ok(sweepSizes(96).includes(96));
  assert.equal(sweepSizes(4096).at(-1), 4096);
});

describe('a variant is the plan stated that way, derived again (issue 11)', () => {
  test('the ZeRO-3 variant of a ZeRO-2 DeepSpeed plan turns overlap_comm on, as a file stating stage 3 does', () => {
    // deepspeed/runtime/zero/config.py: overlap_comm left unset is on exactly for stage 3.
    const z2 = makePlan({ model: preset.model, parallel: { dp: 8, sharding: { style: 'deepspeed', stage: 2 } }, cluster: { gpusPerNode: 8, nodes: 1 } }, gpu);
    const z3 = makePlan({ model: preset.model, parallel: { dp: 8, sharding: { style: 'deepspeed', stage: 3 } }, cluster: { gpusPerNode: 8, nodes: 1 } }, gpu);
    assert.equal(z2.parallel.sharding.overlapComm, false);
    const variant = memoryVariants(z2, estimateMemory(z2), estimateMemory).find((v) => v.id === 'zero3');
    assert.ok(variant);
    assert.deepEqual(variant.stages, memoryVariants(z3, estimateMemory(z3)).find((v) => v.id === 'current')?.stages);
  });
});
