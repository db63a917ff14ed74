/**
 * One test per quick fix: the action is offered for its diagnostic, its title states the predicted change, and
 * applying its edit gives exactly the expected text (formatting kept).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { applyEdits } from '../../server/features/edits';
import type { CodeAction } from 'vscode-languageserver';
import { startClient, type Client } from './harness';

const fixture = (name: string) => readFileSync(`test/server/fixtures/${name}`, 'utf8');

let c: Client;
before(async () => {
  c = await startClient({ model: 'llama-2-7b' });
});
after(() => c.dispose());

let n = 0;
async function actionsFor(name: string, text: string, code: string): Promise<{ uri: string; actions: CodeAction[] }> {
  const uri = `file:///ws/q${n++}/${name}`;
  const d = c.diagnostics(uri);
  await c.open(uri, text);
  const diags = (await d).filter((x) => x.code === code);
  assert.ok(diags.length, `no ${code} diagnostic`);
  return { uri, actions: await c.actions(uri, diags) };
}

interface FixCase {
  readonly name: string;
  readonly file: string;
  readonly text: string;
  readonly code: string;
  /** The title must match (it states the change and the predicted effect). */
  readonly title: RegExp;
  /** [before, after] replacements that turn `text` into the expected result. */
  readonly edits: readonly (readonly [string, string])[];
}

// Llama 2 7B on 8 × 80 GB: replicated mixed-precision Adam needs 16Ψ ≈ 108 GB per GPU (ZeRO paper §3), so
// stage 0 cannot fit; a micro batch of 16 × 2048 tokens also needs far more than 80 GB of activations.
const DS_BIG = '{\n  "train_micro_batch_size_per_gpu": 16,\n  "gradient_accumulation_steps": 1,\n  "zero_optimization": {\n    "stage": 0\n  }\n}\n';
const SCRIPT_BIG = fixture('pretrain_llama.sh').replace('MICRO_BATCH_SIZE=1', 'MICRO_BATCH_SIZE=4');
const TITAN_NO_AC = fixture('llama3_8b.toml').replace('mode = "selective"', 'mode = "none"');
const AXOLOTL_NO_GC = fixture('axolotl.yaml').replace('gradient_checkpointing: true', 'gradient_checkpointing: false').replace('micro_batch_size: 2', 'micro_batch_size: 16').replace(/^deepspeed:.*\n/m, '');
const DS_BATCH = '{\n  "train_batch_size": 100,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 8,\n  "zero_optimization": { "stage": 2 }\n}\n';
const DS_BATCH_WHOLE = '{\n  "train_batch_size": 512,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 8,\n  "zero_optimization": { "stage": 2 }\n}\n';
// torchtune on one 80 GB GPU: Llama 3.1 8B in bf16 with AdamW holds 2 + 2 + 4 bytes per weight ≈ 64 GB, and the
// checkpointed inputs of 32 layers at 8 × 8,192 tokens (b·s·h·2 bytes each) ≈ 17 GB more; offloading keeps 5 of them.
const TUNE_BIG = ['model:', '  _component_: torchtune.models.llama3_1.llama3_1_8b', 'tokenizer:', '  _component_: torchtune.models.llama3.llama3_tokenizer',
  '  max_seq_len: 8192', 'batch_size: 8', 'gradient_accumulation_steps: 1', 'dtype: bf16', 'optimizer:', '  _component_: torch.optim.AdamW',
  'loss:', '  _component_: torchtune.modules.loss.LinearCrossEntropyLoss', 'clip_grad_norm: null', 'optimizer_in_bwd: False',
  'enable_activation_checkpointing: True', 'enable_activation_offloading: False', ''].join('\n');
