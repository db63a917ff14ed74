/**
 * transformers' sliding-window layers under SDPA (integrations/sdpa_attention.py, masking_utils.py, transformers 5.24):
 * once the sequence reaches the window the layer passes SDPA a boolean mask and repeats K/V to the query heads
 * (use_gqa_in_sdpa is false with a mask on CUDA); FlashAttention takes no mask, so the memory-efficient kernel runs and
 * keeps the mask as an additive bias in the compute dtype, b·s·s bytes·B a layer, and the repeated K/V. A stated
 * FlashAttention-2 applies the window in its kernel and keeps neither. Mistral-7B v0.1: 32 layers, all sliding over
 * 4,096 keys, 32 query and 8 KV heads of 128 (its config.json).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { peakMemoryFast } from '../../../shared/memory/fast';
import { maskedSlidingShare } from '../../../shared/memory/engine';
import { maskedSdpaBytes } from '../../../shared/memory/blocks';
import { memoryHost } from '../formats/helpers';

const axolotl = (seq: number, extra = '') => `base_model: mistralai/Mistral-7B-v0.1\nsequence_len: ${seq}\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\nbf16: true\ngradient_checkpointing: false\n${extra}`;
const plan = (text: string) => loadConfigGraph('/ws/mistral.yaml', memoryHost({ '/ws/mistral.yaml': text }), { settings: {} }).resolved.plan!;

describe('sliding-window layers under SDPA (transformers)', () => {
  before(async () => { await initFormats(); });

  test('the mask and the repeated K/V of one layer, by hand', () => {
    const T = 8192, B = 2;
    const x = { sLocal: T, b: 1, h: 4096, heads: 32, kvHeadsEff: 8, headDim: 128, ffn: 14336, gated: true, tp: 1, sp: false, flash: true, actBytes: B, sKeys: T, dropout: false };
    // The bias: 2·T² (128 MiB); K and V at 32 heads instead of 8: 2·2·T·(4096 − 1024) (96 MiB).
    assert.equal(maskedSdpaBytes(x), B * T * T + 2 * B * T * (4096 - 1024));
    // One KV head: the repeat is a view (expand + reshape of a size-1 dimension), only the bias remains.
    assert.equal(maskedSdpaBytes({ ...x, kvHeadsEff: 1 }), B * T * T);
  });

  test('SDPA by default once the sequence reaches the window; not under a stated FlashAttention-2 or a shorter sequence', () => {
    assert.equal(maskedSlidingShare(plan(axolotl(8192))), 1);
    assert.equal(maskedSlidingShare(plan(axolotl(4096))), 1);
    assert.equal(maskedSlidingShare(plan(axolotl(2048))), 0);
    assert.equal(maskedSlidingShare(plan(axolotl(8192, 'flash_attention: true\n'))), 0);
  });

  test('32 sliding layers at 8,192 tokens keep 7 GiB more under SDPA than under FlashAttention-2', () => {
    const T = 8192, B = 2;
    const extra = peakMemoryFast(plan(axolotl(T))) - peakMemoryFast(plan(axolotl(T, 'flash_attention: true\n')));
    const want = 32 * (B * T * T + 2 * B * T * (4096 - 1024));
    assert.ok(Math.abs(extra - want) <= 0.01 * want, `${extra / 2 ** 30} GiB against ${want / 2 ** 30}`);
  });
});
