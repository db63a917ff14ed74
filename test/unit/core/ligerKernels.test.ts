/**
 * Liger-Kernel's RMSNorm, RoPE and SwiGLU in place of transformers' eager code (TrainingSpec.ligerKernels), from what
 * the Triton kernels save and move (liger_kernel/ops at 0.8.2):
 * - RMSNorm saves its input X (S bytes, the stream's dtype) and an fp32 rstd per row (rms_norm.py
 *   save_for_backward(X, W, RSTD)), where transformers' LlamaRMSNorm keeps the fp32 input and the normalised tensor,
 *   (4 + S) per element: 4·T·h less per norm, two norms a layer.
 * - SwiGLU saves the gate and up outputs (swiglu.py save_for_backward(a, b)); the product is the down projection's
 *   input; transformers' MLP also keeps the activation's output: B·T·f less per layer.
 * - RMSNorm reads X and writes Y (S/B passes of 2·B per element), backward reads dY, X and writes dX (1.5·S/B); RoPE
 *   rewrites q and k in place (1 pass of 2·B); SwiGLU reads a, b and writes c (1 pass of 3·B), backward reads dc, a, b and
 *   writes da, db (5/3).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { stageNumbers } from '../../../shared/memory/fast';
import { layerElementwiseBytes, ligerPasses, type LigerOps } from '../../../shared/time/kernels/elementwise';
import { estimateStepTime } from '../../../shared/time/estimate';
import kernels from '../../../data/time/kernels.json';

describe('Liger kernels: passes', () => {
  test('RMSNorm 1 and 1.5 passes on a 16-bit stream; on an fp32 one 2 and 3 plus the linears\' casts of its output', () => {
    assert.equal(ligerPasses('norm', 'fwd', 1), 1);
    assert.equal(ligerPasses('norm', 'bwd', 1), 1.5);
    // fp32 stream: read and write 8 bytes (2 passes of 4); q, k, v cast the attention norm's output and gate, up the
    // MLP norm's: 2.5 casts of 4 + 2 bytes a norm (3.75 passes). Backward: dY, X, dX at 4 bytes (3 passes); each cast's
    // gradient cast back, 2 + 4 bytes, and summed in fp32, 12 bytes an add: (3·6 + 2·12 + 2·6 + 12)/2 = 33 (8.25).
    assert.equal(ligerPasses('norm', 'fwd', 2), 2 + 3.75);
    assert.equal(ligerPasses('norm', 'bwd', 2), 3 + 8.25);
    assert.equal(ligerPasses('rope', 'fwd', 1), 1);
    assert.equal(ligerPasses('rope', 'bwd', 1), 1);
    assert.equal(ligerPasses('glu', 'fwd', 1), 1);
    assert.ok(Math.abs(ligerPasses('glu', 'bwd', 1) - 5 / 3) < 1e-12);
  });

  test('a Llama layer in transformers\' 16-bit eager code: forward bytes fall by the three ops\' passes, term by term', () => {
    const T = 4096, h = 3072, a = 24, g = 8, d = 128, f = 8192, B = 2;
    const m = { hiddenSize: h, headDim: d, norm: 'rmsnorm', positions: 'rotary', gatedMlp: true, dropout: false } as never;
    const w = { tokens: T, normTokens: T, qHeads: a, kvHeads: g, ffn: f };
    const liger: LigerOps = { norm: true, rope: true, glu: true, streamRatio: 1 };
    const P = kernels.elementwise.passes.hf;
    const expected = 2 * (P.rmsnorm - 1) * 2 * T * h * B + (P.rotary - 1) * 2 * T * (a + g) * d * B + (P.gated - 1) * 3 * T * f * B;
    const drop = layerElementwiseBytes(m, w, B, 'hf', 'fwd') - layerElementwiseBytes(m, w, B, 'hf', 'fwd', false, liger);
    assert.ok(Math.abs(drop - expected) <= 1e-9 * expected, `${drop} vs ${expected}`);
    // The compiled and fused modes fuse those ops already: Liger's kernels change nothing there.
    assert.equal(layerElementwiseBytes(m, w, B, 'compiled', 'fwd', false, liger), layerElementwiseBytes(m, w, B, 'compiled', 'fwd'));
  });
});

describe('Liger kernels: a plan', () => {
  before(async () => { await initFormats(); });
  // The HF Trainer's bf16 with fp32 weights under autocast: an fp32 residual stream (S = 4), 16-bit compute (B = 2).
  const yaml = 'model_name_or_path: meta-llama/Llama-3.2-3B\nper_device_train_batch_size: 2\nmax_length: 2048\nbf16: true\nliger_kernel_config:\n  fused_linear_cross_entropy: false\nuse_liger_kernel: true\n';
  const planOf = (text: string) => resolvePlan(parseConfig('file:///ws/sft.yaml', text), [], { settings: { worldSize: 1, gpu: 'h100-sxm' } }).plan!;

  test('each layer saves 2·4·T·h (two norms) + B·T·f (the activation\'s output) less', () => {
    const liger = planOf(yaml), plain = planOf(yaml.replace('use_liger_kernel: true\n', ''));
    assert.equal(liger.training.ligerKernels, 'rms_norm,rope,swiglu');
    assert.equal(liger.training.lossFusion, undefined);
    const T = 2 * 2048, h = 3072, f = 8192, L = 28;
    const per = (p: typeof liger) => stageNumbers(p, 0)!.layerActPerMicrobatch;
    const drop = per(plain) - per(liger);
    const expected = L * (2 * 4 * T * h + 2 * T * f);
    assert.ok(Math.abs(drop - expected) <= 1e-9 * expected, `${drop} vs ${expected}`);
  });

  test('the step is faster, and only its memory-bound part moves', () => {
    const liger = estimateStepTime(planOf(yaml)), plain = estimateStepTime(planOf(yaml.replace('use_liger_kernel: true\n', '')));
    assert.ok(liger.stepSeconds < plain.stepSeconds);
    const term = (e: typeof liger, n: string) => e.operatorTerms.find((x) => x.name === n)?.stepSeconds ?? 0;
    assert.equal(term(liger, 'gemm'), term(plain, 'gemm'));
    assert.equal(term(liger, 'attention'), term(plain, 'attention'));
    assert.ok(term(liger, 'elementwise') < term(plain, 'elementwise'));
  });
});
