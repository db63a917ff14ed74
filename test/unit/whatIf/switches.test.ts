/**
 * What-ifs of the training loop's on/off switches (torch.compile, activation offloading, the optimizer step in the
 * backward): offered where the file writes the switch, written the way the file spells booleans, re-deriving what the
 * engine derives from the switch, and not offered where the engine would refuse the edited file at start-up. The
 * expected relations come from torchtune's recipes (recipes/full_finetune_single_device.py at 1814feb17, cited per
 * test), not from ShardLens's output; that each what-if equals the edited file read again is the property test's.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats } from '../../../formats/index';
import { literalFor } from '../../../formats/common/edit/keyEdit';
import { whatIfsFor } from '../../../shared/plan/whatIf';
import { whatIfs } from './helpers';

const PATH = '/ws/8B_full_single_device.yaml';

/** A torchtune single-device full fine-tune of Llama 3.1 8B (recipes/configs/llama3_1/8B_full_single_device.yaml). */
function recipe(over: Record<string, string> = {}): Record<string, string> {
  const top: Record<string, string> = {
    batch_size: '2', gradient_accumulation_steps: '1', dtype: 'bf16', clip_grad_norm: 'null', compile: 'False',
    optimizer_in_bwd: 'False', enable_activation_checkpointing: 'True', enable_activation_offloading: 'False', ...over,
  };
  const text = [
    'model:', '  _component_: torchtune.models.llama3_1.llama3_1_8b',
    'tokenizer:', '  _component_: torchtune.models.llama3.llama3_tokenizer', '  max_seq_len: 4096',
    'optimizer:', '  _component_: torch.optim.AdamW', '  lr: 2e-5',
    'loss:', '  _component_: torchtune.modules.loss.LinearCrossEntropyLoss',
    ...Object.entries(top).map(([k, v]) => `${k}: ${v}`), '',
  ].join('\n');
  return { [PATH]: text };
}

describe('what-ifs of on/off switches', () => {
  before(async () => { await initFormats(); });

  test('each switch offers its other setting', () => {
    const { plan } = whatIfs(recipe(), PATH, 'training.compile');
    assert.deepEqual(whatIfsFor(plan, 'training.compile').map((w) => [w.label, w.value]), [['torch.compile off → on', true]]);
    assert.deepEqual(whatIfsFor(plan, 'training.optimizerInBackward').map((w) => w.value), [true]);
    assert.deepEqual(whatIfsFor(plan, 'training.activationOffload').map((w) => w.value), [true]);
  });

  test('optimizer_in_bwd: offered with one micro-batch per step and no clipping, written as the file spells booleans', () => {
    const { plan, results } = whatIfs(recipe(), PATH, 'training.optimizerInBackward');
    assert.equal(plan.training.optimizerInBackward, false);
    assert.equal(results.length, 1);
    assert.match(results[0].text, /^optimizer_in_bwd: True$/m);
    assert.equal(results[0].edited.training.optimizerInBackward, true);
  });

  test('optimizer_in_bwd: not offered where torchtune refuses it (gradient accumulation; clipping)', () => {
    // "Gradient accumulation is not supported with optimizer in bwd" / "Gradient clipping is not supported with
    // optimizer in bwd" (RuntimeError in the recipes' _setup_optimizer checks).
    assert.equal(whatIfs(recipe({ gradient_accumulation_steps: '8' }), PATH, 'training.optimizerInBackward').results.length, 0);
    assert.equal(whatIfs(recipe({ clip_grad_norm: '1.0' }), PATH, 'training.optimizerInBackward').results.length, 0);
  });

  test('enable_activation_offloading: offered only with activation checkpointing on', () => {
    // "enable_activation_offloading should only be True when enable_activation_checkpointing is True" (RuntimeError).
    const on = whatIfs(recipe(), PATH, 'training.activationOffload').results;
    assert.equal(on.length, 1);
    assert.equal(on[0].edited.training.activationOffload, true);
    assert.equal(whatIfs(recipe({ enable_activation_checkpointing: 'False' }), PATH, 'training.activationOffload').results.length, 0);
  });

  test('compile: the what-if compiles the chunked loss too, as the recipe does', () => {
    // With compile True the recipe compiles the loss (training.compile_loss): LinearCrossEntropyLoss runs compiled,
    // chunk by chunk ('chunked'); eager it upcasts each chunk ('chunked-eager').
    const { plan, results } = whatIfs(recipe(), PATH, 'training.compile');
    assert.equal(plan.training.lossFusion, 'chunked-eager');
    assert.equal(results.length, 1);
    assert.equal(results[0].whatIf.overrides['training.lossFusion'], 'chunked');
    assert.equal(results[0].edited.training.lossFusion, 'chunked');
    assert.equal(results[0].plan.training.lossFusion, 'chunked');
  });

  test('torchtitan: [compile] enable flips in place', () => {
    const path = '/ws/llama3_8b.toml';
    const text = ['[model]', 'name = "llama3"', 'flavor = "8B"', '', '[training]', 'local_batch_size = 2', 'seq_len = 8192', '',
      '[parallelism]', 'data_parallel_shard_degree = 8', '', '[compile]', 'enable = false', ''].join('\n');
    const { results } = whatIfs({ [path]: text }, path, 'training.compile');
    assert.equal(results.length, 1);
    assert.match(results[0].text, /^enable = true$/m);
    assert.equal(results[0].edited.training.compile, true);
  });
});

