/**
 * Megatron-Bridge's recipes as ShardLens's table reads them (data/megatron-bridge/recipes.json, extracted by
 * scripts/extract-bridge-recipes.py at Megatron-Bridge 067f987df). Expected values are the recipes' own lines:
 * - recipes/llama/h100/llama3.py `llama31_8b_pretrain_2gpu_h100_bf16_config` (line 1020): TP 1, PP 1, CP 2, seq_length
 *   8192, global batch 512, micro batch 1; `from_hf_pretrained("meta-llama/Meta-Llama-3.1-8B")`; recipes/llama/llama3.py
 *   re-exports it as `llama31_8b_pretrain_config`;
 * - `llama31_70b_peft_8gpu_h100_bf16_config` (line 2696): `_peft_common`, LoRA with `peft_cfg.dim = 16`, TP 8, seq 4096;
 * - recipes/qwen/h100/qwen3_next.py `qwen3_next_80b_a3b_sft_16gpu_h100_bf16_config` (line 150): PP 2, EP 8, selective
 *   recomputation of layernorm, moe and moe_act;
 * - `llama3_8b_pretrain_64gpu_h100_bf16_128k_config` (alias `llama3_8b_128k_pretrain_config`): seq_length
 *   `SEQUENCE_LENGTH_128K`, the module's `SEQUENCE_LENGTH_128K: int = 131072` (llama3.py line 36);
 * - recipes/qwen/h100/qwen3_moe.py `qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config` (line 146) starts from the 8-GPU
 *   recipe and sets recomputation back to None, TP 1, PP 1, EP 16, global batch 1,024.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { findBridgeRecipe } from '../../../formats/megatron/bridgeRecipes';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { memoryHost } from './helpers';

/** The plan a file resolves to (the workspace graph the server and the CLI build). */
const loadConfigText = (name: string, text: string) => loadConfigGraph(`/ws/${name}`, memoryHost({ [`/ws/${name}`]: text }), { settings: {} }).resolved;

const launch = (recipe: string, extra = '') =>
  `#!/bin/bash\ntorchrun --nproc_per_node 8 scripts/training/run_recipe.py --recipe ${recipe} ${extra}\n`;

