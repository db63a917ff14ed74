// Report schema checks, comparison with the estimate, and calibration, on synthetic reports built from first principles.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { applyCalibration, calibrate, compareReport, parseProbeReport, validateProbeReport, type ProbeReport } from '../../validation/torch/index';
import { tinyPlan, TINY_PSI } from './fixtures/plans';

/** A 2-rank DDP fp32 Adam report as the probe writes it: 4Ψ params, 4Ψ grads, 8Ψ + 4·37 B Adam state (step scalars). */
function ddpReport(overrides: Partial<ProbeReport> = {}): ProbeReport {
  const P = 4 * TINY_PSI;
  const rank = (r: number) => ({
    rank: r, ok: true, host: 'h', parametersBytes: P, gradientsBytes: P, optimizerStatesBytes: 2 * P + 4 * 37,
    modelStatesBytes: 4 * P + 4 * 37, commBuffersBytes: P, commBytesPerStep: P, commWireBytesPerStep: P,
    collectives: { ddp_bucket_allreduce: { calls: 1, payloadBytes: P, wireBytesSent: P } },
    peakAllocatedBytes: 6_000_000, peakAllocatedSource: 'cpu-profiler' as const, peakReservedBytes: null,
    stepSeconds: 2, peakRssBytes: 300e6,
  });
  return {
    schemaVersion: 1, kind: 'shardlens-probe-report', ok: true, engine: { name: 'torch', versions: { torch: '1.13.0a0', python: '3.11.2' } },
    backend: 'gloo', device: 'cpu', worldSize: 2, nnodes: 1, mode: 'ddp', parameters: TINY_PSI, steps: 3, measuredSteps: 2,
    plan: { name: 't', model: {} as never, training: { microBatch: 2, seqLen: 32, precision: 'fp32', optimizer: 'adam' }, parallel: {} as never, scaling: {} as never },
    errors: [], ranks: [rank(0), rank(1)], createdAt: '2026-11-29T00:00:00Z', ...overrides,
  };
}

describe('report schema', () => {
  test('a well-formed report passes', () => {
    const r = validateProbeReport(JSON.parse(JSON.stringify(ddpReport())));
    assert.ok(r.ok, r.ok ? '' : r.problems.join('\n'));
  });

  const broken: [string, (r: Record<string, unknown>) => void, RegExp][] = [
    ['missing worldSize', (r) => { delete r.worldSize; }, /missing worldSize/],
    ['unknown mode', (r) => { r.mode = 'zero9'; }, /mode: not one of/],
    ['negative bytes', (r) => { (r.ranks as Record<string, unknown>[])[0].parametersBytes = -1; }, /below 0/],
    ['an ok rank without its measurements', (r) => { delete (r.ranks as Record<string, unknown>[])[1].gradientsBytes; }, /ranks\[1\]: missing gradientsBytes/],
    ['a failed rank without an error', (r) => { (r.ranks as Record<string, unknown>[])[1].ok = false; }, /ranks\[1\]: missing error/],
    ['ranks not matching worldSize', (r) => { r.worldSize = 4; }, /one entry per rank/],
  ];
  for (const [name, edit, msg] of broken) {
    test(`rejects ${name}`, () => {
      const value = JSON.parse(JSON.stringify(ddpReport())) as Record<string, unknown>;
      edit(value);
      const r = validateProbeReport(value);
      assert.ok(!r.ok);
      assert.match(r.problems.join('\n'), msg);
    });
  }

  test('a newer schema version and bad JSON are named, not thrown', () => {
    const newer = validateProbeReport({ ...ddpReport(), schemaVersion: 2 });
    assert.ok(!newer.ok && /newer/.test(newer.problems[0]));
    const bad = parseProbeReport('{"schemaVersion":');
    assert.ok(!bad.ok && /not JSON/.test(bad.problems[0]));
  });
});

