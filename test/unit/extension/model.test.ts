/**
 * From the server's `shardlens/analysis` result to the dashboard model (extension/dashboard/model.ts, components.ts)
 * and from `shardlens/simulate` to the Simulate Step answer (simulation.ts), fed with the real core's outputs.
 * Expected values are first principles: bar components are sums of the core's terms, the collectives and the
 * simulation reach the dashboards as the core produced them (not renamed, not re-parsed).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePlan } from '../../../shared/plan/defaults';
import { findPreset } from '../../../shared/model/presets';
import { estimateMemory } from '../../../shared/memory/estimate';
import { collectivesPerStep } from '../../../shared/time/collectives';
import { estimateStepTime } from '../../../shared/time/estimate';
import { simulateStep } from '../../../shared/sim/simulate';
import type { AnalysisResult } from '../../../shared/protocol';
import { fileNameOf, toDashboardModel } from '../../../extension/dashboard/model';
import { simulationAnswer } from '../../../extension/dashboard/simulation';
import { isDashboardModel, isSimulation } from '../../../webview/protocol/guards';

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
    assert.equal(m.peakReservedBytes, memory.stages[memory.peakStage].peakReservedBytes);
    assert.equal(m.peakAllocatedBytes, memory.stages[memory.peakStage].peakAllocatedBytes);
    assert.equal(m.stepSeconds, analysis.stepTime!.stepSeconds);
    assert.deepEqual(m.assumptions, analysis.assumptions);
  });
  test('the collectives are the core\'s, field for field', () => {
    assert.deepEqual(m.communication, collectives);
  });
  test('no plan gives a reason, not a model', () => {
    const r = toDashboardModel({ ...analysis, plan: undefined, memory: undefined, problems: [{ code: 'x', severity: 'error', message: 'no model', paths: [] }] }, 'GiB');
    assert.ok('reason' in r);
    assert.match(r.reason, /no model/);
  });
  test('a script that trains nothing says so instead of asking for more input', () => {
    const r = toDashboardModel({ ...analysis, plan: undefined, memory: undefined, problems: [{ code: 'no-training-command', severity: 'info', message: 'x', paths: [] }] }, 'GiB');
    assert.ok('reason' in r);
    assert.match(r.reason, /nothing to estimate/);
  });
});

describe('simulationAnswer', () => {
  test('passes the core\'s simulation through unchanged, and the guard accepts it', () => {
    const a = simulationAnswer({ ok: true, result: sim });
    assert.ok(a.ok);
    assert.equal(a.result, sim);
    assert.equal(isSimulation(sim), true);
  });
  test('a file without a plan or a failed simulation gives a sentence', () => {
    const none = simulationAnswer(null);
    assert.ok(!none.ok && /does not say enough/.test(none.message));
    const bad = simulationAnswer({ ok: false, problems: [{ code: 'schedule-deadlock', severity: 'error', message: 'The 1f1b schedule deadlocked.', paths: [] }] });
    assert.ok(!bad.ok && /deadlocked/.test(bad.message));
  });
});

test('a module of configuration functions names the function analysed', () => {
  const built = toDashboardModel({ ...analysis, uri: 'file:///work/torchtitan_recipes/llama3.py', format: 'torchtitan', symbol: 'llama3_8b' }, 'GiB');
  assert.ok('model' in built);
  assert.equal(built.model.fileName, 'llama3.py → llama3_8b()');
  assert.equal(isDashboardModel(built.model), true);
});

test('fileNameOf decodes the last path segment', () => {
  assert.equal(fileNameOf('file:///a/b/ds%20config.json'), 'ds config.json');
  assert.equal(fileNameOf('untitled:Untitled-1'), 'untitled:Untitled-1');
});

describe('the run\'s length in the dashboard header', () => {
  test('a plan with 3,000 planned steps: steps × step time, and × the GPUs / 3600 in GPU-hours; a malformed run is refused', () => {
    // makePlan keeps the stated inputs (plan.stated); the run length reads the planned steps from them.
    const withSteps = makePlan({ ...plan.stated!, training: { ...plan.stated!.training, steps: 3000 } } as never);
    const step = estimateStepTime(withSteps).stepSeconds;
    const built = toDashboardModel({ ...analysis, plan: withSteps, stepTime: estimateStepTime(withSteps) }, 'GiB');
    assert.ok('model' in built);
    const run = built.model.run!;
    assert.equal(run.steps, 3000);
    assert.ok(Math.abs(run.seconds - 3000 * step) < 1e-9);
    assert.equal(run.gpus, 8);
    assert.ok(Math.abs(run.gpuHours - (3000 * step * 8) / 3600) < 1e-9);
    assert.equal(isDashboardModel(built.model), true);
    assert.equal(isDashboardModel({ ...built.model, run: { ...run, steps: 0 } }), false);
    assert.equal(isDashboardModel({ ...built.model, run: { ...run, gpuHours: Number.NaN } }), false);
    // Without planned steps there is no run length.
    const none = toDashboardModel(analysis, 'GiB');
    assert.ok('model' in none && none.model.run === undefined);
  });
});
