// torch's foreach Adam/AdamW at the optimizer step: `exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)`
// (torch/optim/adam.py _multi_tensor_adam) is one list as large as a state, made beside every weight, gradient and state.
// torch.optim picks foreach on CUDA whenever neither `fused` nor `foreach` is passed (same file: "we default to foreach").
// Expected bytes come from the models' published parameter counts; the readers' expectations from the frameworks'
// own option names.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../../cli/load';
import { estimateMemory } from '../../../shared/memory/estimate';
import type { Plan } from '../../../shared/plan/types';
import { planOfText as written } from './helpers';

const root = join(__dirname, '..', '..', '..');
const planOfText = (name: string, text: string, gpus = '1xA100-80GB'): Promise<Plan> => written(name, text, gpus);
const tinyFull = readFileSync(join(root, 'data/calibration/checks/litgpt2409/tiny-llama_full.yaml'), 'utf8');
const allocatedOf = (plan: Plan) => {
  const s = estimateMemory(plan).stages[0];
  return s.peakAllocatedBytes - (s.terms.cudaContext?.bytes ?? 0);
};

describe("torch's foreach Adam step holds one more state", () => {
  test('a one-GPU bf16 full fine-tune whose step is its peak: 2Ψ weights + 2Ψ gradients + 4Ψ states + 2Ψ', async () => {
    // LitGPT's TinyLlama full fine-tune (torch.optim.AdamW, bf16-true), one micro-batch of 1 × 128 tokens so that the
    // activations stay below the step's list. TinyLlama-1.1B has 1,100,048,384 parameters (its model card).
    const text = tinyFull.replace(/micro_batch_size: 4/, 'micro_batch_size: 1').replace(/global_batch_size: 32/, 'global_batch_size: 1')
      .replace(/max_seq_length: 512/, 'max_seq_length: 128');
    const plan = await planOfText('tiny_step.yaml', text);
    assert.equal(plan.training.optimizerImpl, 'foreach');
    const psi = 1_100_048_384;
    const expected = (2 + 2 + 4 + 2) * psi;
    const got = allocatedOf(plan);
    assert.ok(Math.abs(got - expected) < 0.001 * expected, `${got} vs ${expected}`);
    assert.equal(estimateMemory(plan).stages[0].peakMoment, 'optimizer step');
    // Stepped fused, the peak is the end of the backward: weights, gradients and states only.
    const fused = { ...plan, training: { ...plan.training, optimizerImpl: 'fused' as const } };
    assert.ok(Math.abs(allocatedOf(fused) - 8 * psi) < 0.001 * 8 * psi, `${allocatedOf(fused)} vs ${8 * psi}`);
  });

  test("FSDP2: the step's list is one fp32 state of the shard (torch's optimizer category peaks at 1.5 states)", async () => {
    // torchtitan's Llama 3.1 8B on 8 GPUs stepped with `optimizer.implementation = "foreach"`: fp32 AdamW states
    // 8Ψ/8, the list 4Ψ/8 (Ψ = 8,030,261,248).
    const plan = (await loadConfig(join(root, 'data/calibration/measured-runs/tt24_t2_8b_fsdp8_cp1.toml'), { gpus: '8xH100' })).resolved.plan!;
    const withImpl = { ...plan, training: { ...plan.training, optimizerImpl: 'foreach' as const } };
    const psi = 8_030_261_248;
    const optimizer = estimateMemory(withImpl).stages[0].peaks!.optimizer;
    assert.ok(Math.abs(optimizer - (12 * psi) / 8) < 0.001 * optimizer, `${optimizer} vs ${(12 * psi) / 8}`);
  });
});

describe('the foreach step as the peak is said at the optimizer', () => {
  // torchtune's Llama 3.2 3B (3,212,749,824 parameters, its model card) in bf16 with activation checkpointing on one
  // GPU: the step's list is one bf16 state, 2 bytes per parameter = 5.98 GiB, and the step is the peak.
  const recipe = (fused: string) => 'model:\n  _component_: torchtune.models.llama3_2.llama3_2_3b\nbatch_size: 1\ndtype: bf16\n'
    + `enable_activation_checkpointing: True\ntokenizer:\n  max_seq_len: 1024\noptimizer:\n  _component_: torch.optim.AdamW\n${fused}`;
  test('an information names the list and the fused peak; a fused step has none', async () => {
    const plan = await planOfText('tune_step.yaml', recipe(''));
    const m = estimateMemory(plan);
    const p = m.problems.find((x) => x.code === 'foreach-step-peak');
    assert.ok(p, 'no foreach-step-peak');
    assert.equal(p.severity, 'info');
    assert.match(p.message, /one 5\.98 GiB list/);
    const fused = estimateMemory(await planOfText('tune_fused.yaml', recipe('  fused: True\n')));
    assert.equal(fused.problems.find((x) => x.code === 'foreach-step-peak'), undefined);
    // The fused peak the message names is the fused file's own.
    const said = /would peak at ([\d.]+) GiB/.exec(p.message)!;
    assert.equal(Number(said[1]), Number((fused.stages[0].peakReservedBytes / 2 ** 30).toFixed(1)));
    assert.ok(fused.stages[0].peakReservedBytes < m.stages[0].peakReservedBytes);
  });
});

describe('which implementation a file steps with', () => {
  const impl = async (name: string, text: string) => (await planOfText(name, text)).training.optimizerImpl;
  const tune = (opt: string) => `model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\nbatch_size: 2\ndtype: bf16\noptimizer:\n${opt}`;

  test('torchtune: torch.optim.AdamW is foreach unless `fused: True`', async () => {
    assert.equal(await impl('t1.yaml', tune('  _component_: torch.optim.AdamW\n  lr: 2e-5\n')), 'foreach');
    assert.equal(await impl('t2.yaml', tune('  _component_: torch.optim.AdamW\n  fused: True\n')), 'fused');
    assert.equal(await impl('t3.yaml', tune('  _component_: torch.optim.AdamW\n  fused: False\n')), 'foreach');
    // bitsandbytes' paged 8-bit AdamW is not torch.optim's: no implementation is read.
    assert.equal(await impl('t4.yaml', tune('  _component_: bitsandbytes.optim.PagedAdamW8bit\n')), undefined);
  });

  test('Hugging Face names: adamw_torch is foreach, adamw_torch_fused fused (axolotl `optimizer`, LLaMA-Factory `optim`)', async () => {
    const ax = (o: string) => `base_model: meta-llama/Llama-3.2-1B\nsequence_len: 2048\nmicro_batch_size: 1\nbf16: true\noptimizer: ${o}\n`;
    assert.equal(await impl('ax1.yml', ax('adamw_torch')), 'foreach');
    assert.equal(await impl('ax2.yml', ax('adamw_torch_fused')), 'fused');
    assert.equal(await impl('ax3.yml', ax('adamw_bnb_8bit')), undefined);
  });

  test('LitGPT: a bare AdamW is torch.optim.AdamW (foreach); under quantize it is bitsandbytes\' paged AdamW', async () => {
    assert.equal(await impl('lit1.yaml', tinyFull), 'foreach');
    const q = tinyFull.replace(/^precision: bf16-true$/m, 'precision: bf16-true\nquantize: bnb.nf4');
    assert.equal(await impl('lit2.yaml', q), undefined);
  });
});
