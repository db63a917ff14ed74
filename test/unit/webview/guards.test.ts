/**
 * The webview message guards (webview/protocol/guards.ts): well-formed messages pass, and every malformed variant is
 * rejected, so a malformed message does nothing on either side. Expected verdicts follow from the protocol types in
 * shared/protocol.ts (first principles: a figure must be a finite, non-negative number).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isHostToWebviewMessage, isWebviewToHostMessage, describeRejected } from '../../../webview/protocol/guards';
import type { DashboardModel } from '../../../shared/protocol';
import type { Collective } from '../../../shared/comm/types';
import type { Simulation } from '../../../shared/sim/types';
import { emptyParts } from '../../../shared/time/parts';

const stage = { stage: 0, bytes: { parameters: 1e9, optimizer: 6e9 }, peakAllocatedBytes: 7e9, peakReservedBytes: 7.7e9 };
const model: DashboardModel = {
  uri: 'file:///w/ds_config.json', fileName: 'ds_config.json', format: 'deepspeed',
  cluster: { gpuName: 'H100', gpuMemoryBytes: 80e9, gpusPerNode: 8, nodes: 1 }, modelName: 'Llama', parameters: 7e9,
  fits: true, verdict: { headline: 'fits: ~7.2 GiB/GPU of 74.5 GiB', short: 'fits', conditional: false },
  peakReservedBytes: 7.7e9, peakAllocatedBytes: 7e9, peakStage: 0, units: 'GiB',
  variants: [{ id: 'current', label: 'This file', current: true, stages: [stage] }],
  sweep: { dpSizes: [1, 2], series: [{ label: 'ZeRO-1', bytes: [16, 10] }] },
  communication: [collective()],
  stepSeconds: 1.5,
  assumptions: [{ path: 'cluster.gpu', value: 'H100', detail: 'assumed' }], problems: [{ severity: 'warning', message: 'x' }],
};
const ok = { v: 1, type: 'model', model };

/** A collective as the core lists it (shared/comm/types.ts). */
function collective(): Collective {
  return {
    id: 'dp-grad-allreduce', label: 'DP gradient all-reduce', kind: 'all-reduce', group: 'dp', groupSize: 8, perNode: 8, stage: 0,
    bytesPerOccurrence: 1e9, countPerStep: 1, bytesPerRank: 1e9, algorithm: 'ring', tier: 'nvlink', busBandwidth: 4e11,
    seconds: 0.1, overlapped: true, exposedSeconds: 0.02, formula: '2(n−1)/n·S', citation: 'NCCL',
  };
}

/** A one-stage simulation as the core returns it (shared/sim/types.ts). */
const simulation: Simulation = {
  ok: true, schedule: '1f1b', pp: 1, vpp: 1, microbatches: 1, stepSeconds: 1, bubbleFraction: 0, exposedCommSeconds: 0, mfu: 0.4, hfu: 0.5,
  tokensPerSecond: 1, collectives: [collective()], operatorTerms: [], provenance: [], problems: [],
  stages: [{
    stage: 0, staticBytes: 1, peakBytes: 2, maxInFlight: 1, busySeconds: 1, idleSeconds: 0, exposedCommSeconds: 0,
    parts: { forward: emptyParts(), backward: emptyParts(), recompute: emptyParts() },
    blocks: [{ kind: 'forward', microbatch: 0, chunk: 0, start: 0, end: 0.3, label: 'F0.0', lane: 'compute' },
      { kind: 'comm', microbatch: -1, chunk: -1, start: 0.5, end: 0.6, label: 'gradient sync (DP)', lane: 'comm' }],
    computeSeconds: { forward: 0.3, backward: 0, recompute: 0, comm: 0, idle: 0, optimizer: 0 },
    memory: [{ t: 0, bytes: 1 }],
  }],
};
const sim = { v: 1, type: 'simulation', uri: 'file:///w/ds_config.json', simulation: { ok: true, result: simulation } };

/** A deep copy of the simulation message with one change applied. */
function brokenSim(edit: (m: Record<string, any>) => void): unknown { // eslint-disable-line @typescript-eslint/no-explicit-any
  const c = structuredClone(sim) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  edit(c);
  return c;
}

