/**
 * Shapes found surveying the named projects' newest configs (issue 12, third pass): verl trainer YAML built from its
 * Hydra defaults, verl's SFT trainer and older global micro batches, open-instruct grpo_fast, Megatron's torch
 * FSDP2, ms-swift sequence parallelism and FSDP2 preset, `bash -lc` scripts that set up before launching, DeepSpeed
 * configs filled from templates by sed, NeMo fine-tuning datasets, and recipes that only override their base.
 * Expected values come from each framework's source, cited per test.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { detectWithHost, loadConfigGraph } from '../../../server/formats/workspace';
import { memoryHost } from '../formats/helpers';

type Facts = Record<string, { value: unknown; source: { kind: string; uri?: string } } | undefined>;
const sh = (text: string, path: string) => (parseConfig('file:///ws/run.sh', text).facts as Facts)[path]?.value;
const graph = (files: Record<string, string>, path: string) => loadConfigGraph(path, memoryHost(files)).primary.facts as Facts;

describe('verl', () => {
  before(async () => { await initFormats(); });

  test('trainer YAML: Hydra group defaults land at their package; ${oc.select:…} takes the value or its default', () => {
    // verl/trainer/config/ppo_megatron_trainer.yaml: `actor@actor_rollout_ref.actor: megatron_actor`, _self_ last.
    const files = {
      '/ws/verl/trainer/config/actor/megatron_actor.yaml': 'strategy: megatron\nppo_mini_batch_size: 256\nppo_micro_batch_size_per_gpu: 4\nmegatron:\n  tensor_model_parallel_size: 1\n  pipeline_model_parallel_size: 1\n',
      '/ws/verl/trainer/config/ppo_megatron_trainer.yaml': 'defaults:\n  - actor@actor_rollout_ref.actor: megatron_actor\n  - _self_\ndata:\n  max_prompt_length: 512\n  max_response_length: 512\nactor_rollout_ref:\n  actor:\n    megatron:\n      tensor_model_parallel_size: 2\n  rollout:\n    n: ${oc.select:absent.n,3}\n    tensor_model_parallel_size: 8\n    log_prob_micro_batch_size_per_gpu: ${oc.select:actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu,1}\ntrainer:\n  nnodes: 1\n  n_gpus_per_node: 8\n',
    };
    const f = graph(files, '/ws/verl/trainer/config/ppo_megatron_trainer.yaml');
    // The file's own megatron block wins over the component's (_self_ after it); the rollout TP is generation.
    assert.equal(f['parallel.tp']?.value, 2);
    assert.equal(f['parallel.pp']?.value, 1);
    assert.equal(f['training.microBatch']?.value, 4);
    // Global batch in sequences: ppo_mini_batch_size × rollout.n (n from the oc.select default, 3).
    assert.equal(f['training.globalBatch']?.value, 768);
    assert.equal(f['training.seqLen']?.value, 1024);
    assert.equal(f['engine']?.value, 'megatron');
  });

  test('SFT trainer: data.train_batch_size is the global batch, model.strategy fsdp2 (verl/trainer/fsdp_sft_trainer.py)', () => {
    const text = 'torchrun --nproc_per_node=8 -m verl.trainer.fsdp_sft_trainer data.train_batch_size=256 data.micro_batch_size_per_gpu=4 model.strategy=fsdp2 model.enable_gradient_checkpointing=True data.max_length=2048\n';
    assert.equal(sh(text, 'training.globalBatch'), 256);
    assert.equal(sh(text, 'parallel.sharding.style'), 'fsdp2');
    assert.equal(sh(text, 'training.recompute'), 'full');
    // In PPO the same key counts prompts per rollout, not the optimizer step.
    assert.equal(sh(text.replace('-m verl.trainer.fsdp_sft_trainer', '-m verl.trainer.main_ppo').replace('model.strategy=fsdp2 ', ''), 'training.globalBatch'), undefined);
  });

  test('older verl: actor.ppo_micro_batch_size is over all GPUs; rollout.n unset is 1; no strategy is the FSDP default', () => {
    // verl/workers/fsdp_workers.py: ppo_micro_batch_size //= device_mesh.size() // ulysses_sequence_parallel_size.
    const text = 'python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_mini_batch_size=256 actor_rollout_ref.actor.ppo_micro_batch_size=16 trainer.nnodes=1 trainer.n_gpus_per_node=8\n';
    assert.equal(sh(text, 'training.microBatch'), 2);
    assert.equal(sh(text, 'training.globalBatch'), 256);
    const f = parseConfig('file:///ws/run.sh', text).facts as Facts;
    assert.equal(f['parallel.sharding.stage']?.value, 3);
    assert.equal(f['parallel.sharding.stage']?.source.kind, 'default');
  });
});

describe('launch arguments of further trainers', () => {
  before(async () => { await initFormats(); });

  test('open-instruct grpo_fast: --deepspeed_stage, learners per node, prompt + response length', () => {
    const text = 'python open_instruct/grpo_fast.py --max_prompt_token_length 2048 --response_length 8192 --per_device_train_batch_size 1 --deepspeed_stage 2 --num_learners_per_node 4 --vllm_tensor_parallel_size 1 --gradient_checkpointing\n';
    assert.equal(sh(text, 'parallel.sharding.stage'), 2);
    assert.equal(sh(text, 'cluster.gpusPerNode'), 4);
    assert.equal(sh(text, 'training.seqLen'), 10240);
  });

  test('Megatron --use-torch-fsdp2 shards everything; Megatron-DeepSpeed --moe-expert-parallel-size is EP', () => {
    const text = 'torchrun pretrain_gpt.py --num-layers 2 --use-torch-fsdp2 --moe-expert-parallel-size 4 --num-experts 8\n';
    assert.equal(sh(text, 'parallel.sharding.style'), 'fsdp2');
    assert.equal(sh(text, 'parallel.sharding.stage'), 3);
    assert.equal(sh(text, 'parallel.ep'), 4);
  });

  test('ms-swift: --sequence_parallel_size is CP (not a switch); --fsdp fsdp2 is its FSDP2 preset', () => {
    const text = 'NPROC_PER_NODE=8 swift sft --model Qwen/Qwen2.5-7B --sequence_parallel_size 8 --max_length 65536 --per_device_train_batch_size 1 --fsdp fsdp2\n';
    assert.equal(sh(text, 'parallel.cp'), 8);
    assert.equal(sh(text, 'parallel.sharding.style'), 'fsdp2');
  });

  test('bash -lc "set -e; export …; cd …; $TORCHRUN …": the launching command is read, a $(…) kept whole', () => {
    const text = 'TP=2\nN=${GPUS:-$([ "$HW" = "h100" ] && echo 8 || echo 4)}\nTORCHRUN="python -m torch.distributed.run --nproc_per_node=$N"\nsrun bash -lc "\n  set -euo pipefail\n  export NCCL_DEBUG=WARN\n  cd /opt/Megatron-Bridge\n  $TORCHRUN scripts/training/run_recipe.py --recipe x model.tensor_model_parallel_size=$TP train.micro_batch_size=2\n"\n';
    assert.equal(sh(text, 'parallel.tp'), 2);
    assert.equal(sh(text, 'training.microBatch'), 2);
  });

  test('a DeepSpeed config sed fills from a template is read; the file it writes is not looked for', () => {
    // Megatron-DeepSpeed examples_deepspeed/MoE: sed "s/ZERO_STAGE/0/" ds_config_gpt_TEMPLATE.json … > ${config_json}.
    const files = {
      '/ws/ex/ds_config_gpt_TEMPLATE.json': '{\n  "train_batch_size" : CONFIG_BATCH_SIZE,\n  "train_micro_batch_size_per_gpu": CONFIG_MBSIZE,\n  "zero_optimization": { "stage": ZERO_STAGE },\n  "fp16": { "enabled": CONFIG_FP16_ENABLED }\n}\n',
      '/ws/ex/run.sh': 'GBS=256\nconfig_json="ds_config_${GBS}.json"\nsed "s/CONFIG_BATCH_SIZE/${GBS}/" ds_config_gpt_TEMPLATE.json \\\n  | sed "s/CONFIG_MBSIZE/4/" \\\n  | sed "s/ZERO_STAGE/2/" \\\n  | sed "s/CONFIG_FP16_ENABLED/true/" \\\n  > ${config_json}\ndeepspeed pretrain_gpt.py --num-layers 2 --deepspeed --deepspeed_config ${config_json}\n',
    };
    const g = loadConfigGraph('/ws/ex/run.sh', memoryHost(files));
    const f = g.primary.facts as Facts;
    assert.equal(f['parallel.sharding.stage']?.value, 2);
    assert.equal(f['parallel.sharding.stage']?.source.uri, '/ws/ex/ds_config_gpt_TEMPLATE.json');
    assert.equal(f['training.globalBatch']?.value, 256);
    assert.ok(!g.resolved.problems.some((p) => p.code === 'reference-missing'), 'the generated file is not a missing reference');
  });
});

describe('YAML families', () => {
  before(async () => { await initFormats(); });

  test('NeMo fine-tuning: model.data.train_ds batch and source length when the model block has none', () => {
    // NeMo-Framework-Launcher conf/fine_tuning/t5/squad.yaml: the T5 fine-tuning model takes its batch from train_ds.
    const text = 'trainer:\n  devices: 8\n  num_nodes: 1\n  precision: bf16\nmodel:\n  tensor_model_parallel_size: 1\n  data:\n    train_ds:\n      global_batch_size: 128\n      micro_batch_size: 16\n      max_src_seq_length: 512\n';
    const f = parseConfig('file:///ws/squad.yaml', text).facts as Facts;
    assert.equal(f['training.microBatch']?.value, 16);
    assert.equal(f['training.globalBatch']?.value, 128);
    assert.equal(f['training.seqLen']?.value, 512);
    const both = parseConfig('file:///ws/s.yaml', text.replace('model:\n', 'model:\n  micro_batch_size: 2\n')).facts as Facts;
    assert.equal(both['training.microBatch']?.value, 2);
  });

  test('a recipe that only overrides its base is recognised by the merged config (NeMo-RL 1n4g variants)', () => {
    const files = {
      '/ws/recipes/base.yaml': 'policy:\n  train_micro_batch_size: 2\n  dtensor_cfg:\n    enabled: true\ncluster:\n  gpus_per_node: 8\n',
      '/ws/recipes/small.yaml': 'defaults: ./base.yaml\ncluster:\n  gpus_per_node: 4\n',
    };
    const host = memoryHost(files);
    assert.equal(detectWithHost('/ws/recipes/small.yaml', files['/ws/recipes/small.yaml'], host), 'nemo-rl');
    const f = graph(files, '/ws/recipes/small.yaml');
    assert.equal(f['cluster.gpusPerNode']?.value, 4);
    assert.equal(f['training.microBatch']?.value, 2);
  });
});

describe('readers fixed after the fresh set 3 measurement', () => {
  before(async () => { await initFormats(); });

  test('torchtitan first layouts: [training] pipeline_parallel_degree; torchtrain sequence_parallel_degree is its TP', () => {
    const old = '[model]\nname = "llama"\nflavor = "7B"\n[training]\nbatch_size = 8\nseq_len = 2048\ndata_parallel_degree = -1\ntensor_parallel_degree = 2\npipeline_parallel_degree = 4\n';
    const f = parseConfig('file:///ws/train_configs/llama_7b.toml', old).facts as Facts;
    assert.equal(f['parallel.pp']?.value, 4);
    assert.equal(f['parallel.pp']?.source.kind, 'explicit');
    const tt = parseConfig('file:///ws/torchtrain/train_configs/train_config.toml', old.replace('tensor_parallel_degree', 'sequence_parallel_degree')).facts as Facts;
    assert.equal(tt['parallel.tp']?.value, 2);
  });

  test('NeMo Lightning models (not Megatron): model.train_ds.batch_size, model.max_seq_length, a Hugging Face config block', () => {
    // NeMo examples/nlp/language_modeling/conf/bert_pretraining_from_text_config.yaml: batch_size "per GPU".
    const text = 'trainer:\n  devices: 1\n  num_nodes: 1\n  precision: 16\n  strategy:\n    _target_: lightning.pytorch.strategies.DDPStrategy\nmodel:\n  max_seq_length: 128\n  language_model:\n    config:\n      hidden_size: 768\n      num_attention_heads: 12\n      num_hidden_layers: 12\n  train_ds:\n    batch_size: 16\n';
    const f = parseConfig('file:///ws/bert.yaml', text).facts as Facts;
    assert.equal(f['training.microBatch']?.value, 16);
    assert.equal(f['training.seqLen']?.value, 128);
    assert.equal(f['model.layers']?.value, 12);
    assert.equal(f['parallel.sharding.stage']?.value, 0);
    assert.equal(f['parallel.sharding.stage']?.source.kind, 'explicit');
  });

  test('ms-swift GRPO: --max_length is the prompt, the sequence adds --max_completion_length (Command-line-parameters.md)', () => {
    const line = (type: string) => `NPROC_PER_NODE=4 swift rlhf --rlhf_type ${type} --model Qwen/Qwen3-4B --max_length 2048 --max_completion_length 8192 --per_device_train_batch_size 4\n`;
    assert.equal(sh(line('grpo'), 'training.seqLen'), 10240);
    // For DPO the same flag is the whole sequence.
    assert.equal(sh(line('dpo'), 'training.seqLen'), 2048);
  });

  test('"… $WORKER_STR ${DIR}/x.py": the space before ${DIR} in a string stays (the --num_gpus value is 4, not "4./x.py")', () => {
    const text = 'DIR=.\nWORKER_STR="--num_nodes 1 --num_gpus 4"\nrun_cmd="deepspeed --master_port 29700 $WORKER_STR ${DIR}/pretrain_gpt.py --num-layers 2"\neval ${run_cmd}\n';
    assert.equal(sh(text, 'cluster.gpusPerNode'), 4);
  });
});
