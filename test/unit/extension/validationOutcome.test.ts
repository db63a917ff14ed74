/**
 * The end of a validation run as the user sees it (extension/validation/outcome.ts). The CLI's contract
 * (validation/cliSupport.ts reportExitCode, validation/report/assemble.ts): exit 0 with status "ok"; exit 1 with status
 * "failed-checks" when a check did not pass (the results exist), or with status "error" and its error; a crash leaves
 * no report, only stderr.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validationOutcome } from '../../../extension/validation/outcome';

test('a run whose checks did not all pass shows its results and how many failed, as a warning', () => {
  const checks = [{ passed: true }, { passed: false }, { passed: true }, { passed: false }];
  const o = validationOutcome('Validation', { code: 1, cancelled: false }, true, { status: 'failed-checks', checks });
  assert.deepEqual(o, { state: 'done', message: 'Validation finished: 2 of 4 checks failed (see the results).', showResult: true, level: 'warning' });
});

test('a run that ended without results says why: the report\'s error, else the runner\'s last line', () => {
  const e = validationOutcome('Validation', { code: 1, cancelled: false }, false, { status: 'error', error: 'runner failed to start: spawn ENOENT' });
  assert.equal(e.message, 'Validation failed (exit code 1): runner failed to start: spawn ENOENT; see the ShardLens output.');
  assert.equal(e.level, 'error');
  assert.equal(e.showResult, false);
  const crash = validationOutcome('Validation', { code: null, cancelled: false }, false, undefined, 'RangeError: Array buffer allocation failed\n');
  assert.equal(crash.message, 'Validation failed (exit code signal): RangeError: Array buffer allocation failed; see the ShardLens output.');
  const bare = validationOutcome('Validation', { code: 2, cancelled: false }, false, undefined);
  assert.equal(bare.message, 'Validation failed (exit code 2); see the ShardLens output.');
});

test('success and cancellation are unchanged', () => {
  assert.deepEqual(validationOutcome('Validation', { code: 0, cancelled: false }, true, { status: 'ok', checks: [] }), { state: 'done', message: 'Validation finished.', showResult: true, level: 'info' });
  assert.equal(validationOutcome('Validation', { code: 0, cancelled: true }, true, undefined).state, 'cancelled');
  // Exit 0 without a readable report is a failure, not a silent success.
  assert.equal(validationOutcome('Validation', { code: 0, cancelled: false }, false, undefined).state, 'failed');
});
