/**
 * The loss's copies of the logits (shared/memory/loss.ts), per implementation, against first principles with n logits
 * and 16-bit model logits (2 bytes each); fp32 copies and log_softmax outputs are 4 bytes per logit.
 * - upcast (torchtitan, transformers): forward = logits 2n + fp32 copy 4n + log_softmax output 4n; saved = 4n;
 *   backward = saved 4n + nll_loss gradient 4n + log_softmax gradient 4n.
 * - chunked (torchtune's chunked loss under compile, C = 8): the compiled cross-entropy of each chunk saves its 16-bit
 *   logits; its backward replaces one chunk's saved logits with their gradient at a time: 2n + 2n/C.
 * - chunked-eager (the same without compile, torchtune/modules/loss/ce_chunked_output_loss.py): each chunk is upcast
 *   (4n/C) and cross_entropy saves its fp32 log_softmax output (4n/C); at the last chunk the model's 2n, the 4n·(C−1)/C
 *   saved so far and the chunk's copy and output: 2n + 4n + 4n/C. Backward: the 4n saved with one chunk's nll_loss and
 *   log_softmax gradients (4n/C each) and their 16-bit cast (2n/C): 4n + 10n/C.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LOSS_CHUNKS, lossBackwardBytes, lossForwardBytes, lossSavedBytes, type LossImpl } from '../../../shared/memory/loss';

const n = 1e9;
const C = 8;
// [impl, forward, saved, backward] in bytes per n logits (per-token log-sum-exp left out: tokens = 0).
const CASES: [LossImpl, number, number, number][] = [
  ['upcast', 10 * n, 4 * n, 12 * n],
  ['compiled', 2 * n, 2 * n, 4 * n],
  ['chunked', 2 * n, 2 * n, 2 * n + (2 * n) / C],
  ['chunked-eager', 2 * n + 4 * n + (4 * n) / C, 4 * n, 4 * n + (10 * n) / C],
];

describe('the loss\'s copies of the logits', () => {
  test('torchtune\'s chunk count is its default num_output_chunks, 8', () => assert.equal(LOSS_CHUNKS, C));
  for (const [impl, fwd, saved, bwd] of CASES) {
    test(`${impl}: forward, saved, backward`, () => {
      assert.equal(lossForwardBytes(impl, n, 0, 2), fwd);
      assert.equal(lossSavedBytes(impl, n, 0, 2), saved);
      assert.equal(lossBackwardBytes(impl, n, 0, 2), bwd);
    });
  }
  test('chunk by chunk never holds more than the unchunked loss', () => {
    assert.ok(lossBackwardBytes('chunked', n, 0, 2) < lossBackwardBytes('compiled', n, 0, 2));
    assert.ok(lossForwardBytes('chunked-eager', n, 0, 2) < lossForwardBytes('upcast', n, 0, 2));
    assert.ok(lossBackwardBytes('chunked-eager', n, 0, 2) < lossBackwardBytes('upcast', n, 0, 2));
  });
});
