/**
 * Fused attention kernels are compiled for a few head dims and run a head on the next one up: FlashAttention-2 (and
 * PyTorch SDPA's copy of it) rounds to a multiple of 32 up to 192, else 256 (flash-attention csrc/flash_attn/
 * flash_api.cpp `head_size_rounded`); FlashAttention-3 to 64, 96, 128, 192 or 256 (hopper/flash_api.cpp); cuDNN runs
 * multiples of 8. The padding does work the model does not count: MPT-30B's heads of 112 (7168 / 64) run the 128
 * kernel at the 128 kernel's rate, 7/8 of it useful, not at a rate between the 64 and 128 kernels' as before.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { flashFraction, kernelHeadDim } from '../../../shared/time/kernels/attention';

describe('the head dim a kernel runs', () => {
  for (const [kernel, d, want] of [
    ['fa2', 112, 128], ['fa2', 80, 96], ['fa2', 128, 128], ['fa2', 64, 64], ['fa2', 160, 160], ['fa2', 200, 256],
    ['fa3', 80, 96], ['fa3', 112, 128], ['fa3', 160, 192], ['fa3', 256, 256],
    ['cudnn', 112, 112], ['cudnn', 100, 104],
  ] as const) {
    test(`${kernel}, head dim ${d}: ${want}`, () => assert.equal(kernelHeadDim(kernel, d), want));
  }

  test('a head of 112 on FlashAttention-2: the 128 kernel\'s rate × 112/128, forward and backward, causal or not', () => {
    for (const pass of ['fwd', 'bwd'] as const) for (const causal of [true, false]) for (const seq of [2048, 8192]) {
      const got = flashFraction('hopper', 'fa2', pass, seq, 112, causal);
      const want = flashFraction('hopper', 'fa2', pass, seq, 128, causal) * (112 / 128);
      assert.ok(Math.abs(got - want) <= 1e-12, `${pass} ${causal} ${seq}: ${got} vs ${want}`);
    }
  });

  test('cuDNN runs 112 as it is: between its 64 and 128 rates, above the padded figure', () => {
    const f = flashFraction('hopper', 'cudnn', 'fwd', 4096, 112, true);
    assert.ok(f > flashFraction('hopper', 'cudnn', 'fwd', 4096, 64, true) && f < flashFraction('hopper', 'cudnn', 'fwd', 4096, 128, true));
    assert.ok(f > flashFraction('hopper', 'cudnn', 'fwd', 4096, 128, true) * (112 / 128));
  });
});
