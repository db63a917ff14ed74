/**
 * The webview message guards (webview/protocol/guards.ts): well-formed messages pass, and every malformed variant is
 * rejected, so a malformed message does nothing on either side. Expected verdicts follow from the protocol types in
 * shared/protocol.ts (first principles: a figure must be a finite, non-negative number).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isHostToWebviewMessage, isWebviewToHostMessage, describeRejected } from '../../../webview/protocol/guards';
import type { DashboardModel } from '../../../shared/protocol';

const stage = { stage: 0, bytes: { parameters: 1e9, optimizer: 6e9 }, peakAllocatedBytes: 7e9, peakReservedBytes: 7.7e9 };
const model: DashboardModel = {
  uri: 'file:///w/ds_config.json', fileName: 'ds_config.json', format: 'deepspeed',
  cluster: { gpuName: 'H100', gpuMemoryBytes: 80e9, gpusPerNode: 8, nodes: 1 }, modelName: 'Llama', parameters: 7e9,
  fits: true, peakBytes: 7.7e9, peakStage: 0, units: 'GiB',
  variants: [{ id: 'current', label: 'This file', current: true, stages: [stage] }],
  sweep: { dpSizes: [1, 2], series: [{ label: 'ZeRO-1', bytes: [16, 10] }] },
  communication: [{ label: 'all-reduce', collective: 'all-reduce', axis: 'dp', tier: 'intra-node', bytesPerStep: 1e9, seconds: 0.1, exposedSeconds: 0.02 }],
  stepSeconds: 1.5,
  simulation: { stepSeconds: 1, lanes: [{ stage: 0, segments: [{ kind: 'forward', start: 0, end: 0.3, microbatch: 0 }] }], memory: [{ stage: 0, points: [{ t: 0, bytes: 1 }] }] },
  assumptions: ['cluster.gpu = H100: assumed'], problems: [{ severity: 'warning', message: 'x' }],
};
const ok = { v: 1, type: 'model', model };

/** A deep copy of the model message with one change applied. */
function broken(edit: (m: Record<string, any>) => void): unknown { // eslint-disable-line @typescript-eslint/no-explicit-any
  const c = structuredClone(ok) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  edit(c);
  return c;
}

describe('extension → webview guard', () => {
  const good: [string, unknown][] = [
    ['model', ok],
    ['model without optional parts', broken((m) => { delete m.model.sweep; delete m.model.simulation; delete m.model.stepSeconds; })],
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
    ['infinite peak', broken((m) => { m.model.peakBytes = Infinity; })],
    ['an unknown memory component', broken((m) => { m.model.variants[0].stages[0].bytes.secret = 1; })],
    ['a string figure', broken((m) => { m.model.parameters = '7e9'; })],
    ['bad units', broken((m) => { m.model.units = 'TiB'; })],
    ['a sweep series of the wrong length', broken((m) => { m.model.sweep.series[0].bytes = [1]; })],
    ['exposed time above total time', broken((m) => { m.model.communication[0].exposedSeconds = 0.2; })],
    ['a segment that ends before it starts', broken((m) => { m.model.simulation.lanes[0].segments[0].end = -0.1; })],
    ['an unknown segment kind', broken((m) => { m.model.simulation.lanes[0].segments[0].kind = 'sleep'; })],
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
