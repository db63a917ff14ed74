/**
 * Megatron-Bridge overrides: the override YAML a recipe script takes with --config-file (examples/recipes/<model>/conf/
 * *_override_example.yaml: model, train, optimizer, scheduler, dist, logger, dataset, rng and ddp sections) and the
 * run_recipe.py launch line (scripts/training/run_recipe.py: --recipe <function>, --hf_path, --peft_scheme lora|dora with
 * LoRA's defaults,
 * Hydra-style section.field=value overrides). What an override leaves out is the recipe's, never Megatron-LM's argparse
 * defaults; a switch set false is off. Recipe names follow megatron.bridge.recipes (llama31_8b_pretrain_config builds
 * Llama 3.1 8B, qwen3_600m_… Qwen3-0.6B, qwen3_1p7b_… Qwen3-1.7B).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { detectFormat, initFormats, parseConfig } from '../../../formats/index';
import { presetOfRecipe } from '../../../formats/megatron/bridge';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { memoryHost } from './helpers';

/** Megatron-Bridge examples/recipes/qwen3_next/conf/qwen3_next_80b_a3b_finetune_override_example.yaml, as published. */
const QWEN3_NEXT_OVERRIDE = `# Example override file for Qwen3-Next 80B-A3B Finetuning

model:
  seq_length: 2048
  cross_entropy_loss_fusion: False

train:
  train_iters: 600
  global_batch_size: 64
  micro_batch_size: 1
  eval_iters: 5

optimizer:
  lr: 0.000005
  min_lr: 0.000005

scheduler:
  lr_warmup_iters: 0

dist:
  use_megatron_fsdp: false
  use_torch_fsdp2: false

logger:
  log_interval: 1

dataset:
  seq_length: 2048

rng:
  seed: 42

ddp:
  grad_reduce_in_fp32: true
`;

const resolved = (path: string, text: string) => loadConfigGraph(path, memoryHost({ [path]: text }), { settings: { worldSize: 8 } }).resolved;

