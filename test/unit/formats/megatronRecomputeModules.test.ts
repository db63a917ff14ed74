/**
 * `--recompute-modules` and Megatron-Bridge's `recompute_modules` read into the plan, with Megatron-LM's own start-up
 * checks (megatron/core/transformer/transformer_config.py `__post_init__` at d98e8a64) as diagnostics at the value.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';

const SCRIPT = (extra: string) => `#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --num-layers 4 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 --micro-batch-size 1 --global-batch-size 8 --bf16 \\
    --num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 512 \\
    ${extra}
`;

describe('Megatron selective recomputation modules', () => {
  before(async () => { await initFormats(); });

  test('a launch line\'s list of words, read with the granularity', () => {
    const g = parseConfig('/ws/r.sh', SCRIPT('--moe-grouped-gemm --recompute-granularity selective --recompute-modules layernorm moe_act'));
    assert.equal(g.facts['training.recomputeModules']?.value, 'layernorm,moe_act');
    assert.equal(g.facts['training.recompute']?.value, 'selective');
    assert.equal(g.diagnostics.filter((d) => /recompute/.test(d.code ?? '') || /--recompute-modules/.test(d.message)).length, 0);
  });

  test('names Megatron refuses or ShardLens does not model, and modules without what they need, are said at the value', () => {
    const text = SCRIPT('--recompute-granularity selective --recompute-modules moe_act bogus mhc');
    const g = parseConfig('/ws/r.sh', text);
    assert.equal(g.facts['training.recomputeModules']?.value, 'moe_act');
    const bad = g.diagnostics.find((d) => d.code === 'invalid-value');
    assert.match(bad?.message ?? '', /bogus is not a module Megatron recomputes/);
    assert.equal(bad?.range.start.line, 4);
    assert.equal(bad?.range.start.character, text.split('\n')[4].indexOf('moe_act'));
    assert.match(g.diagnostics.find((d) => d.code === 'unmodelled-value')?.message ?? '', /mhc .* is not modelled/);
    assert.match(g.diagnostics.find((d) => d.code === 'megatron-recompute-module')?.message ?? '', /moe_act needs grouped GEMM experts \(--moe-grouped-gemm\)/);
  });

  test('without selective recomputation the list is read but said to apply to nothing', () => {
    const g = parseConfig('/ws/r.sh', SCRIPT('--recompute-granularity full --recompute-modules mlp'));
    assert.match(g.diagnostics.find((d) => d.code === 'recompute-modules-ignored')?.message ?? '', /selective recomputation only .* full recomputation reruns whole layers/);
  });

  test('a Megatron-Bridge override\'s YAML list, and an empty one (no module: nothing recomputed)', () => {
    const yaml = (list: string) => `model:\n  recompute_granularity: selective\n  recompute_modules: ${list}\n  multi_latent_attention: true\ntrain:\n  train_iters: 100\n  micro_batch_size: 1\n  global_batch_size: 8\n`;
    const g = parseConfig('/ws/deepseek_v3_override.yaml', yaml('[mla_up_proj]'));
    assert.equal(g.facts['training.recomputeModules']?.value, 'mla_up_proj');
    assert.equal(parseConfig('/ws/deepseek_v3_override.yaml', yaml('[]')).facts['training.recomputeModules']?.value, '');
  });
});

describe('Megatron recomputation modules through other trainers\' Megatron actors', () => {
  before(async () => { await initFormats(); });

  test('verl: the override_transformer_config list on a launch line and in its YAML', () => {
    const line = 'python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 '
      + '+actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity=selective '
      + '+actor_rollout_ref.actor.megatron.override_transformer_config.recompute_modules=[core_attn,mlp,nope]\n';
    const g = parseConfig('/ws/run_verl.sh', line);
    assert.equal(g.facts['training.recomputeModules']?.value, 'core_attn,mlp');
    assert.match(g.diagnostics.find((d) => d.code === 'invalid-value')?.message ?? '', /nope is not a module Megatron recomputes/);
    const yaml = 'actor_rollout_ref:\n  actor:\n    strategy: megatron\n    megatron:\n      tensor_model_parallel_size: 2\n      override_transformer_config:\n        recompute_granularity: selective\n        recompute_modules: [moe_act, layernorm]\n';
    assert.equal(parseConfig('/ws/ppo_megatron_trainer.yaml', yaml).facts['training.recomputeModules']?.value, 'moe_act,layernorm');
  });

  test('NeMo-RL: policy.megatron_cfg.recompute_modules, a list or null (Megatron\'s default)', () => {
    const cfg = (mods: string) => `policy:\n  model_name: Qwen/Qwen2.5-1.5B\n  train_global_batch_size: 32\n  train_micro_batch_size: 1\n  max_total_sequence_length: 4096\n  megatron_cfg:\n    enabled: true\n    activation_checkpointing: true\n    recompute_granularity: selective\n    recompute_modules: ${mods}\n    tensor_model_parallel_size: 1\n`;
    assert.equal(parseConfig('/ws/grpo.yaml', cfg('[moe, layernorm]')).facts['training.recomputeModules']?.value, 'moe,layernorm');
    assert.equal(parseConfig('/ws/grpo.yaml', cfg('null')).facts['training.recomputeModules'], undefined);
  });
});