/** A deep copy of the model message with one change applied. */
function broken(edit: (m: Record<string, any>) => void): unknown { // eslint-disable-line @typescript-eslint/no-explicit-any
  const c = structuredClone(ok) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  edit(c);
  return c;
}

describe('extension → webview guard', () => {
  const good: [string, unknown][] = [
    ['model', ok],
    ['model without optional parts', broken((m) => { delete m.model.sweep; delete m.model.stepSeconds; })],
    ['simulation', sim],
    ['a simulation whose steady state is not drawn', brokenSim((m) => { m.simulation.result.stages[0].elided = { start: 0.3, end: 0.5, passes: 4000 }; })],
    ['no simulation, with the reason', { v: 1, type: 'simulation', uri: 'file:///w/x.json', simulation: { ok: false, message: 'no plan' } }],
    ['environment', { v: 1, type: 'environment', trusted: false }],
    ['a failed request', { v: 1, type: 'failed', what: 'layouts', reason: 'timed out' }],
    ['empty', { v: 1, type: 'empty', reason: 'no file' }],
    ['show', { v: 1, type: 'show', view: 'simulation' }],
    ['progress', { v: 1, type: 'validationProgress', state: 'running', fraction: 0.5, message: '[2/4] zero2' }],
    ['result', { v: 1, type: 'validationResult', result: { source: 'tfjs', backend: 'wasm', parameters: 5e5, runs: [{ mode: 'ddp', ranks: [{ rank: 0, measured: { parameters: 4 }, estimated: { parameters: 4 } }] }] } }],
  ];
  for (const [name, msg] of good) test(`accepts ${name}`, () => assert.equal(isHostToWebviewMessage(msg), true));

  const bad: [string, unknown][] = [
    ['null', null],
    ['a string', 'model'],
    ['an array', [ok]],
    ['another protocol version', { ...ok, v: 2 }],
    ['an unknown type', { v: 1, type: 'eval', code: 'alert(1)' }],
    ['NaN bytes', broken((m) => { m.model.variants[0].stages[0].bytes.parameters = NaN; })],
    ['negative bytes', broken((m) => { m.model.variants[0].stages[0].peakAllocatedBytes = -1; })],
    ['infinite peak', broken((m) => { m.model.peakReservedBytes = Infinity; })],
    ['an unknown memory component', broken((m) => { m.model.variants[0].stages[0].bytes.secret = 1; })],
    ['a string figure', broken((m) => { m.model.parameters = '7e9'; })],
    ['bad units', broken((m) => { m.model.units = 'TiB'; })],
    ['a sweep series of the wrong length', broken((m) => { m.model.sweep.series[0].bytes = [1]; })],
    ['exposed time above total time', broken((m) => { m.model.communication[0].exposedSeconds = 0.2; })],
    ['an unknown network tier', broken((m) => { m.model.communication[0].tier = 'intra-node'; })],
    ['an assumption as a bare string', broken((m) => { m.model.assumptions = ['cluster.gpu = H100']; })],
    ['a block that ends before it starts', brokenSim((m) => { m.simulation.result.stages[0].blocks[0].end = -0.1; })],
    ['an unknown block kind', brokenSim((m) => { m.simulation.result.stages[0].blocks[0].kind = 'sleep'; })],
    ['a block on an unknown lane', brokenSim((m) => { m.simulation.result.stages[0].blocks[0].lane = 'gpu'; })],
    ['a stage without its totals', brokenSim((m) => { delete m.simulation.result.stages[0].computeSeconds; })],
    ['a total of an unknown kind only', brokenSim((m) => { m.simulation.result.stages[0].computeSeconds = { sleep: 1 }; })],
    ['a negative total', brokenSim((m) => { m.simulation.result.stages[0].computeSeconds.idle = -1; })],
    ['an elided span that ends before it starts', brokenSim((m) => { m.simulation.result.stages[0].elided = { start: 0.5, end: 0.3, passes: 4 }; })],
    ['an elided span of no passes', brokenSim((m) => { m.simulation.result.stages[0].elided = { start: 0.3, end: 0.5, passes: 0 }; })],
    ['a micro-batch index below −1', brokenSim((m) => { m.simulation.result.stages[0].blocks[0].microbatch = -2; })],
    ['a failed simulation without a reason', { v: 1, type: 'simulation', uri: 'file:///w/x.json', simulation: { ok: false } }],
    ['a failure of an unknown request', { v: 1, type: 'failed', what: 'eval', reason: 'x' }],
    ['a fractional stage', broken((m) => { m.model.peakStage = 0.5; })],
    ['missing problems', broken((m) => { delete m.model.problems; })],
    ['a bad severity', broken((m) => { m.model.problems[0].severity = 'fatal'; })],
    ['show of an unknown view', { v: 1, type: 'show', view: 'settings' }],
    ['progress above 1', { v: 1, type: 'validationProgress', state: 'running', fraction: 1.5, message: '' }],
    ['progress with an unknown state', { v: 1, type: 'validationProgress', state: 'paused', fraction: 0, message: '' }],
    ['result with a negative measurement', { v: 1, type: 'validationResult', result: { source: 'tfjs', backend: 'wasm', parameters: 1, runs: [{ mode: 'ddp', ranks: [{ rank: 0, measured: { parameters: -4 }, estimated: {} }] }] } }],
    ['result from an unknown source', { v: 1, type: 'validationResult', result: { source: 'jax', backend: 'x', parameters: 1, runs: [] } }],
  ];
  for (const [name, msg] of bad) test(`rejects ${name}`, () => assert.equal(isHostToWebviewMessage(msg), false));
});