describe('Megatron-Bridge overrides', () => {
  before(async () => { await initFormats(); });

  const names: readonly [string, string | undefined][] = [
    ['llama31_8b_pretrain_config', 'Llama-3.1-8B'],
    ['llama32_1b_sft_config', 'Llama-3.2-1B'],
    ['llama3_70b_peft_config', 'Llama-3-70B'],
    ['qwen25_7b_sft_config', 'Qwen2.5-7B'],
    ['qwen3_600m_sft_128k_config', 'Qwen3-0.6B'],
    ['qwen3_1p7b_pretrain_config', 'Qwen3-1.7B'],
    ['qwen3_30b_a3b_pretrain_config', 'Qwen3-30B-A3B'],
    ['qwen3_moe_30b_a3b_pretrain_override_example', 'Qwen3-30B-A3B'],
    ['qwen3_next_80b_a3b_finetune_override_example', 'Qwen3-Next-80B-A3B'],
    ['deepseek_v3_pretrain_config_gb200', 'DeepSeek-V3'],
    ['gpt_oss_120b_pretrain_64gpu_h100_bf16_config', 'gpt-oss-120b'],
    ['gemma3_1b_pretrain_config', 'Gemma-3-1B'],
    // Models without a bundled preset, and names that are not recipes, name none.
    ['qwen3_vl_8b_peft_config', undefined],
    ['deepseek_v4_flash_pretrain_mxfp8_config', undefined],
    ['my_experiment', undefined],
    // A bare family names no size, so no model: not the family's first preset.
    ['mixtral_config', undefined],
    [`${'a_'.repeat(5000)}8b_config`, undefined],
    ['gpt2_config', undefined],
  ];
  for (const [name, want] of names) {
    const shown = name.length > 60 ? `${name.slice(0, 20)}… (${name.length} characters)` : name;
    test(`the recipe name ${shown} builds ${want ?? 'no bundled model'}`, () => assert.equal(presetOfRecipe(name)?.name, want));
  }

  test('the Qwen3-Next override file: a Megatron YAML, the model its name starts with assumed, false switches off', () => {
    const path = '/ws/conf/qwen3_next_80b_a3b_finetune_override_example.yaml';
    assert.equal(detectFormat(path, QWEN3_NEXT_OVERRIDE), 'megatron-yaml');
    const r = resolved(path, QWEN3_NEXT_OVERRIDE);
    assert.equal(r.plan?.model.name, 'Qwen3-Next-80B-A3B');
    const a = r.assumptions.find((x) => x.path === 'model');
    assert.ok(a && a.setting === 'shardlens.model' && /file's name/.test(a.detail), JSON.stringify(r.assumptions));
    // use_megatron_fsdp: false and use_torch_fsdp2: false leave Megatron's DDP; no FSDP.
    assert.ok(!['fsdp', 'fsdp2'].includes(r.plan?.parallel.sharding.style ?? ''), r.plan?.parallel.sharding.style);
    // What the file leaves out is the recipe's: not "Megatron-LM default: neither --fp16 nor --bf16" (fp32).
    assert.notEqual(r.plan?.training.precision, 'fp32');
    assert.ok(!/Megatron-LM default/.test(r.plan?.sources['training.precision']?.detail ?? ''), r.plan?.sources['training.precision']?.detail);
    assert.ok(parseConfig(path, QWEN3_NEXT_OVERRIDE).diagnostics.some((d) => d.code === 'recipe-values'));
  });

  test('the recipe the file\'s name points to gives what the overrides leave out, each value an assumption naming it', () => {
    // examples/models/qwen/qwen3_next/finetune_qwen3_next_80b_a3b.py runs qwen3_next_80b_a3b_sft_config with this file;
    // its recipe (recipes/qwen/h100/qwen3_next.py:150) sets PP 2, EP 8 and selective recomputation.
    const r = resolved('/ws/conf/qwen3_next_80b_a3b_finetune_override_example.yaml', QWEN3_NEXT_OVERRIDE);
    assert.deepEqual([r.plan?.parallel.pp, r.plan?.parallel.ep, r.plan?.training.recompute, r.plan?.training.precision], [2, 8, 'selective', 'bf16-mixed']);
    const said = (path: string) => r.assumptions.find((a) => a.path === path)?.detail ?? '';
    assert.match(said('parallel.pp'), /^recipe qwen3_next_80b_a3b_sft_16gpu_h100_bf16_config, which the file's name points to \(qwen\/h100\/qwen3_next\.py:150\): --pipeline-model-parallel-size \(pp 2\)/);
  });

  test('what a recipe sets and the overrides do not is assumed as the recipes set it, each listed with its field', () => {
    // megatron/bridge/recipes/utils/optimizer_utils.py distributed_fused_adam_with_cosine_annealing: precision
    // "bf16-mixed", use_distributed_optimizer=True; TP, PP and CP are each recipe's own (assumed 1). A file whose name
    // points to no recipe of the table.
    const r = resolved('/ws/conf/my_run_override.yaml', QWEN3_NEXT_OVERRIDE);
    const said = (path: string) => r.assumptions.find((a) => a.path === path)?.detail ?? '';
    assert.deepEqual([r.plan?.training.precision, r.plan?.parallel.sharding.style, r.plan?.parallel.sharding.stage], ['bf16-mixed', 'megatron-distopt', 1]);
    assert.match(said('training.precision'), /write mixed_precision=/);
    assert.match(said('parallel.sharding.style'), /write ddp\.use_distributed_optimizer=/);
    for (const [path, field] of [['parallel.tp', 'tensor_model'], ['parallel.pp', 'pipeline_model'], ['parallel.cp', 'context']] as const) {
      assert.match(said(path), new RegExp(`write model\\.${field}_parallel_size=`), path);
    }
    // A file that states them decides: mixed_precision names an FP8 recipe, the distributed optimizer is off, TP 2.
    const stated = resolved('/ws/o.yaml', 'mixed_precision: bf16_with_fp8_delayed_scaling_mixed\nmodel:\n  tensor_model_parallel_size: 2\ntrain:\n  train_iters: 10\n  global_batch_size: 8\n  micro_batch_size: 1\nddp:\n  use_distributed_optimizer: false\n');
    assert.deepEqual([stated.plan?.training.precision, stated.plan?.parallel.sharding.style === 'megatron-distopt', stated.plan?.parallel.tp], ['fp8-mixed', false, 2]);
    assert.ok(!stated.assumptions.some((a) => ['training.precision', 'parallel.sharding.style', 'parallel.tp'].includes(a.path)), JSON.stringify(stated.assumptions));
  });

  test('older overrides (model_config, train_config) and MixedPrecisionConfig\'s dtype are read the same way', () => {
    // examples/llm/llama3_8b/conf/llama3_8b_pretrain_override_example.yaml (older releases' *_config sections).
    const old = resolved('/ws/llama3_8b_pretrain_override_example.yaml', 'model_config:\n  tensor_model_parallel_size: 2\n  pipeline_model_parallel_size: 2\ntrain_config:\n  train_iters: 500000\n  global_batch_size: 256\n  micro_batch_size: 4\n');
    assert.deepEqual([old.plan?.model.name, old.plan?.parallel.tp, old.plan?.parallel.pp, old.plan?.parallel.sharding.style], ['Llama-3-8B', 2, 2, 'megatron-distopt']);
    // examples/recipes/qwen3_moe/conf/qwen3_moe_30b_a3b_pretrain_override_example.yaml: mixed_precision: {dtype: bf16}.
    const moe = resolved('/ws/qwen3_moe_30b_a3b_pretrain_override_example.yaml', 'model:\n  tensor_model_parallel_size: 4\n  expert_model_parallel_size: 4\ntrain:\n  train_iters: 10\n  global_batch_size: 256\n  micro_batch_size: 2\nmixed_precision:\n  dtype: bf16\n');
    assert.equal(moe.plan?.model.name, 'Qwen3-30B-A3B');
    assert.equal(moe.plan?.sources['training.precision']?.kind, 'explicit');
  });

  test('an override of only model and train sections is read; a file without Megatron names is not', () => {
    const text = 'model:\n  tensor_model_parallel_size: 2\n  seq_length: 4096\ntrain:\n  global_batch_size: 256\n  micro_batch_size: 1\n';
    assert.equal(detectFormat('/ws/llama3_8b_override.yaml', text), 'megatron-yaml');
    const r = resolved('/ws/llama3_8b_override.yaml', text);
    assert.deepEqual([r.plan?.model.name, r.plan?.parallel.tp, r.plan?.parallel.dp], ['Llama-3-8B', 2, 4]);
    assert.equal(detectFormat('/ws/run.yaml', 'model:\n  name: gpt2\ntrain:\n  batch_size: 8\n'), undefined);
  });

  test('a file that names the model keeps it: no guess from its name', () => {
    const text = `model:\n  num_layers: 4\n  hidden_size: 512\n  num_attention_heads: 8\n  ffn_hidden_size: 2048\n  seq_length: 1024\ntrain:\n  train_iters: 10\n  global_batch_size: 8\n  micro_batch_size: 1\n`;
    const r = resolved('/ws/llama3_8b_override.yaml', text);
    assert.equal(r.plan?.model.layers, 4);
    assert.ok(!r.assumptions.some((a) => a.path === 'model'), JSON.stringify(r.assumptions));
  });

  test('a Bridge YAML switch set false is off, set true on (ddp.use_distributed_optimizer)', () => {
    const text = (on: boolean) => `model:\n  tensor_model_parallel_size: 1\ntrain:\n  train_iters: 10\n  global_batch_size: 8\n  micro_batch_size: 1\nddp:\n  use_distributed_optimizer: ${on}\n`;
    assert.equal(resolved('/ws/o.yaml', text(true)).plan?.parallel.sharding.style, 'megatron-distopt');
    assert.notEqual(resolved('/ws/o.yaml', text(false)).plan?.parallel.sharding.style, 'megatron-distopt');
  });

  test('a batch that does not divide over a DP resting on assumed TP, PP and CP is a warning that says so', () => {
    // Bridge's examples/training_features/long_context/qwen3_600m_sft_128k.sh: its recipe sets CP 8 (the script's
    // comment), which the line does not. The table has that recipe (qwen3_600m_sft_8gpu_h100_bf16_128k_config): DP 1.
    const line = (extra: string, recipe = 'qwen3_600m_sft_128k_config') => `#!/bin/bash\ntorchrun --nproc_per_node=8 scripts/training/run_recipe.py --recipe ${recipe} ${extra} train.global_batch_size=2 train.micro_batch_size=1\n`;
    const known = resolved('/ws/run.sh', line(''));
    assert.deepEqual([known.plan?.parallel.cp, known.plan?.parallel.dp], [8, 1]);
    assert.ok(!known.problems.some((x) => x.code === 'batch-identity'));
    // A recipe the table lacks: DP 8 from the assumed TP, PP and CP of 1 does not divide global batch 2.
    const p = resolved('/ws/run.sh', line('', 'qwen3_600m_sft_256k_config')).problems.find((x) => x.code === 'batch-identity');
    assert.equal(p?.severity, 'warning');
    assert.match(p?.message ?? '', /with the assumed TP 1, PP 1 and CP 1: set what you run/);
    // Stated, the same layout divides (DP 1 at CP 8) and nothing is said.
    assert.ok(!resolved('/ws/run.sh', line('model.context_parallel_size=8', 'qwen3_600m_sft_256k_config')).problems.some((x) => x.code === 'batch-identity'));
  });

  test('run_recipe.py: --recipe names the model, --hf_path wins over it, --peft_scheme lora trains adapters', () => {
    const line = (extra: string) => `#!/bin/bash\ntorchrun --nproc_per_node 8 scripts/training/run_recipe.py --recipe qwen25_7b_sft_config ${extra} train.micro_batch_size=1 train.global_batch_size=64\n`;
    const recipe = resolved('/ws/run.sh', line(''));
    assert.equal(recipe.plan?.model.name, 'Qwen2.5-7B');
    assert.match(recipe.plan?.sources.model?.detail ?? '', /Qwen2\.5-7B/);
    const hf = resolved('/ws/run.sh', line('--hf_path Qwen/Qwen3-8B --peft_scheme lora'));
    assert.equal(hf.plan?.model.name, 'Qwen3-8B');
    // Megatron-Bridge's LoRA defaults (src/megatron/bridge/peft/lora.py): dim 32, dropout 0, linear_qkv, linear_proj,
    // linear_fc1 and linear_fc2, i.e. every projection.
    assert.deepEqual([hf.plan?.lora?.rank, hf.plan?.lora?.dropout, [...(hf.plan?.lora?.targets ?? [])].sort().join(',')], [32, 0, 'down,gate,k,o,q,up,v']);
    assert.equal(resolved('/ws/run.sh', line('--peft_scheme dora')).plan?.lora?.dora, true);
  });
});