describe('Megatron-Bridge recipes', () => {
  before(async () => { await initFormats(); });

  test('the table has the recipe a legacy name stands for, with its file, line, model and values', () => {
    const r = findBridgeRecipe('llama31_8b_pretrain_config')!;
    assert.equal(r.name, 'llama31_8b_pretrain_2gpu_h100_bf16_config');
    assert.deepEqual([r.file, r.line, r.hf], ['llama/h100/llama3.py', 1020, 'meta-llama/Meta-Llama-3.1-8B']);
    const v = r.values;
    assert.deepEqual([v['model.tensor_model_parallel_size'], v['model.pipeline_model_parallel_size'], v['model.context_parallel_size']], [1, 1, 2]);
    assert.deepEqual([v['model.seq_length'], v['train.global_batch_size'], v['train.micro_batch_size']], [8192, 512, 1]);
    assert.deepEqual(findBridgeRecipe('qwen3_next_80b_a3b_sft_16gpu_h100_bf16_config')!.values['model.recompute_modules'], ['layernorm', 'moe', 'moe_act']);
    assert.equal(findBridgeRecipe('not_a_recipe_config'), undefined);
  });

  test('a value named by a module constant, and a recipe built on another with changes', () => {
    const long = findBridgeRecipe('llama3_8b_128k_pretrain_config')!;
    assert.deepEqual([long.values['model.seq_length'], long.values['dataset.seq_length']], [131_072, 131_072]);
    const moe = findBridgeRecipe('qwen3_30b_a3b_pretrain_config')!;
    assert.equal(moe.name, 'qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config');
    assert.equal(moe.base, 'qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config');
    const v = moe.values;
    assert.deepEqual([v['model.tensor_model_parallel_size'], v['model.expert_model_parallel_size'], v['train.global_batch_size'], v['model.recompute_granularity']], [1, 16, 1024, undefined]);
  });

  test('a launch takes what its overrides leave unset from the recipe, each value naming the recipe\'s line', () => {
    const g = parseConfig('/ws/run.sh', launch('llama31_8b_pretrain_config', 'train.micro_batch_size=2 model.context_parallel_size=4'));
    const f = g.facts;
    // The overrides win; the recipe gives the rest.
    assert.deepEqual([f['training.microBatch']?.value, f['training.microBatch']?.source.kind], [2, 'explicit']);
    assert.deepEqual([f['parallel.cp']?.value, f['parallel.cp']?.source.kind], [4, 'explicit']);
    assert.deepEqual([f['training.seqLen']?.value, f['training.seqLen']?.source.kind], [8192, 'derived']);
    assert.match(f['training.seqLen']?.source.detail ?? '', /llama31_8b_pretrain_2gpu_h100_bf16_config sets --seq-length \(seqLen 8192\) \(megatron\/bridge\/recipes\/llama\/h100\/llama3\.py:1020/);
    assert.equal(f['training.globalBatch']?.value, 512);
    assert.deepEqual([f['parallel.tp']?.value, f['parallel.tp']?.source.kind], [1, 'derived']);
    assert.equal(f['model.preset']?.value, 'meta-llama/Meta-Llama-3.1-8B');
    assert.match(g.diagnostics.find((d) => d.code === 'recipe-values')?.message ?? '', /as ShardLens's table of the recipes reads it/);
  });

  test('a PEFT recipe trains LoRA adapters of its rank; its TP comes from the recipe', () => {
    const f = parseConfig('/ws/run.sh', launch('llama31_70b_peft_config', 'train.global_batch_size=8')).facts;
    assert.deepEqual([f['lora.enabled']?.value, f['lora.rank']?.value, f['parallel.tp']?.value, f['training.seqLen']?.value], [true, 16, 8, 4096]);
  });

  test('Qwen3-Next\'s SFT recipe: its pipeline and expert parallelism and the modules it recomputes', () => {
    const f = parseConfig('/ws/run.sh', launch('qwen3_next_80b_a3b_sft_16gpu_h100_bf16_config')).facts;
    assert.deepEqual([f['parallel.pp']?.value, f['parallel.ep']?.value, f['training.recompute']?.value, f['training.recomputeModules']?.value], [2, 8, 'selective', 'layernorm,moe,moe_act']);
  });

  test('a recipe the table does not have: the assumptions stay, and the info says the table lacks it', () => {
    const g = parseConfig('/ws/run.sh', launch('llama31_8b_pretrain_h100_config'));
    assert.equal(g.facts['parallel.tp']?.source.kind, 'assumed');
    assert.match(g.diagnostics.find((d) => d.code === 'recipe-values')?.message ?? '', /is not in ShardLens's table of the recipes \(Megatron-Bridge 067f987df\) \(near it: [^)]*llama31_8b_pretrain_config/);
  });
});

describe('Megatron-Bridge recipes: the pipeline split and field names', () => {
  before(async () => { await initFormats(); });

  test('the embedding and loss counted as layers once the recipe\'s model is known: Llama 3.1 405B on PP 8 × VPP 2', () => {
    // recipes/llama/h100/llama3.py llama31_405b_pretrain_256gpu_h100_bf16_config: PP 8, virtual stages 2,
    // account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split: (126 + 2)/8 = 16 per rank, the
    // first and last 15 (megatron/core/transformer/transformer_block.py get_num_layers_to_build).
    const plan = loadConfigText('run.sh', launch('llama31_405b_pretrain_config')).plan!;
    assert.deepEqual([plan.parallel.pp, plan.parallel.vpp, plan.parallel.stageLayers], [8, 2, [15, 16, 16, 16, 16, 16, 16, 15]]);
  });

  test('a launch\'s overrides use Megatron\'s spelling of TransformerConfig fields', () => {
    const f = parseConfig('/ws/run.sh', launch('my_recipe_config', 'model.virtual_pipeline_model_parallel_size=2 model.num_moe_experts=8 model.pipeline_model_parallel_size=4')).facts;
    assert.deepEqual([f['parallel.vpp']?.value, f['model.moe.experts']?.value], [2, 8]);
  });
});
