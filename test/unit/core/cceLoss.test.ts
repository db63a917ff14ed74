/**
 * Apple's Cut Cross-Entropy (apple/ml-cross-entropy cut_cross_entropy/cce.py and cce_backward.py at d42911f), memory and
 * time from what its kernels keep and compute:
 * - forward: the log-sum-exp and the target logits (4T each) and the mean logits over the vocabulary (4V); it saves e, c
 *   (their 16-bit casts under autocast), the log-sum-exp and the mean logits; the logits never reach HBM.
 * - backward: de = zeros_like(e), dc = zeros_like(c), 16-bit, cast to fp32 where e or c is fp32.
 * - FLOPs: forward the head's 2·T·V·h; backward the logits again and both gradients, 6·T·V·h.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cceLossBytes } from '../../../shared/memory/loss';
import { cceHeadParts } from '../../../shared/time/cceLoss';
import type { KernelTimers } from '../../../shared/time/layerCost';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { stageNumbers } from '../../../shared/memory/fast';

const V = 151936, h = 4096, T = 8192;

describe('Cut Cross-Entropy', () => {
  test('16-bit input and weight: the forward\'s per-token statistics, the backward\'s two gradients', () => {
    const b = cceLossBytes(T, V, h, false, false, true);
    assert.equal(b.forward, 8 * T + 4 * V);
    assert.equal(b.saved, 4 * T + 4 * V);
    assert.equal(b.backward, 4 * T + 4 * V + T * h * 2 + V * h * 2);
  });
  test('fp32 input and weight: the gradients cast back to fp32 as well; a frozen head has no dc', () => {
    assert.equal(cceLossBytes(T, V, h, true, true, true).backward, 4 * T + 4 * V + T * h * 6 + V * h * 6);
    assert.equal(cceLossBytes(T, V, h, false, false, false).backward, 4 * T + 4 * V + T * h * 2);
  });
  test('never the logits: with 16-bit weights its backward holds less than the 16-bit logits alone', () => {
    assert.ok(cceLossBytes(T, V, h, false, false, true).backward < 2 * T * V);
  });
  test('forward the head\'s GEMM, backward three: 2·T·V·h and 6·T·V·h FLOPs', () => {
    const t = { gemm16: (m: number, n: number, k: number) => (2 * m * n * k) / 1e15, hbm: (b: number) => b / 1e12, params: { kernelGap: 0 } } as unknown as KernelTimers;
    const plan = { engine: 'fsdp2', model: { hiddenSize: h, vocabSize: V }, training: { precision: 'bf16-mixed', regime: 'fsdp2' } } as never;
    const p = cceHeadParts(plan, T, V, h, t);
    assert.ok(Math.abs(p.fwd.gemm - (2 * T * V * h) / 1e15) < 1e-12);
    assert.ok(Math.abs(p.bwd.gemm - (6 * T * V * h) / 1e15) < 1e-12);
    // No logits move through HBM: only the gradients' zero fills (2 bytes each) in the backward.
    assert.equal(p.fwd.elementwise, 0);
    assert.ok(Math.abs(p.bwd.elementwise - (2 * (T * h + V * h)) / 1e12) < 1e-15);
  });
});

describe('Cut Cross-Entropy in an Axolotl config', () => {
  before(async () => { await initFormats(); });
  const AX = 'base_model: Qwen/Qwen3-8B\nmicro_batch_size: 1\nsequence_len: 8192\nbf16: true\nfsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\n';
  const PLUGIN = 'plugins:\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\n';
  const parse = (text: string) => parseConfig('file:///ws/ax.yml', text);
  test('the plugin alone turns it on (CutCrossEntropyArgs default true); cut_cross_entropy: false turns it off', () => {
    assert.equal(parse(PLUGIN + AX).facts['training.lossFusion']?.value, 'cce');
    assert.equal(parse(PLUGIN + AX + 'cut_cross_entropy: false\n').facts['training.lossFusion'], undefined);
  });
  test('the key without the plugin is warned at its line and does nothing', () => {
    const f = parse(AX + 'cut_cross_entropy: true\n');
    assert.equal(f.facts['training.lossFusion'], undefined);
    const d = f.diagnostics.find((x) => x.code === 'cce-plugin-missing');
    assert.equal(d?.severity, 'warning');
    assert.equal(d!.range.start.line, 7);
  });
  test('beside Liger\'s fused loss: Axolotl refuses both, warned', () => {
    const text = 'plugins:\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\n  - axolotl.integrations.liger.LigerPlugin\nliger_fused_linear_cross_entropy: true\n' + AX;
    assert.ok(parse(text).diagnostics.some((x) => x.code === 'axolotl-loss-conflict' && x.severity === 'warning'));
  });
  test('the last stage keeps no logits: at the loss\'s backward only its statistics and the two gradients beside the saved input', () => {
    const plan = (text: string) => resolvePlan(parse(text), [], { settings: { worldSize: 8, gpu: 'h100-sxm' } }).plan!;
    const moment = (text: string, name: string) => stageNumbers(plan(text), 0)!.moments.find((m) => m.name === name)!;
    const cce = moment(PLUGIN + AX, 'loss backward'), plain = moment(AX, 'loss backward');
    // Unfused transformers loss: 12 bytes per logit at its backward (fp32 log_softmax output and two fp32 gradients).
    assert.ok(plain.logits + plain.temporaries >= 12 * T * V);
    // CCE: the saved input, the final norm's saves, the statistics, de and dc (V·h·2): less than the 16-bit logits alone.
    assert.ok(cce.logits + cce.temporaries < 2 * T * V, `${cce.logits + cce.temporaries}`);
  });
});
