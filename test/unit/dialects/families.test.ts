/**
 * Readers added after the fresh set 1 measurement (issue 12): each case is the smallest file of the shape found in
 * a real config, with the value its framework uses, cited from the framework's source. Each test can fail: it names
 * the look-alike value the reader must not take.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { detectFormat, initFormats, parseConfig } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { memoryHost } from '../formats/helpers';

type Facts = Record<string, { value: unknown; source: { kind: string } } | undefined>;
const facts = (uri: string, text: string) => parseConfig(uri, text).facts as Facts;
const value = (uri: string, text: string, path: string) => facts(uri, text)[path]?.value;

describe('trainer YAML families read through key tables', () => {
  before(async () => { await initFormats(); });

  test('NeMo-RL: only the enabled policy worker is read (megatron_cfg disabled is not the layout)', () => {
    // nemo_rl/models/policy: megatron_cfg.enabled selects Megatron-core; otherwise the DTensor (FSDP2) worker trains.
    const text = 'policy:\n  train_global_batch_size: 32\n  train_micro_batch_size: 1\n  max_total_sequence_length: 1024\n  dtensor_cfg:\n    enabled: true\n    tensor_parallel_size: 1\n  megatron_cfg:\n    enabled: false\n    tensor_model_parallel_size: 4\ncluster:\n  gpus_per_node: 8\n  num_nodes: 2\n';
    const f = facts('file:///ws/sft.yaml', text);
    assert.equal(detectFormat('file:///ws/sft.yaml', text), 'nemo-rl');
    assert.equal(f['parallel.tp']?.value, 1);
    assert.equal(f['parallel.sharding.style']?.value, 'fsdp2');
    assert.equal(f['training.globalBatch']?.value, 32);
    assert.equal(f['cluster.worldSize']?.value, 16);
    const meg = text.replace('enabled: true', 'enabled: false').replace('    enabled: false\n    tensor_model', '    enabled: true\n    tensor_model');
    assert.equal(value('file:///ws/m.yaml', meg, 'parallel.tp'), 4);
  });

  test('NeMo-RL: the Megatron worker\'s mtp_num_layers builds multi-token prediction modules; the DTensor worker\'s model has none', () => {
    // NeMo-RL examples/configs/grpo_math_1B.yaml: "mtp_num_layers=0 disables MTP" (policy.megatron_cfg, passed to Megatron-Bridge).
    const text = (enabled: boolean, n: string) => `policy:\n  train_global_batch_size: 32\n  train_micro_batch_size: 1\n  max_total_sequence_length: 1024\n  dtensor_cfg:\n    enabled: ${!enabled}\n  megatron_cfg:\n    enabled: ${enabled}\n    mtp_num_layers: ${n}\ncluster:\n  gpus_per_node: 8\n  num_nodes: 2\n`;
    assert.equal(value('file:///ws/m.yaml', text(true, '1'), 'model.mtpLayers'), 1);
    assert.equal(value('file:///ws/m.yaml', text(true, '0'), 'model.mtpLayers') ?? 0, 0);
    assert.equal(value('file:///ws/m.yaml', text(false, '1'), 'model.mtpLayers'), undefined);
    assert.ok(parseConfig('file:///ws/m.yaml', text(true, '-1')).diagnostics.some((d) => d.message.includes('mtp_num_layers')));
    // Unset, the worker's AutoBridge takes the config.json's count: DeepSeek-V3 declares one (num_nextn_predict_layers).
    const unset = (model: string) => `policy:\n  model_name: ${model}\n  train_global_batch_size: 32\n  train_micro_batch_size: 1\n  max_total_sequence_length: 1024\n  megatron_cfg:\n    enabled: true\ncluster:\n  gpus_per_node: 8\n  num_nodes: 2\n`;
    const f = facts('file:///ws/m.yaml', unset('deepseek-ai/DeepSeek-V3'));
    assert.equal(f['model.mtpLayers']?.value, 1);
    assert.equal(f['model.mtpLayers']?.source.kind, 'assumed');
    assert.equal(value('file:///ws/m.yaml', unset('meta-llama/Llama-3.1-8B'), 'model.mtpLayers'), undefined);
    assert.equal(value('file:///ws/m.yaml', unset('deepseek-ai/DeepSeek-V3').replace('enabled: true', 'enabled: false'), 'model.mtpLayers'), undefined);
  });

  test('ROLL: the trained worker (actor_train) gives the layout, not actor_infer; device_mapping counts its GPUs', () => {
    // roll/configs/worker_config.py: device_mapping lists the worker's GPUs; actor_infer is the vLLM engine.
    const text = 'rollout_batch_size: 64\nnum_return_sequences_in_group: 8\nprompt_length: 2048\nresponse_length: 4096\nactor_train:\n  training_args:\n    per_device_train_batch_size: 1\n    gradient_accumulation_steps: 64\n  strategy_args:\n    strategy_name: megatron_train\n    strategy_config:\n      tensor_model_parallel_size: 2\n      use_distributed_optimizer: true\n  device_mapping: list(range(0,16))\nactor_infer:\n  strategy_args:\n    strategy_name: vllm\n    strategy_config:\n      tensor_parallel_size: 4\n';
    const f = facts('file:///ws/rlvr.yaml', text);
    assert.equal(f['parallel.tp']?.value, 2);
    assert.equal(f['parallel.sharding.stage']?.value, 1);
    assert.equal(f['cluster.worldSize']?.value, 16);
    assert.equal(f['training.globalBatch']?.value, 512);
    assert.equal(f['training.seqLen']?.value, 6144);
  });

  test('EasyR1: global batch = actor global_batch_size × rollout.n; the rollout TP is not the actor\'s', () => {
    // EasyR1 verl/workers/fsdp_workers.py: config.global_batch_size *= rollout.n.
    const text = 'data:\n  max_prompt_length: 2048\n  max_response_length: 2048\nworker:\n  actor:\n    global_batch_size: 128\n    micro_batch_size_per_device_for_update: 1\n  rollout:\n    n: 5\n    tensor_parallel_size: 2\ntrainer:\n  nnodes: 1\n  n_gpus_per_node: 8\n';
    const f = facts('file:///ws/config.yaml', text);
    assert.equal(f['training.globalBatch']?.value, 640);
    assert.equal(f['training.seqLen']?.value, 4096);
    assert.equal(f['parallel.tp']?.value, 1);
    assert.equal(f['parallel.tp']?.source.kind, 'default');
    // dynamic_batching is on by default (actor/config.py), so the per-device micro batch is not a sequence count.
    assert.equal(f['training.microBatch'], undefined);
  });

  test('EasyR1 launch line: config=x.yaml with overrides on top (prompt from the file, response from the line)', () => {
    const files = {
      '/ws/examples/config.yaml': 'data:\n  max_prompt_length: 2048\n  max_response_length: 2048\nworker:\n  actor:\n    global_batch_size: 128\n  rollout:\n    n: 5\ntrainer:\n  nnodes: 1\n  n_gpus_per_node: 8\n',
      '/ws/examples/run.sh': 'python3 -m verl.trainer.main \\\n  config=examples/config.yaml \\\n  data.max_response_length=4096 \\\n  trainer.experiment_name=x\n',
    };
    const g = loadConfigGraph('/ws/examples/run.sh', memoryHost(files));
    assert.equal(g.primary.facts['training.seqLen']?.value, 6144);
    assert.equal(g.primary.facts['training.globalBatch']?.value, 640);
  });

  test('llm-foundry / OLMo: ${variables.max_seq_len} is looked up; FSDP strategy from the block', () => {
    const text = 'variables:\n  max_seq_len: 4096\nmax_seq_len: ${variables.max_seq_len}\nglobal_train_batch_size: 1024\ndevice_train_microbatch_size: 8\nprecision: amp_bf16\nfsdp_config:\n  sharding_strategy: SHARD_GRAD_OP\n  activation_checkpointing: true\n';
    const f = facts('file:///ws/ft.yaml', text);
    assert.equal(f['training.seqLen']?.value, 4096);
    assert.equal(f['parallel.sharding.stage']?.value, 2);
    assert.equal(f['training.recompute']?.value, 'full');
    assert.equal(f['training.precision']?.value, 'bf16-mixed');
  });
});

describe('readers fixed after the fresh set 1 measurement', () => {
  before(async () => { await initFormats(); });

  test('NeMo: a number in model.data.seq_length is the trained length, not encoder_seq_length', () => {
    // megatron_gpt_model.py builds the GPT dataset with seq_length=self.cfg.data.seq_length.
    const text = 'trainer:\n  devices: 8\nmodel:\n  micro_batch_size: 1\n  encoder_seq_length: 65536\n  data:\n    seq_length: 4096\n';
    assert.equal(value('file:///ws/n.yaml', text, 'training.seqLen'), 4096);
    const interp = text.replace('seq_length: 4096', 'seq_length: ${model.encoder_seq_length}');
    assert.equal(value('file:///ws/n2.yaml', interp, 'training.seqLen'), 65536);
  });

  test('Megatron multimodal: --decoder-seq-length is the language model sequence; T5 keeps its encoder length', () => {
    const mm = 'torchrun examples/multimodal/train.py --seq-length 576 --decoder-seq-length 2048 --num-layers 2\n';
    assert.equal(value('file:///ws/mm.sh', mm, 'training.seqLen'), 2048);
    const t5 = 'torchrun pretrain_t5.py --encoder-num-layers 12 --decoder-num-layers 12 --encoder-seq-length 512 --decoder-seq-length 128 --hidden-size 768 --num-attention-heads 12\n';
    assert.equal(value('file:///ws/t5.sh', t5, 'training.seqLen'), 512);
  });

  test('torchtune: data_parallel_shard_dim -1 states FSDP over the remaining ranks', () => {
    const text = 'model:\n  _component_: torchtune.models.llama3_3.llama3_3_70b\ntensor_parallel_dim: 8\ndata_parallel_shard_dim: -1\nbatch_size: 4\n';
    const f = facts('file:///ws/tt.yaml', text);
    assert.equal(f['parallel.sharding.style']?.source.kind, 'explicit');
    assert.equal(f['parallel.sharding.stage']?.value, 3);
  });

  test('verl: fsdp_size below the world size is HYBRID_SHARD', () => {
    // verl/workers/fsdp_workers.py create_device_mesh: fsdp_size < world_size builds a (ddp, fsdp) mesh.
    const line = (size: number) => `python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.fsdp_config.fsdp_size=${size} actor_rollout_ref.actor.ppo_mini_batch_size=32 trainer.nnodes=8 trainer.n_gpus_per_node=8\n`;
    assert.equal(value('file:///ws/v.sh', line(32), 'parallel.sharding.fsdpStrategy'), 'HYBRID_SHARD');
    assert.equal(value('file:///ws/v.sh', line(-1), 'parallel.sharding.fsdpStrategy'), undefined);
  });

  test('Accelerate: distributed_type NO is not sharded; LLaMA-Factory v1 names its DeepSpeed JSON and LoRA', () => {
    assert.equal(value('file:///ws/a.yaml', 'distributed_type: "NO"\nmixed_precision: bf16\nnum_processes: 1\n', 'parallel.sharding.stage'), 0);
    const v1 = 'model: Qwen/Qwen3-0.6B\nmodel_class: llm\ndist_config:\n  name: deepspeed\n  config_file: examples/deepspeed/ds_z3_config.json\nmicro_batch_size: 1\ncutoff_len: 2048\n';
    assert.deepEqual(parseConfig('file:///ws/v1.yaml', v1).references.filter((r) => r.kind === 'deepspeed').map((r) => r.target), ['examples/deepspeed/ds_z3_config.json']);
    const lora = 'model: Qwen/Qwen3-4B\nmodel_class: llm\npeft_config:\n  name: lora\n  r: 16\nmicro_batch_size: 1\n';
    assert.equal(value('file:///ws/l.yaml', lora, 'lora.rank'), 16);
    assert.equal(value('file:///ws/l.yaml', lora.replace('name: lora', 'name: freeze'), 'lora.enabled'), undefined);
  });

  test('Megatron-Bridge: recipe overrides and run_recipe.py flags are Megatron flags; verl overrides are not', () => {
    const text = 'torchrun --nproc_per_node=8 scripts/training/run_recipe.py --recipe llama3_8b_sft_config --mode lora -tp 2 train.micro_batch_size=2 train.global_batch_size=16 dataset.seq_length=4096 model.context_parallel_size=2\n';
    const f = facts('file:///ws/b.sh', text);
    assert.equal(f['parallel.tp']?.value, 2);
    assert.equal(f['parallel.cp']?.value, 2);
    assert.equal(f['training.microBatch']?.value, 2);
    assert.equal(f['training.seqLen']?.value, 4096);
    assert.equal(f['lora.enabled']?.value, true);
    // What the overrides leave unset is the recipe's, not Megatron's CLI default (fp32 without --bf16): read from the
    // table of the recipes (llama3_8b_sft_config is llama3_8b_sft_2gpu_h100_bf16_config, whose base sets "bf16_mixed");
    // a recipe the table does not have is assumed as the recipes set it (optimizer_utils.py, precision "bf16-mixed").
    assert.deepEqual([f['training.precision']?.value, f['training.precision']?.source.kind], ['bf16-mixed', 'derived']);
    assert.match((f['training.precision']?.source as { detail?: string } | undefined)?.detail ?? '', /llama3_8b_sft_2gpu_h100_bf16_config sets mixed_precision bf16_mixed/);
    const unknown = facts('file:///ws/u.sh', text.replace('llama3_8b_sft_config', 'my_own_llama_config'));
    assert.deepEqual([unknown['training.precision']?.value, unknown['training.precision']?.source.kind], ['bf16-mixed', 'assumed']);
    // CommOverlapConfig fields are Megatron flags of the same name (megatron/bridge/training/comm_overlap.py).
    const ov = facts('file:///ws/o.sh', text.replace('\n', ' comm_overlap.overlap_moe_expert_parallel_comm=true comm_overlap.tp_comm_overlap=true\n'));
    assert.equal(ov['parallel.epCommOverlap']?.value, true);
    assert.equal(ov['parallel.tpCommOverlap']?.value, true);
  });

  test('InternVL: --use_llm_lora N takes its number; --grad_checkpoint is gradient checkpointing', () => {
    const text = 'torchrun --nproc_per_node=2 internvl/train/internvl_chat_finetune.py --per_device_train_batch_size 4 --use_llm_lora 16 --grad_checkpoint True --bf16 True\n';
    const f = facts('file:///ws/i.sh', text);
    assert.equal(f['lora.rank']?.value, 16);
    assert.equal(f['training.recompute']?.value, 'full');
  });
});
