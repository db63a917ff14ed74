/**
 * From the server's `shardlens/analysis` result to the dashboard model (extension/dashboard/model.ts,
 * components.ts, simulation.ts), fed with the real core's outputs. Expected values are first principles: bar
 * components are sums of the core's terms, bytes per step are the core's per-step bytes, exposed time never
 * exceeds the collective's time, and timeline lanes hold exactly the simulator's blocks.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePlan } from '../../../shared/plan/defaults';
import { findPreset } from '../../../shared/model/presets';
import { estimateMemory } from '../../../shared/memory/estimate';
import { collectivesPerStep } from '../../../shared/time/collectives';
import { estimateStepTime } from '../../../shared/time/estimate';
import { simulateStep } from '../../../shared/sim/simulate';
import type { AnalysisCollective, AnalysisResult } from '../../../shared/protocol';
import { commRow, fileNameOf, toDashboardModel } from '../../../extension/dashboard/model';
import { simulationView } from '../../../extension/dashboard/simulation';
import { isDashboardModel } from '../../../webview/protocol/guards';

const plan = makePlan({
  model: findPreset('llama-3.1-8b')!.model,
  training: { microBatch: 1, gradAccum: 4, globalBatch: 32 },
  parallel: { dp: 4, pp: 2, sharding: { stage: 1, style: 'deepspeed', shardGroupSize: 4 } },
  cluster: { gpusPerNode: 8, nodes: 1 },
});
const memory = estimateMemory(plan);
const collectives = collectivesPerStep(plan);
const sim = simulateStep(plan);
const analysis: AnalysisResult = {
  uri: 'file:///work/examples/deepspeed/ds_config_zero1.json', version: 3, format: 'deepspeed', plan, memory,
  replicated: memory.replicated, collectives, stepTime: estimateStepTime(plan),
  simulation: { ok: true, result: sim },
  assumptions: [{ path: 'cluster.gpu', value: '8×H100', detail: 'no GPU in the file' }],
  problems: [],
};

describe('toDashboardModel', () => {
  const built = toDashboardModel(analysis, 'GiB');
  assert.ok('model' in built);
  const m = built.model;
  test('passes the webview guard', () => assert.equal(isDashboardModel(m), true));
  test('the current variant carries the server\'s exact per-stage peaks (what the CLI prints)', () => {
    const cur = m.variants.find((v) => v.current)!;
    assert.deepEqual(cur.stages.map((s) => s.peakAllocatedBytes), memory.stages.map((s) => s.peakAllocatedBytes));
    assert.equal(cur.stages.length, 2);
  });
  test('components sum to the peak reserved bytes of each stage', () => {
    for (const s of m.variants[0].stages) {
      const sum = Object.values(s.bytes).reduce((a, b) => a + (b ?? 0), 0);
      assert.ok(Math.abs(sum - s.peakReservedBytes) / s.peakReservedBytes < 1e-9, `${sum} vs ${s.peakReservedBytes}`);
    }
  });
  test('the summary repeats the estimate', () => {
    assert.equal(m.fileName, 'ds_config_zero1.json');
    assert.equal(m.fits, memory.fits);
    assert.equal(m.peakBytes, memory.stages[memory.peakStage].peakReservedBytes);
    assert.equal(m.stepSeconds, analysis.stepTime!.stepSeconds);
    assert.deepEqual(m.assumptions, ['cluster.gpu = 8×H100: no GPU in the file']);
  });
  test('one communication row per collective with the core\'s per-step bytes', () => {
    assert.equal(m.communication.length, collectives.length);
    assert.deepEqual(m.communication.map((r) => r.bytesPerStep), collectives.map((c) => c.bytesPerRank));
  });
  test('the timeline has a compute lane per pipeline stage', () => {
    assert.ok(m.simulation);
    assert.deepEqual(m.simulation.lanes.filter((l) => l.stream === 'compute').map((l) => l.stage), [0, 1]);
  });
  test('no plan gives a reason, not a model', () => {
    const r = toDashboardModel({ ...analysis, plan: undefined, memory: undefined, problems: [{ code: 'x', severity: 'error', message: 'no model', paths: [] }] }, 'GiB');
    assert.ok('reason' in r);
    assert.match(r.reason, /no model/);
  });
});

describe('commRow', () => {
  const base = collectives[0];
  assert.ok(base, 'DP × PP layout communicates');
  const cases: [string, Partial<AnalysisCollective>, { bytes: number; tier: string; exposed: number }][] = [
    ['bytesPerRank is already per step (bytes per occurrence × count)', { bytesPerOccurrence: 5, countPerStep: 3, bytesPerRank: 15, seconds: 1, exposedSeconds: 0.5, tier: 'nvlink' }, { bytes: 15, tier: 'intra-node (NVLink)', exposed: 0.5 }],
    ['the network tier is inter-node', { bytesPerRank: 1, seconds: 1, exposedSeconds: 1, tier: 'network' }, { bytes: 1, tier: 'inter-node', exposed: 1 }],
    ['exposed is clamped to the collective time', { bytesPerRank: 1, seconds: 1, exposedSeconds: 3, tier: 'pcie' }, { bytes: 1, tier: 'intra-node (PCIe)', exposed: 1 }],
    ['NaN and negative inputs become 0', { bytesPerRank: NaN, seconds: -1, exposedSeconds: NaN, tier: 'nvlink' }, { bytes: 0, tier: 'intra-node (NVLink)', exposed: 0 }],
  ];
  for (const [name, c, want] of cases) {
    test(name, () => {
      const r = commRow({ ...base, ...c });
      assert.equal(r.bytesPerStep, want.bytes);
      assert.equal(r.tier, want.tier);
      assert.equal(r.exposedSeconds, want.exposed);
    });
  }
});

describe('simulationView', () => {
  test('keeps every simulator block, split into compute and comm lanes', () => {
    const v = simulationView(sim);
    assert.ok(v);
    const blocks = sim.stages.reduce((a, s) => a + s.blocks.filter((b) => b.end >= b.start).length, 0);
    assert.equal(v.lanes.reduce((a, l) => a + l.segments.length, 0), blocks);
    assert.equal(v.stepSeconds, sim.stepSeconds);
    assert.equal(v.memory.length, sim.stages.filter((s) => s.memory.length).length);
  });
  test('maps kinds and drops step-level micro-batch −1', () => {
    const v = simulationView({ stepSeconds: 1, stages: [{ stage: 0, blocks: [{ kind: 'comm', microbatch: -1, start: 0, end: 0.5, label: 'grad all-reduce', lane: 'comm' }], memory: [] }] });
    assert.deepEqual(v?.lanes, [{ stage: 0, stream: 'comm', segments: [{ kind: 'communication', start: 0, end: 0.5, label: 'grad all-reduce' }] }]);
  });
  test('drops malformed blocks and returns undefined without lanes', () => {
    assert.equal(simulationView({ stages: [{ blocks: [{ kind: 'forward', start: 2, end: 1 }, { kind: 'nap', start: 0, end: 1 }] }] }), undefined);
    assert.equal(simulationView({ ok: false, stages: [] }), undefined);
    assert.equal(simulationView(null), undefined);
  });
  test('memory over time keeps only finite non-negative points', () => {
    const v = simulationView({ stages: [{ blocks: [{ kind: 'forward', start: 0, end: 1 }], memory: [{ t: 0, bytes: 1 }, { t: 1, bytes: -5 }, { t: NaN, bytes: 1 }] }] });
    assert.deepEqual(v?.memory[0].points, [{ t: 0, bytes: 1 }]);
  });
});

test('fileNameOf decodes the last path segment', () => {
  assert.equal(fileNameOf('file:///a/b/ds%20config.json'), 'ds config.json');
  assert.equal(fileNameOf('untitled:Untitled-1'), 'untitled:Untitled-1');
});
