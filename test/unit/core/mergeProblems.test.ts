/**
 * One finding is shown once: the resolver and the core's validation both check the world size against DP·TP·PP·CP,
 * in different words and about overlapping inputs; the file's wording (the resolver's, listed first) is kept.
 * Findings of one code about different inputs stay apart.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeProblems } from '../../../shared/plan/problems';
import type { Problem } from '../../../shared/plan/types';

const p = (code: string, message: string, paths: string[]): Problem => ({ code, severity: 'error', message, paths } as unknown as Problem);

describe('mergeProblems', () => {
  test('the world-size mismatch of the resolver and of validation: one finding, the first', () => {
    const resolver = p('world-size-mismatch', 'DP 4 × TP 1 × PP 1 × CP 1 = 4 GPUs, but the world size is 8.', ['parallel.dp', 'parallel.tp', 'parallel.pp', 'parallel.cp', 'cluster.worldSize']);
    const core = p('world-size-mismatch', 'World size 8 (1 node × 8) ≠ DP·TP·PP·CP = 4·1·1·1 = 4.', ['parallel.dp', 'cluster.nodes']);
    assert.deepEqual(mergeProblems([resolver], [core]).map((x) => x.message), [resolver.message]);
  });

  test('one code about two different inputs: two findings', () => {
    const a = p('invalid-value', 'micro_batch_size should be a number.', ['training.microBatch']);
    const b = p('invalid-value', 'sequence_len should be a number.', ['training.seqLen']);
    assert.equal(mergeProblems([a, b]).length, 2);
  });
});
