/**
 * DeepSpeed's batch identity (runtime/config.py `_set_batch_related_parameters`: train_batch_size = micro × accumulation
 * × world / model parallel) checked against a GPU count nobody gave: the file may be meant for another count, so a
 * mismatch is a warning that names the DP the file's batch is for; with the count given it stays an error.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { memoryHost } from './helpers';

const DS = '{\n  "train_batch_size": 16,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 1,\n  "bf16": { "enabled": true },\n  "zero_optimization": { "stage": 2 }\n}\n';

function problems(settings: Record<string, unknown>) {
  return loadConfigGraph('/ws/ds.json', memoryHost({ '/ws/ds.json': DS }), { settings }).resolved.problems.filter((p) => p.code === 'batch-identity');
}

describe('the batch identity on an assumed GPU count', () => {
  before(async () => { await initFormats(); });
  test('8 GPUs assumed: a warning that the file\'s 16 = 4 × 1 × DP is for DP 4', () => {
    const [p] = problems({});
    assert.equal(p?.severity, 'warning');
    assert.match(p.message, /global 16 ≠ micro 4 × accumulation 1 × DP 8 = 32 with the assumed 8 GPUs; the file's batch is for DP 4 \(4 GPUs\)/);
  });
  test('8 GPUs set by the user: an error', () => {
    const [p] = problems({ worldSize: 8 });
    assert.equal(p?.severity, 'error');
    assert.doesNotMatch(p.message, /assumed/);
  });
  test('4 GPUs set: consistent, no problem', () => assert.equal(problems({ worldSize: 4 }).length, 0));
});