describe('booleans keep the file\'s spelling', () => {
  test('true, True and TRUE', () => {
    assert.equal(literalFor('False', false, true), 'True');
    assert.equal(literalFor('false', false, true), 'true');
    assert.equal(literalFor('TRUE', true, false), 'FALSE');
    assert.equal(literalFor('"false"', false, true), '"true"');
  });
});

describe('the optimizer\'s implementation: written as the file says it', () => {
  before(async () => { await initFormats(); });

  test('torchtune: a fused flag turned on or off', () => {
    // torch.optim.AdamW(fused=False) steps with foreach (torch/optim/adam.py); True asks for the fused kernel.
    const files = recipe();
    files[PATH] = files[PATH].replace('  lr: 2e-5', '  lr: 2e-5\n  fused: False');
    const { plan, results } = whatIfs(files, PATH, 'training.optimizerImpl');
    assert.equal(plan.training.optimizerImpl, 'foreach');
    assert.deepEqual(results.map((r) => r.whatIf.label), ['optimizer step foreach → fused']);
    assert.match(results[0].text, /^ {2}fused: True$/m);
    assert.equal(results[0].edited.training.optimizerImpl, 'fused');
  });

  test('Hugging Face names: adamw_torch and adamw_torch_fused (transformers TrainingArguments optim)', () => {
    const path = '/ws/axolotl.yaml';
    const text = (optim: string) => ['base_model: meta-llama/Llama-3.1-8B', 'sequence_len: 2048', 'micro_batch_size: 1',
      'gradient_accumulation_steps: 4', 'bf16: true', `optimizer: ${optim}`, ''].join('\n');
    const toFused = whatIfs({ [path]: text('adamw_torch') }, path, 'training.optimizerImpl').results;
    assert.equal(toFused.length, 1);
    assert.match(toFused[0].text, /^optimizer: adamw_torch_fused$/m);
    assert.equal(toFused[0].edited.training.optimizerImpl, 'fused');
    const toForeach = whatIfs({ [path]: text('"adamw_torch_fused"') }, path, 'training.optimizerImpl').results;
    assert.match(toForeach[0].text, /^optimizer: "adamw_torch"$/m);
    assert.equal(toForeach[0].edited.training.optimizerImpl, 'foreach');
  });

  test('no what-if for an optimizer that is not torch\'s Adam', () => {
    const files = recipe();
    files[PATH] = files[PATH].replace('torch.optim.AdamW', 'torch.optim.SGD');
    const { plan } = whatIfs(files, PATH, 'training.optimizerImpl');
    assert.deepEqual(whatIfsFor(plan, 'training.optimizerImpl'), []);
  });
});

describe('the gradient sync in every micro-batch (the Trainer\'s sync_each_batch)', () => {
  before(async () => { await initFormats(); });

  test('offered where the file writes it, flipped in place, and read back', () => {
    // transformers trainer.py syncs each micro-batch when accelerator_config.gradient_accumulation_kwargs.sync_each_batch is set.
    const path = '/ws/axolotl.yaml';
    const text = ['base_model: meta-llama/Llama-3.1-8B', 'sequence_len: 2048', 'micro_batch_size: 1', 'gradient_accumulation_steps: 4',
      'bf16: true', 'fsdp_version: 2', 'fsdp_config:', '  reshard_after_forward: true',
      'accelerator_config:', '  gradient_accumulation_kwargs:', '    sync_each_batch: false', ''].join('\n');
    const { plan, results } = whatIfs({ [path]: text }, path, 'training.syncEveryMicroBatch');
    assert.equal(plan.training.syncEveryMicroBatch, false);
    assert.deepEqual(results.map((r) => r.whatIf.label), ['gradient sync in every micro-batch off → on']);
    assert.match(results[0].text, /^ {4}sync_each_batch: true$/m);
    assert.equal(results[0].edited.training.syncEveryMicroBatch, true);
  });
});