describe('webview → extension guard', () => {
  const cases: [string, unknown, boolean][] = [
    ['ready for one view', { v: 1, type: 'ready', view: 'memory' }, true],
    ['ready for the panel', { v: 1, type: 'ready', view: 'all' }, true],
    ['a known command', { v: 1, type: 'command', command: 'runValidation' }, true],
    ['cancel', { v: 1, type: 'command', command: 'cancelValidation' }, true],
    ['an arbitrary command id', { v: 1, type: 'command', command: 'workbench.action.terminal.sendSequence' }, false],
    ['a command without version', { type: 'command', command: 'runValidation' }, false],
    ['ready for an unknown view', { v: 1, type: 'ready', view: 'x' }, false],
    ['a simulation request', { v: 1, type: 'simulate' }, true],
    ['a number', 42, false],
    ['undefined', undefined, false],
  ];
  for (const [name, msg, want] of cases) test(`${want ? 'accepts' : 'rejects'} ${name}`, () => assert.equal(isWebviewToHostMessage(msg), want));
});

test('describeRejected names the type and keys but not the payload', () => {
  const d = describeRejected({ v: 1, type: 'x', secret: 'a'.repeat(1000) });
  assert.match(d, /type="x"/);
  assert.ok(d.length < 200);
  assert.equal(describeRejected(null), 'non-object message (null)');
});

describe('operator terms in the Simulate Step view', () => {
  const term = { name: 'gemm', label: 'GEMMs', forward: 0.1, backward: 0.2, recompute: 0, stepSeconds: 1.2, formula: '2MNK/rate', citation: 'guide', provenance: 'GEMM: curve' };
  test('well-formed terms are kept; a term with a NaN, negative or missing figure or text is left out', async () => {
    const { operatorTermsOf, provenanceOf } = await import('../../../webview/protocol/guards');
    const sim = (terms: unknown, provenance: unknown = ['GEMM: curve', 3, 'attention: curve']) => ({ operatorTerms: terms, provenance }) as unknown as Simulation;
    const bad = [{ ...term, stepSeconds: Number.NaN }, { ...term, forward: -1 }, { ...term, formula: 7 }, { ...term, provenance: undefined }, null, 'gemm'];
    assert.deepEqual(operatorTermsOf(sim([term, ...bad])), [term]);
    assert.deepEqual(operatorTermsOf(sim(undefined)), []);
    assert.deepEqual(operatorTermsOf(sim({ 0: term })), []);
    assert.deepEqual(provenanceOf(sim([term])), ['GEMM: curve', 'attention: curve']);
  });
});
