/**
 * Liger-Kernel's fused linear cross-entropy (liger_kernel/ops/fused_linear_cross_entropy.py at 0.8.2), memory and time,
 * against first principles and the kernel's own arithmetic:
 * - chunk rows = next_power_of_2(⌈T / ⌈V/h⌉⌉); the file's own example: T = 4096·4, V = 32,000, h = 4096 gives
 *   inc_factor 8 and chunk_size 2048. Llama 3.2 3B (V = 128,256, h = 3072) at T = 8192: ⌈V/h⌉ = 42, ⌈8192/42⌉ = 196,
 *   so 256 rows and 32 chunks.
 * - forward bytes: grad_input T·h·S + grad_weight V·h·w + loss_1d 4T + one chunk's 16-bit logits c·V·2, and with a
 *   16-bit grad_weight the chunk's mm product and its fp32 copy 6·V·h; saved: grad_input + grad_weight.
 * - time: the three GEMMs of each chunk add up to the unfused head's 6·T·V·h FLOPs, all in the forward; the
 *   cross-entropy kernel moves 6 bytes per logit (two 16-bit reads, one in-place write); a 16-bit grad_weight's
 *   accumulation 14 bytes per weight per chunk; no backward kernels.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ligerChunkRows, ligerChunks, ligerLossBytes } from '../../../shared/memory/loss';
import { LIGER_CE_BYTES_PER_LOGIT, ligerHeadParts } from '../../../shared/time/ligerLoss';
import type { KernelTimers } from '../../../shared/time/layerCost';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { estimateMemory } from '../../../shared/memory/estimate';
import { estimateStepTime } from '../../../shared/time/estimate';
import { stageNumbers } from '../../../shared/memory/fast';

const V = 128256, h = 3072, T = 8192;

describe('Liger fused linear cross-entropy: chunks', () => {
  test('the kernel file\'s example: 16,384 rows, V 32,000, h 4,096 → chunks of 2,048', () => {
    assert.equal(ligerChunkRows(4096 * 4, 32000, 4096), 2048);
    assert.equal(ligerChunks(4096 * 4, 32000, 4096), 8);
  });
  test('Llama 3.2 3B at 8,192 tokens: 256 rows, 32 chunks; a remainder makes one more chunk', () => {
    assert.equal(ligerChunkRows(T, V, h), 256);
    assert.equal(ligerChunks(T, V, h), 32);
    // 8,000 tokens: ⌈8000/42⌉ = 191 → 256 rows; 31 full chunks and one of 64.
    assert.equal(ligerChunks(8000, V, h), 32);
  });
});

describe('Liger fused linear cross-entropy: bytes', () => {
  test('16-bit weights: inputs\' and weights\' gradients, loss, one chunk of logits and the fp32 accumulation copy', () => {
    const b = ligerLossBytes(T, V, h, 2, 2, true);
    const gradInput = T * h * 2, gradWeight = V * h * 2;
    assert.equal(b.saved, gradInput + gradWeight);
    assert.equal(b.forward, gradInput + gradWeight + 4 * T + 256 * V * 2 + 6 * V * h);
  });
  test('fp32 weights (autocast): grad_weight in fp32, accumulated in place by addmm', () => {
    const b = ligerLossBytes(T, V, h, 4, 4, true);
    assert.equal(b.forward, T * h * 4 + V * h * 4 + 4 * T + 256 * V * 2);
  });
  test('a frozen head makes no weight gradient', () => {
    const b = ligerLossBytes(T, V, h, 2, 2, false);
    assert.equal(b.saved, T * h * 2);
    assert.equal(b.forward, T * h * 2 + 4 * T + 256 * V * 2);
  });
  test('never the logits: at 8k tokens far below the unfused loss\'s 16-bit logits and fp32 copies (10 bytes per logit)', () => {
    assert.ok(ligerLossBytes(T, V, h, 2, 2, true).forward < 0.5 * 10 * T * V);
  });
});

describe('Liger fused linear cross-entropy: kernels', () => {
  // Unit rates: a GEMM at 1 PFLOP/s, 1 TB/s of HBM, 1 µs per launch.
  const t = {
    gemm16: (m: number, n: number, k: number) => (2 * m * n * k) / 1e15,
    hbm: (bytes: number) => bytes / 1e12,
    params: { kernelGap: 1e-6 },
  } as unknown as KernelTimers;
  const plan = (trains: boolean) => ({
    engine: 'fsdp2', model: { hiddenSize: h, vocabSize: V, tiedEmbeddings: false },
    training: { precision: 'bf16-mixed', regime: 'fsdp2' }, ...(trains ? {} : { lora: { rank: 8, targets: ['q_proj'] } }),
  }) as never;
  test('all three GEMMs in the forward, the unfused head\'s 6·T·V·h FLOPs; nothing in the backward', () => {
    const p = ligerHeadParts(plan(true), T, V, h, t);
    assert.ok(Math.abs(p.fwd.gemm - (6 * T * V * h) / 1e15) < 1e-12);
    assert.equal(p.bwd.gemm, 0);
    assert.equal(p.bwd.elementwise, 0);
  });
  test('cross-entropy 6 bytes per logit, 14 bytes per weight per chunk of 16-bit accumulation, six launches a chunk', () => {
    assert.equal(LIGER_CE_BYTES_PER_LOGIT, 6);
    const p = ligerHeadParts(plan(true), T, V, h, t);
    assert.ok(Math.abs(p.fwd.elementwise - (6 * T * V + 32 * 14 * V * h) / 1e12) < 1e-12);
    assert.ok(Math.abs(p.fwd.launch - (6 * 32 + 3) * 1e-6) < 1e-15);
  });
});

describe('Liger fused linear cross-entropy: a plan', () => {
  before(async () => { await initFormats(); });
  const yaml = 'model_name_or_path: meta-llama/Llama-3.2-3B\nper_device_train_batch_size: 16\nmax_length: 512\nbf16: true\ngradient_checkpointing: true\nuse_liger_kernel: true\n';
  const planOf = (text: string) => resolvePlan(parseConfig('file:///ws/sft.yaml', text), [], { settings: { worldSize: 1, gpu: 'h100-sxm' } }).plan!;
  test('the loss never holds the logits: at its forward, its buffers, one chunk and the final norm\'s saves', () => {
    const liger = planOf(yaml), plain = planOf(yaml.replace('use_liger_kernel: true\n', ''));
    assert.equal(liger.training.lossFusion, 'liger');
    const lossForward = (p: typeof liger) => {
      const s = stageNumbers(p, 0)!;
      return s.moments.find((m) => m.name === 'loss forward')!.logits;
    };
    // Unfused: the 16-bit logits, their fp32 copy and log_softmax output, 10 bytes per logit.
    assert.ok(lossForward(plain) >= 10 * T * V, `${lossForward(plain)}`);
    // Liger under autocast (fp32 weights, an fp32 residual stream): grad_input T·h·4, grad_weight V·h·4, loss 4T, one
    // chunk's logits 256·V·2 and the input itself T·h·4; beside them at most the final norm's saves (a few copies of
    // the hidden state) and autocast's 16-bit copy of the head's weight, 2·V·h.
    const fwd = T * h * 4 + V * h * 4 + 4 * T + 256 * V * 2 + T * h * 4;
    const got = lossForward(liger);
    assert.ok(got >= fwd && got <= fwd + 8 * T * h * 4 + 2 * V * h, `${got} vs ${fwd}`);
    assert.ok(estimateMemory(liger).stages[0].peakAllocatedBytes < estimateMemory(plain).stages[0].peakAllocatedBytes);
  });
  test('the step\'s FLOPs are unchanged (MFU counts the same GEMMs)', () => {
    const liger = estimateStepTime(planOf(yaml)), plain = estimateStepTime(planOf(yaml.replace('use_liger_kernel: true\n', '')));
    assert.ok(Math.abs(liger.mfu * liger.stepSeconds - plain.mfu * plain.stepSeconds) <= 1e-9 * plain.mfu * plain.stepSeconds);
  });
});
