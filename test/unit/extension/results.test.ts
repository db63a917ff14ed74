/**
 * Normalising validation reports for the dashboard (extension/validation/results.ts): the tfjs runner's
 * `--json` (issue 6: runs[].ranks[].{measured,estimated}.{parametersBytes,…,sentBytes}) and the probe's report
 * (issue 7: schemaVersion, engine, mode, ranks[].{parametersBytes,…,commBytesPerStep,peakAllocatedBytes}).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { byteFields, fromProbeReport, fromRunnerReport } from '../../../extension/validation/results';
import { isValidationResult } from '../../../webview/protocol/guards';

const runner = {
  backend: 'wasm', parameters: 524288,
  runs: [
    { mode: 'ddp', ranks: [{ rank: 0, measured: { parametersBytes: 2097152, gradientsBytes: 2097152, optimizerStatesBytes: 4194304, sentBytes: 3145728 }, estimated: { parametersBytes: 2097152, gradientsBytes: 2097152, optimizerStatesBytes: 4194304, sentBytes: 3145728 } }] },
    { mode: 'zero3', ranks: [{ rank: 0, measured: { parametersBytes: 524288 }, estimated: { parametersBytes: 524288 } }, { rank: 1, measured: { parametersBytes: 524288 }, estimated: {} }] },
  ],
};

describe('runner report', () => {
  const v = fromRunnerReport(runner, '/tmp/r.json');
  test('keeps every run and rank with short component names', () => {
    assert.ok(v);
    assert.deepEqual(v.runs.map((r) => [r.mode, r.ranks.length]), [['ddp', 1], ['zero3', 2]]);
    assert.deepEqual(v.runs[0].ranks[0].measured, { parameters: 2097152, gradients: 2097152, optimizer: 4194304, sent: 3145728 });
    assert.equal(v.reportPath, '/tmp/r.json');
  });
  test('passes the webview guard', () => assert.equal(isValidationResult(v), true));
  test('a backend object gives its name', () => assert.equal(fromRunnerReport({ ...runner, backend: { name: 'cpu', why: [] } })?.backend, 'cpu'));
  const bad: [string, unknown][] = [['null', null], ['no runs', { backend: 'wasm' }], ['runs without ranks', { runs: [{ mode: 'ddp', ranks: [] }] }], ['ranks without measurements', { runs: [{ mode: 'ddp', ranks: [{ measured: { parametersBytes: -1 } }] }] }]];
  for (const [name, x] of bad) test(`rejects ${name}`, () => assert.equal(fromRunnerReport(x), undefined));
});

describe('probe report', () => {
  const report = {
    schemaVersion: 1, engine: { torch: '2.1.2', python: '3.11' }, worldSize: 2, mode: 'ddp', parameters: 1000,
    ranks: [
      { rank: 0, parametersBytes: 4000, gradientsBytes: 4000, optimizerStatesBytes: 8000, commBytesPerStep: 4000, peakAllocatedBytes: 20000, stepSeconds: 0.1 },
      { rank: 1, parametersBytes: 4000, gradientsBytes: 4000, optimizerStatesBytes: 8000, commBytesPerStep: 4000, peakAllocatedBytes: 20000, stepSeconds: 0.1 },
    ],
  };
  test('reads flat ranks and names the engine', () => {
    const v = fromProbeReport(report);
    assert.ok(v);
    assert.equal(v.source, 'torch');
    assert.equal(v.backend, 'torch 2.1.2, python 3.11');
    assert.deepEqual(v.runs[0].ranks[1].measured, { parameters: 4000, gradients: 4000, optimizer: 8000, sent: 4000, peak: 20000 });
    assert.equal(isValidationResult(v), true);
  });
  test('rejects a report without schemaVersion', () => assert.equal(fromProbeReport({ ...report, schemaVersion: undefined }), undefined));
});

test('byteFields ignores unknown and non-finite fields', () => {
  assert.deepEqual(byteFields({ parametersBytes: 1, foo: 2, gradientsBytes: Infinity }), { parameters: 1 });
  assert.deepEqual(byteFields('x'), {});
});
