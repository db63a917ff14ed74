/**
 * Keys that look like training layout but are not: a rollout or generation engine's TP (verl, OpenRLHF,
 * DeepSpeed-Chat's hybrid engine), `pretraining_tp` inside a model block (nanotron), an evaluation-only block (NeMo
 * `inference:`), a PEFT block the chosen method does not use, and an explicit `bf16: false`. Expected values are
 * what the trainers run, from their sources: verl/workers/fsdp_workers.py (the actor is FSDP, the rollout TP only
 * shards vLLM), openrlhf/cli/train_ppo_ray.py (vLLM engines are separate), nanotron/config (parallelism.tp),
 * NeMo megatron_gpt_config.yaml (model.* is training), transformers TrainingArguments (bf16 defaults to False).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { initFormats, parseConfig } from '../../../formats/index';
import { FIXTURES } from './score';

type Facts = ReturnType<typeof parseConfig>['facts'];
const explicit = (f: Facts, p: keyof Facts) => (f[p]?.source.kind === 'explicit' ? f[p]?.value : undefined);

describe('look-alike keys are not read as training settings', () => {
  before(async () => { await initFormats(); });

  test('verl: the rollout TP next to an FSDP actor is generation only', () => {
    const f = parseConfig('file:///ws/run.sh', 'python3 -m verl.trainer.main_ppo \\\n  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 \\\n  actor_rollout_ref.actor.fsdp_config.param_offload=False \\\n  actor_rollout_ref.rollout.tensor_model_parallel_size=4 \\\n  trainer.n_gpus_per_node=8\n', 'megatron-script').facts;
    assert.equal(explicit(f, 'parallel.tp'), undefined);
    assert.equal(f['parallel.tp']?.value, 1);
    assert.equal(f['parallel.sharding.style']?.value, 'fsdp');
    assert.equal(f['training.microBatch']?.value, 8);
  });

  test('verl: a Megatron actor reads its own TP, not the rollout one', () => {
    const f = parseConfig('file:///ws/run.sh', 'python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer \\\n  actor_rollout_ref.rollout.tensor_model_parallel_size=8 \\\n  actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 \\\n  actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=4\n', 'megatron-script').facts;
    assert.equal(explicit(f, 'parallel.tp'), 2);
    assert.equal(explicit(f, 'parallel.pp'), 4);
    assert.equal(f.engine?.value, 'megatron');
  });

  test('OpenRLHF and DeepSpeed-Chat: generation TP flags are not training TP', () => {
    const o = parseConfig('file:///ws/a.sh', 'python3 -m openrlhf.cli.train_ppo_ray --vllm_tensor_parallel_size 4 --zero_stage 3 --micro_train_batch_size 2\n', 'megatron-script').facts;
    assert.equal(o['parallel.tp'], undefined);
    assert.equal(explicit(o, 'parallel.sharding.stage'), 3);
    const d = parseConfig('file:///ws/b.sh', 'deepspeed main.py --actor_zero_stage 3 --inference_tp_size 2 --per_device_training_batch_size 4 --deepspeed\n', 'megatron-script').facts;
    assert.equal(d['parallel.tp'], undefined);
    assert.equal(explicit(d, 'training.microBatch'), 4);
  });

  test('nanotron: model_config.pretraining_tp is a model attribute; parallelism.tp is the layout', () => {
    const path = join(FIXTURES, 'nanotron/examples/config_qwen.yaml');
    const text = readFileSync(path, 'utf8');
    assert.match(text, /pretraining_tp: 1/);
    assert.equal(parseConfig(path, text).facts['parallel.tp']?.value, 2);
  });

  test('NeMo: an inference block does not change the training layout', () => {
    const f = parseConfig('file:///ws/c.yaml', 'trainer:\n  devices: 8\n  num_nodes: 1\nmodel:\n  tensor_model_parallel_size: 2\n  micro_batch_size: 1\n  global_batch_size: 8\ninference:\n  tensor_model_parallel_size: 8\n').facts;
    assert.equal(explicit(f, 'parallel.tp'), 2);
  });

  test('NeMo: a PEFT block whose scheme is not LoRA adds no LoRA', () => {
    const yaml = (scheme: string) => `trainer:\n  devices: 1\nmodel:\n  micro_batch_size: 1\n  global_batch_size: 8\n  peft:\n    peft_scheme: "${scheme}"\n    lora_tuning:\n      adapter_dim: 32\n`;
    assert.equal(parseConfig('file:///ws/d.yaml', yaml('adapter')).facts['lora.enabled'], undefined);
    const lora = parseConfig('file:///ws/e.yaml', yaml('lora')).facts;
    assert.equal(lora['lora.enabled']?.value, true);
    assert.equal(lora['lora.rank']?.value, 32);
  });

  test('an explicit bf16: false / --bf16 False turns bf16 off; fp16 then decides, else fp32', () => {
    const y = parseConfig('file:///ws/f.yaml', 'model_name_or_path: org/m\nper_device_train_batch_size: 2\nbf16: false\nfp16: true\n').facts;
    assert.equal(y['training.precision']?.value, 'fp16-mixed');
    // TrainingArguments with bf16=False and fp16=False (its default) trains in fp32 (transformers/training_args.py).
    const off = parseConfig('file:///ws/g.yaml', 'model_name_or_path: org/m\nper_device_train_batch_size: 2\nbf16: false\n').facts;
    assert.equal(off['training.precision']?.value, 'fp32');
    const flag = parseConfig('file:///ws/h.sh', 'deepspeed train.py --per_device_train_batch_size 2 --bf16 False --model_max_length 512\n', 'megatron-script').facts;
    assert.equal(flag['training.precision']?.value, 'fp32');
    assert.equal(flag['training.precision']?.source.kind, 'explicit');
    assert.equal(flag['training.seqLen']?.value, 512);
  });

  test('GPT-NeoX: pipe_parallel_size 0 is one stage', () => {
    const f = parseConfig('file:///ws/n.yml', '{\n  "pipe_parallel_size": 0,\n  "model_parallel_size": 2,\n  "num_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "seq_length": 128,\n}\n').facts;
    assert.equal(f['parallel.pp']?.value, 1);
    assert.equal(f['parallel.tp']?.value, 2);
  });
});