describe('compareReport', () => {
  test('DDP: model states within 1 % (Adam step scalars are the only extra) and comm exactly 4Ψ', () => {
    const c = compareReport(ddpReport());
    assert.equal(c.estimateSource, 'first-principles');
    assert.ok(c.ok);
    const states = c.ranks[0].terms.find((t) => t.term === 'modelStates');
    assert.equal(states?.expected, 16 * TINY_PSI);
    assert.ok(Math.abs(states!.relError) < 1e-4);
    const comm = c.ranks[0].terms.find((t) => t.term === 'collective:ddp_bucket_allreduce');
    assert.equal(comm?.relError, 0);
  });

  test('a measurement 2 % off fails the 1 % check', () => {
    const r = ddpReport();
    const off = { ...r, ranks: [{ ...r.ranks[0], gradientsBytes: Math.round(4 * TINY_PSI * 1.02) }, r.ranks[1]] };
    const c = compareReport(off);
    assert.equal(c.ok, false);
    assert.equal(c.ranks[0].terms.find((t) => t.term === 'gradients')?.withinTolerance, false);
  });

  test('ZeroRedundancyOptimizer: each rank is held to its whole-tensor partition share', () => {
    // Tensors 6 and 2 elements, N = 2: rank 0 holds 6/8 of Ψ, rank 1 2/8. Ideal Adam share is 8Ψ/2 = 32 B each.
    const psi = 8;
    const r = ddpReport({ mode: 'zero1', parameters: psi, parameterNumels: [2, 6] });
    const rank = (i: number, opt: number) => ({ ...r.ranks[i], parametersBytes: 32, gradientsBytes: 32, optimizerStatesBytes: opt, modelStatesBytes: 64 + opt,
      collectives: { ddp_bucket_allreduce: { calls: 1, payloadBytes: 32, wireBytesSent: 32 }, broadcast: { calls: 2, payloadBytes: 32, wireBytesSent: 16 } }, commBytesPerStep: 64 });
    const c = compareReport({ ...r, ranks: [rank(0, 48), rank(1, 16)] });
    const opt0 = c.ranks[0].terms.find((t) => t.term === 'optimizerStates')!;
    assert.equal(opt0.estimated, 32);
    assert.equal(opt0.expected, 48);
    assert.ok(c.ok, JSON.stringify(c.ranks.map((x) => x.terms.filter((t) => t.withinTolerance === false))));
  });
});

describe('calibrate', () => {
  test('overhead is measured peak − estimated peak; efficiency is estimated / measured step time; settings merge', () => {
    const { correction, setting } = calibrate(
      { report: { ...ddpReport(), device: 'cuda:NVIDIA H100' }, estimatedPeakAllocatedBytes: 5_000_000, estimatedStepSeconds: 1, clusterId: 'lab' },
      { other: { clusterId: 'other' } as never },
    );
    assert.equal(correction.overheadBytes, 1_000_000);
    assert.equal(correction.efficiency, 0.5);
    assert.deepEqual(Object.keys(setting.value).sort(), ['lab', 'other']);
    assert.equal(setting.key, 'shardlens.calibration');
    const plan = applyCalibration(tinyPlan(2), correction);
    assert.equal(plan.overhead.cudaContextBytes, tinyPlan(2).overhead.cudaContextBytes + 1_000_000);
    assert.equal(plan.cluster.gpu.kernelSpeed, 0.5);
    assert.equal(plan.sources['overhead.cudaContextBytes']?.kind, 'setting');
  });

  test('a CPU report or a failed report is flagged and neutral where nothing can be compared', () => {
    const { correction } = calibrate({ report: { ...ddpReport(), ok: false }, clusterId: 'cpu' });
    assert.equal(correction.overheadBytes, 0);
    assert.equal(correction.efficiency, 1);
    assert.ok(correction.warnings.some((w) => /CPU/.test(w)));
    assert.ok(correction.warnings.some((w) => /failed/.test(w)));
  });
});

describe('dashboard view', () => {
  test('measured and attached estimates become the dashboard’s parameters / gradients / optimizer / sent / peak', async () => {
    const { toResultView } = await import('../../extension/probe/view');
    const r = ddpReport();
    const v = toResultView({ ...r, ranks: r.ranks.map((x) => ({ ...x, estimated: { parametersBytes: 1, gradientsBytes: 2, optimizerStatesBytes: 3 } })) });
    assert.equal(v.source, 'torch');
    assert.equal(v.runs[0].mode, 'ddp');
    assert.equal(v.runs[0].ranks[0].measured.parameters, 4 * TINY_PSI);
    assert.equal(v.runs[0].ranks[0].measured.sent, 4 * TINY_PSI);
    assert.deepEqual(v.runs[0].ranks[1].estimated, { parameters: 1, gradients: 2, optimizer: 3 });
    assert.match(v.backend, /torch on cpu over gloo .*CPU allocator/);
  });
});
