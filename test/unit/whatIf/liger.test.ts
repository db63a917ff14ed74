/**
 * The what-if "Liger-Kernel on → off" at the key that turned it on (shared/plan/whatIf.ts): the HF Trainer's
 * `use_liger_kernel` (transformers trainer.py applies Liger's fused loss, RMSNorm, RoPE and SwiGLU together) and
 * LLaMA-Factory's `enable_liger_kernel` (every kernel, and the fused loss in pre-training and SFT only). The edit writes
 * the key `false`, and the file read again states neither Liger fact. Expected relations from Liger's design (Hsu et al.
 * 2024, §3: the fused linear cross-entropy never materializes the logits): turning it off keeps the logits, so the peak
 * cannot fall. That the what-if equals the edited file read again, figure for figure, is the property test's.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats } from '../../../formats/index';
import { estimateMemory } from '../../../shared/memory/estimate';
import { whatIfsFor } from '../../../shared/plan/whatIf';
import { estimateStepTime } from '../../../shared/time/estimate';
import type { Plan } from '../../../shared/plan/types';
import { whatIfs } from './helpers';

const HF = '/ws/sft.yaml';
const HF_TEXT = 'model_name_or_path: meta-llama/Llama-3.2-3B\nper_device_train_batch_size: 4\nmax_length: 4096\nbf16: true\ngradient_checkpointing: true\nuse_liger_kernel: True\n';
const LF = '/ws/llama3_full_sft.yaml';
const LF_TEXT = 'model_name_or_path: meta-llama/Llama-3.2-3B\nstage: sft\ndo_train: true\nfinetuning_type: full\ncutoff_len: 4096\nper_device_train_batch_size: 4\nbf16: true\nenable_liger_kernel: true\n';
const AX = '/ws/axolotl.yaml';
const AX_TEXT = 'base_model: meta-llama/Llama-3.2-3B\nmicro_batch_size: 4\nsequence_len: 2048\nbf16: true\nplugins:\n  - axolotl.integrations.liger.LigerPlugin\nliger_rms_norm: true\nliger_fused_linear_cross_entropy: true\n';

const peak = (p: Plan) => { const m = estimateMemory(p); return m.stages[m.peakStage].peakReservedBytes; };
/** What the hover shows, as the property test compares it: every stage's peaks and the step time. */
const figures = (p: Plan) => ({ peaks: estimateMemory(p).stages.map((s) => [s.peakReservedBytes, s.peakAllocatedBytes]), step: estimateStepTime(p)?.stepSeconds });

describe('Liger-Kernel on → off', () => {
  before(async () => { await initFormats(); });

  test('HF Trainer: offered once, at the fused loss; the key written False as the file spells it; the logits come back', () => {
    const { plan, results } = whatIfs({ [HF]: HF_TEXT }, HF, 'training.lossFusion');
    assert.equal(plan.training.lossFusion, 'liger');
    assert.deepEqual(whatIfsFor(plan, 'training.ligerKernels'), [], 'not offered twice');
    assert.equal(results.length, 1);
    assert.equal(results[0].whatIf.label, 'Liger-Kernel on → off');
    assert.match(results[0].text, /^use_liger_kernel: False$/m);
    assert.notEqual(results[0].edited.training.lossFusion, 'liger');
    assert.equal(results[0].edited.training.ligerKernels, undefined);
    assert.ok(peak(results[0].plan) > peak(plan), 'the logits of 4 × 4,096 tokens × 128,256 entries are kept again');
    assert.deepEqual(figures(results[0].plan), figures(results[0].edited), 'the what-if equals the edited file read again');
  });

  test('LLaMA-Factory at a stage that needs the logits (dpo): offered at the kernels, the loss unchanged', () => {
    const { plan, results } = whatIfs({ [LF]: LF_TEXT.replace('stage: sft', 'stage: dpo') }, LF, 'training.ligerKernels');
    assert.notEqual(plan.training.lossFusion, 'liger');
    assert.ok(plan.training.ligerKernels);
    assert.equal(results.length, 1);
    assert.match(results[0].text, /^enable_liger_kernel: false$/m);
    assert.equal(results[0].edited.training.ligerKernels, undefined);
    assert.deepEqual(figures(results[0].plan), figures(results[0].edited));
  });

  test('LLaMA-Factory SFT: offered at the fused loss', () => {
    const { results } = whatIfs({ [LF]: LF_TEXT }, LF, 'training.lossFusion');
    assert.equal(results.length, 1);
    assert.match(results[0].text, /^enable_liger_kernel: false$/m);
    assert.deepEqual(figures(results[0].plan), figures(results[0].edited));
  });

  test('Axolotl: one key per kernel, so turning the fused loss off leaves the others on: not offered as "off"', () => {
    const { plan, results } = whatIfs({ [AX]: AX_TEXT }, AX, 'training.lossFusion');
    assert.equal(plan.training.lossFusion, 'liger');
    assert.equal(results.length, 0);
  });
});