const TUNE_FP32 = TUNE_BIG.replace('batch_size: 8', 'batch_size: 1').replace('max_seq_len: 8192', 'max_seq_len: 2048').replace('dtype: bf16', 'dtype: fp32');
const DELTA = /\(−[\d.]+ [GM]iB per GPU → [\d.]+ GiB/;
const AXOLOTL_FSDP2 = fixture('axolotl.yaml').replace(/^deepspeed:.*\n/m, 'fsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\n');
// torch.optim.AdamW without fused=True steps with foreach, one more state at the step (torch/optim/adam.py): Llama 3.2
// 3B in bf16 with checkpointing on one GPU peaks there (2 + 2 + 4 + 2 bytes per weight), fused at the backward's end.
const TUNE_STEP = ['model:', '  _component_: torchtune.models.llama3_2.llama3_2_3b', 'batch_size: 1', 'dtype: bf16', 'enable_activation_checkpointing: True',
  'tokenizer:', '  max_seq_len: 1024', 'optimizer:', '  _component_: torch.optim.AdamW', '  lr: 2e-5', ''].join('\n');

const CASES: readonly FixCase[] = [
  {
    // Hugging Face's adamw_torch is torch.optim.AdamW as constructed; adamw_torch_fused passes fused=True.
    name: 'step the optimizer fused (adamw_torch → adamw_torch_fused)', file: 'axolotl.yaml',
    text: fixture('axolotl.yaml').replace('optimizer: adamw_torch_fused', 'optimizer: adamw_torch').replace('sequence_len: 4096', 'sequence_len: 1024').replace('micro_batch_size: 2', 'micro_batch_size: 1').replace(/^deepspeed:.*\n/m, ''),
    code: 'foreach-step-peak', title: /^Step the optimizer fused \(−/, edits: [['optimizer: adamw_torch\n', 'optimizer: adamw_torch_fused\n']],
  },
  {
    name: 'step the optimizer fused (a fused line under torchtune\'s optimizer)', file: '3B_full_single_device.yaml', text: TUNE_STEP, code: 'foreach-step-peak',
    title: /^Step the optimizer fused \(−[\d.]+ GiB per GPU → [\d.]+ GiB\)$/, edits: [['  _component_: torch.optim.AdamW\n', '  _component_: torch.optim.AdamW\n  fused: True\n']],
  },
  {
    name: 'step the optimizer fused (torchtune\'s fused flag turned on)', file: '3B_full_single_device.yaml', text: TUNE_STEP.replace('  lr: 2e-5', '  lr: 2e-5\n  fused: False'), code: 'foreach-step-peak',
    title: /^Step the optimizer fused \(−/, edits: [['fused: False', 'fused: True']],
  },
  {
    // The Trainer runs every micro-batch but the last under accelerator.no_sync, where FSDP2 keeps each gradient
    // unsharded; accelerator_config.gradient_accumulation_kwargs.sync_each_batch makes it reduce in every micro-batch.
    name: 'reduce in every micro-batch (accelerator_config added to an Axolotl FSDP2 file)', file: 'axolotl.yaml', text: AXOLOTL_FSDP2, code: 'no-sync-gradients',
    // A reduce-scatter in every micro-batch instead of one per step: the step can only get longer.
    title: /^Reduce gradients in every micro-batch \(−[\d.]+ GiB per GPU → [\d.]+ GiB, step \+[\d.]+ %\)$/,
    edits: [['  reshard_after_forward: true\n', '  reshard_after_forward: true\naccelerator_config:\n  gradient_accumulation_kwargs:\n    sync_each_batch: true\n']],
  },
  { name: 'raise the ZeRO stage', file: 'ds_config.json', text: DS_BIG, code: 'does-not-fit', title: /^Raise ZeRO stage 0 → 1 \(−/, edits: [['"stage": 0', '"stage": 1']] },
  {
    name: 'enable optimizer offload (inserted with the file\'s indentation)', file: 'ds_config.json', text: DS_BIG, code: 'does-not-fit',
    title: /^Offload optimizer states: none → cpu \(−/, edits: [['"stage": 0\n', '"stage": 0,\n    "offload_optimizer": {\n      "device": "cpu"\n    }\n']],
  },
  {
    name: 'lower the micro batch, raise accumulation (global batch kept)', file: 'ds_config.json', text: DS_BIG, code: 'does-not-fit',
    title: /^Lower micro batch 16 → 8 \(accumulation 1 → 2\)/, edits: [['"train_micro_batch_size_per_gpu": 16', '"train_micro_batch_size_per_gpu": 8'], ['"gradient_accumulation_steps": 1', '"gradient_accumulation_steps": 2']],
  },
  { name: 'raise TP (shell default kept)', file: 'pretrain.sh', text: SCRIPT_BIG, code: 'does-not-fit', title: /^Raise TP 2 → 4 \(−/, edits: [['TP_SIZE=${TP_SIZE:-2}', 'TP_SIZE=${TP_SIZE:-4}']] },
  { name: 'raise PP', file: 'pretrain.sh', text: SCRIPT_BIG, code: 'does-not-fit', title: /^Raise PP 2 → 4 \(−/, edits: [['PP_SIZE=2', 'PP_SIZE=4']] },
  {
    // Megatron arguments.py: full recomputation of every layer is --recompute-granularity full with a uniform method.
    name: 'enable recomputation (Megatron flag inserted in the same array)', file: 'pretrain.sh', text: SCRIPT_BIG, code: 'does-not-fit',
    title: /^Enable recomputation: none → full \(−/,
    edits: [['    --micro-batch-size $MICRO_BATCH_SIZE\n', '    --micro-batch-size $MICRO_BATCH_SIZE\n    --recompute-granularity full --recompute-method uniform --recompute-num-layers 1\n']],
  },
  { name: 'enable full recomputation (TOML)', file: 'llama3_8b.toml', text: TITAN_NO_AC, code: 'does-not-fit', title: /^Enable recomputation: none → full \(−/, edits: [['mode = "none"', 'mode = "full"']] },
  { name: 'enable recomputation (YAML boolean)', file: 'axolotl.yaml', text: AXOLOTL_NO_GC, code: 'does-not-fit', title: /^Enable recomputation: none → full \(−/, edits: [['gradient_checkpointing: false', 'gradient_checkpointing: true']] },
  {
    name: 'turn on activation offloading (torchtune, the file\'s True/False kept)', file: '8B_full_single_device.yaml', text: TUNE_BIG, code: 'does-not-fit',
    title: /^Turn on activation offloading \(−/, edits: [['enable_activation_offloading: False', 'enable_activation_offloading: True']],
  },
  // In fp32 the states alone are 4 + 4 + 8 bytes per weight ≈ 128 GB, and the peak is at the optimizer step with every
  // gradient held; in the backward torchtune holds one weight's gradient at a time (optimizer_in_bwd).
  { name: 'turn on the optimizer in the backward (torchtune)', file: '8B_full_single_device.yaml', text: TUNE_FP32, code: 'does-not-fit', title: /^Turn on optimizer in the backward \(−/, edits: [['optimizer_in_bwd: False', 'optimizer_in_bwd: True']] },
  {
    // Megatron ties the output layer unless --untie-embeddings-and-output-weights (megatron/training/arguments.py):
    // untying Llama 3 8B's head adds vocabulary × hidden = 128,256 × 4,096 weights, so the fix costs memory (+).
    name: 'untie the output layer of a released shape (Megatron flag on a line of its own)', file: 'pretrain_llama3.sh', text: fixture('pretrain_llama3_tied.sh'),
    code: 'tied-head-untied-shape', title: /^Untie the output layer, as the released model has it \(\+[\d.]+ [GM]iB per GPU → [\d.]+ GiB\)$/,
    edits: [['--micro-batch-size 1 --global-batch-size 128 \\\n', '--micro-batch-size 1 --global-batch-size 128 \\\n    --untie-embeddings-and-output-weights \\\n']],
  },
  // DeepSpeed runtime/config.py: train_batch_size = micro × accumulation × world; 100 is not a multiple of 4 × 8.
  { name: 'repair the batch identity (global batch)', file: 'ds_config.json', text: DS_BATCH, code: 'batch-identity', title: /^Set global batch to 256 \(4 × 8 × 8 GPUs\)$/, edits: [['"train_batch_size": 100', '"train_batch_size": 256']] },
  // 512 / (4 × 8 GPUs) = 16 whole accumulation steps.
  { name: 'repair the batch identity (accumulation)', file: 'ds_config.json', text: DS_BATCH_WHOLE, code: 'batch-identity', title: /^Set gradient accumulation to 16 \(512 = 4 × 16 × 8 GPUs\)$/, edits: [['"gradient_accumulation_steps": 8', '"gradient_accumulation_steps": 16']] },
];

describe('quick fixes', () => {
  for (const k of CASES) {
    test(k.name, async () => {
      const { uri, actions } = await actionsFor(k.file, k.text, k.code);
      const a = actions.find((x) => k.title.test(x.title));
      assert.ok(a, `no action matching ${k.title}; got ${actions.map((x) => x.title).join(' | ')}`);
      if (k.code === 'does-not-fit') assert.match(a.title, DELTA);
      let expected = k.text;
      for (const [from, to] of k.edits) {
        assert.ok(expected.includes(from), `fixture lacks ${from}`);
        expected = expected.replace(from, to);
      }
      assert.equal(c.applied(uri, a), expected);
    });
  }

  test('use "auto" in the referenced DeepSpeed JSON when the YAML disagrees with it', async () => {
    // transformers integrations/deepspeed.py raises a mismatch error when both set the micro batch differently.
    const dir = resolve('test/server/fixtures');
    const yamlUri = pathToFileURL(`${dir}/mismatch.yaml`).toString();
    const dsUri = pathToFileURL(`${dir}/ds_zero2.json`).toString();
    const yaml = fixture('axolotl.yaml').replace(/^deepspeed:.*$/m, 'deepspeed: ds_zero2.json');
    const d = c.diagnostics(yamlUri);
    await c.open(yamlUri, yaml);
    const diags = (await d).filter((x) => x.code === 'hf-ds-mismatch');
    assert.ok(diags.length, 'no hf-ds-mismatch');
    const actions = await c.actions(yamlUri, diags);
    const a = actions.find((x) => /^Use "auto" for train_micro_batch_size_per_gpu in ds_zero2\.json/.test(x.title));
    assert.ok(a, actions.map((x) => x.title).join(' | '));
    const edits = a.edit?.changes?.[dsUri] ?? [];
    const ds = fixture('ds_zero2.json');
    assert.equal(applyEdits(ds, edits), ds.replace('"train_micro_batch_size_per_gpu": 4', '"train_micro_batch_size_per_gpu": "auto"'));
  });

  test('no fix is offered when it would not lower the peak', async () => {
    const { actions } = await actionsFor('ds_config.json', DS_BIG, 'does-not-fit');
    // Quick fixes only: "Apply layout" refactorings may trade memory for speed (test/server/layoutActions.test.ts);
    // the fixes that set an assumed input change no layout.
    const fits = actions.filter((x) => x.kind === 'quickfix' && !(x.data as { assumption?: string } | undefined)?.assumption);
    assert.ok(fits.length > 0);
    for (const a of fits) assert.match(a.title, /\(−/);
  });
});
