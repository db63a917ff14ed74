/**
 * Readers fixed after the fresh set 2 measurement (issue 12): how the trainers' own loaders build a config
 * (OmegaConf interpolation, Hydra / NeMo-RL `defaults:`, HfArgumentParser booleans, bash argument selectors, heredoc
 * configs) and two trainers that had no reader (Meta Lingua, picotron). Each expected value is the one the framework
 * uses, with its source; each test names the value a naive reading would take instead.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { detectFormat, initFormats, parseConfig } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { memoryHost, rangeOf } from '../formats/helpers';

type Facts = Record<string, { value: unknown; source: { kind: string; uri?: string; range?: unknown } } | undefined>;
const facts = (uri: string, text: string) => parseConfig(uri, text).facts as Facts;
const value = (uri: string, text: string, path: string) => facts(uri, text)[path]?.value;

describe('OmegaConf interpolation and the defaults list', () => {
  before(async () => { await initFormats(); });

  test('${.x} is relative to the key\'s own node, ${..x} to its parent (NeMo-Aligner gpt_sft.yaml)', () => {
    // omegaconf docs "Variable interpolation": ${.b} is a sibling of the key, each further dot one level up.
    // The same name at the root (micro_batch_size: 7) is what an absolute reading would wrongly take.
    const text = 'micro_batch_size: 7\ntrainer:\n  devices: 8\n  num_nodes: 2\nmodel:\n  micro_batch_size: ${.data.train_ds.micro_batch_size}\n  global_batch_size: ${..model.data.train_ds.global_batch_size}\n  tensor_model_parallel_size: 1\n  data:\n    train_ds:\n      micro_batch_size: 2\n      global_batch_size: 64\n';
    const f = facts('file:///ws/gpt_sft.yaml', text);
    assert.equal(f['training.microBatch']?.value, 2);
    assert.equal(f['training.globalBatch']?.value, 64);
    // The value points at the interpolation where it is used (hints and edits go there).
    assert.deepEqual(f['training.microBatch']?.source.range, rangeOf(text, '${.data.train_ds.micro_batch_size}'));
  });

  test('a chain of interpolations is followed; resolvers and text around an interpolation are not', () => {
    const text = 'variables:\n  len: 4096\n  alias: ${variables.len}\nmax_seq_len: ${variables.alias}\nglobal_train_batch_size: ${oc.env:GBS}\ndevice_train_microbatch_size: 4\n';
    const f = facts('file:///ws/ft.yaml', text);
    assert.equal(f['training.seqLen']?.value, 4096);
    assert.equal(f['training.globalBatch'], undefined);
  });

  test('NeMo-RL: defaults: ../../sft.yaml is merged under the recipe (nemo_rl/utils/config.py load_config_with_inheritance)', () => {
    const files = {
      '/ws/examples/configs/sft.yaml': 'policy:\n  precision: bfloat16\n  train_global_batch_size: 32\n  train_micro_batch_size: 1\n  dtensor_cfg:\n    enabled: true\n    tensor_parallel_size: 1\n    context_parallel_size: 1\n  megatron_cfg:\n    enabled: false\n    tensor_model_parallel_size: 1\ncluster:\n  gpus_per_node: 1\n  num_nodes: 1\n',
      '/ws/examples/configs/recipes/llm/sft-70b.yaml': 'defaults: ../../sft.yaml\npolicy:\n  train_global_batch_size: 512\n  dtensor_cfg:\n    enabled: false\n  megatron_cfg:\n    enabled: true\n    tensor_model_parallel_size: 4\ncluster:\n  gpus_per_node: 8\n',
    };
    const g = loadConfigGraph('/ws/examples/configs/recipes/llm/sft-70b.yaml', memoryHost(files));
    const f = g.primary.facts as Facts;
    // The recipe enables Megatron on top of a base whose DTensor worker is on: the merged tree selects Megatron.
    assert.equal(f['parallel.tp']?.value, 4);
    assert.equal(f['training.globalBatch']?.value, 512);
    // Inherited values name the base file they come from.
    assert.equal(f['training.microBatch']?.value, 1);
    assert.equal(f['training.microBatch']?.source.uri, '/ws/examples/configs/sft.yaml');
    assert.equal(f['training.precision']?.value, 'bf16');
    assert.equal(f['cluster.nodes']?.value, 1);
    assert.ok(g.dependencies.includes('/ws/examples/configs/sft.yaml'));
  });

  test('Hydra: group@package entries land at their package, _self_ decides who wins, a missing base is said', () => {
    // hydra.cc "The Defaults List": `actor@actor_rollout_ref.actor: dp_actor` loads actor/dp_actor.yaml at that
    // package; entries after _self_ override the file.
    const files = {
      '/ws/config/actor/dp_actor.yaml': 'ppo_micro_batch_size_per_gpu: 4\nppo_mini_batch_size: 256\n',
      '/ws/config/policy/late.yaml': 'epochs: 3\n',
      '/ws/config/nemo.yaml': 'defaults:\n  - actor@model.actor: dp_actor\n  - _self_\n  - optional tp_overlap@model.ub: null\ntrainer:\n  devices: 8\nmodel:\n  micro_batch_size: ${.actor.ppo_micro_batch_size_per_gpu}\n  tensor_model_parallel_size: 2\n',
    };
    const f = loadConfigGraph('/ws/config/nemo.yaml', memoryHost(files)).primary.facts as Facts;
    assert.equal(f['training.microBatch']?.value, 4);
    const missing = parseConfig('/ws/x.yaml', 'defaults: ../../absent.yaml\npolicy:\n  train_micro_batch_size: 2\n  dtensor_cfg:\n    enabled: true\n', undefined, { readSource: () => undefined });
    assert.ok(missing.diagnostics.some((d) => d.code === 'defaults-missing' && d.message.includes('absent.yaml')));
    assert.equal((missing.facts as Facts)['training.microBatch']?.value, 2);
  });
});

describe('launch scripts: what a run without arguments does', () => {
  before(async () => { await initFormats(); });
  const sh = (text: string, path: string) => value('file:///ws/run.sh', text, path);

  test('--gradient_checkpointing 0 is off (HfArgumentParser string_to_bool: 0/1, t/f, y/n, yes/no)', () => {
    // LMFlow scripts/run_finetune.sh writes `--gradient_checkpointing 0`; a bare switch would read "on".
    const line = (v: string) => `torchrun --nproc_per_node 8 finetune.py --per_device_train_batch_size 1 --gradient_checkpointing ${v} --block_size 512\n`;
    assert.equal(sh(line('0'), 'training.recompute'), 'none');
    assert.equal(sh(line('n'), 'training.recompute'), 'none');
    assert.equal(sh(line('1'), 'training.recompute'), 'full');
    assert.equal(sh(line('--bf16'), 'training.recompute'), 'full');
    assert.equal(sh(line('0'), 'training.seqLen'), 512);
  });

  test('an if/elif selector over $1 with no else reads every choice; a single test of $1 stays false', () => {
    // DeepSpeed-SuperOffload finetune_*.sh: MODE=$1 picks one of two heredoc DeepSpeed configs; without an argument
    // bash writes none, so the run needs one.
    const sel = 'MODE=$1\nif [ "$MODE" = "a" ]; then\n  TP=2\nelif [ "$MODE" = "b" ]; then\n  TP=4\nfi\ntorchrun pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers 2\n';
    assert.equal(sh(sel, 'parallel.tp'), 4);
    // `if [ "$1" == debug ]` is an option: run without it, the branch is not taken.
    const debug = 'TP=8\nif [ "$1" == "debug" ]; then TP=1; fi\ntorchrun pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers 2\n';
    assert.equal(sh(debug, 'parallel.tp'), 8);
    // A default arm or an else decides it as before.
    assert.equal(sh(sel.replace('fi\n', 'else\n  TP=1\nfi\n'), 'parallel.tp'), 1);
  });

  test('a DeepSpeed config a heredoc writes is read, not looked for; a continuation before $X keeps the space', () => {
    const text = 'A=--activation_checkpointing\nW=20\ncat > "$PWD/ds.json" << EOF\n{"train_batch_size": 4, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 3}}\nEOF\nCMD="deepspeed --num_gpus=4 finetune.py \\\n  --deepspeed_config=$PWD/ds.json \\\n  --warmup_steps $W \\\n  $A \\\n  --max_length 4096"\neval $CMD\n';
    const r = parseConfig('file:///ws/run.sh', text);
    const f = r.facts as Facts;
    assert.equal(f['parallel.sharding.stage']?.value, 3);
    assert.equal(f['training.seqLen']?.value, 4096);
    // `--warmup_steps $W \<newline> $A`: the flag after the continuation is its own word, not "20--activation…".
    assert.equal(f['training.recompute']?.value, 'full');
    assert.deepEqual(r.references.filter((x) => x.kind === 'deepspeed'), []);
  });

  test('a node count without GPUs per node runs on whole nodes of 8, not the one-node world split over the nodes', () => {
    // LLaMA-Factory's README: FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=0 MASTER_ADDR=… llamafactory-cli train x.yaml, with
    // NPROC_PER_NODE left to its default, every GPU of the node (llamafactory/cli.py); torchrun's --nproc_per_node the same.
    const yaml = 'model_name_or_path: meta-llama/Meta-Llama-3-8B\nstage: sft\nfinetuning_type: full\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 8\ncutoff_len: 2048\nbf16: true\n';
    const files = {
      '/ws/cfg.yaml': yaml,
      '/ws/train.sh': 'FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 llamafactory-cli train cfg.yaml\n',
    };
    const plan = loadConfigGraph('/ws/train.sh', memoryHost(files)).resolved.plan!;
    assert.equal(plan.cluster.nodes, 2);
    assert.equal(plan.cluster.gpusPerNode, 8);
    assert.equal(plan.parallel.dp, 16);
    assert.equal(plan.sources['cluster.gpusPerNode']?.kind, 'assumed');
    // Stated per node, it is what the script says (2 × 4).
    const four = loadConfigGraph('/ws/train.sh', memoryHost({ ...files, '/ws/train.sh': files['/ws/train.sh'].replace('NNODES=2', 'NNODES=2 NPROC_PER_NODE=4') })).resolved.plan!;
    assert.equal(four.parallel.dp, 8);
    assert.equal(four.cluster.gpusPerNode, 4);
  });

  test('T5: --encoder-num-layers + --decoder-num-layers are the model\'s layers (megatron/core/models/T5)', () => {
    const t5 = 'torchrun pretrain_t5.py --encoder-num-layers 12 --decoder-num-layers 6 --hidden-size 768 --num-attention-heads 12 --seq-length 512\n';
    assert.equal(sh(t5, 'model.layers'), 18);
    assert.equal(sh(t5.replace('--encoder-num-layers 12', '--num-layers 24 --encoder-num-layers 12'), 'model.layers'), 24);
  });
});

describe('trainers without a reader before: Meta Lingua and picotron', () => {
  before(async () => { await initFormats(); });

  test('Lingua: fsdp_type full_shard is FSDP2; data.batch_size per GPU; async_eval_gpus is not the cluster', () => {
    // lingua/distributed.py parallelize_model: fully_shard when fsdp_type == "full_shard"; default "no_shard".
    const text = 'grad_acc_steps: 2\nasync_eval_gpus: 8\ndistributed:\n  fsdp_type: full_shard\n  model_dtype: bf16\n  selective_activation_checkpointing: true\n  tp_size: 2\nmodel:\n  dim: 2048\n  n_layers: 16\n  n_heads: 16\ndata:\n  batch_size: 4\n  seq_len: 8192\n';
    assert.equal(detectFormat('file:///ws/apps/main/configs/x.yaml', text), 'lingua');
    const f = facts('file:///ws/x.yaml', text);
    assert.equal(f['parallel.sharding.style']?.value, 'fsdp2');
    assert.equal(f['parallel.sharding.stage']?.value, 3);
    assert.equal(f['parallel.tp']?.value, 2);
    assert.equal(f['training.microBatch']?.value, 4);
    assert.equal(f['training.seqLen']?.value, 8192);
    assert.equal(f['training.gradAccum']?.value, 2);
    assert.equal(f['training.recompute']?.value, 'selective');
    assert.equal(f['cluster.worldSize'], undefined);
    const noShard = facts('file:///ws/y.yaml', text.replace('full_shard', 'no_shard'));
    assert.equal(noShard['parallel.sharding.stage']?.value, 0);
  });

  test("Lingua: the SwiGLU width is Llama's rounding of 2·4·dim/3, not 4·dim; Llama 3's tiktoken file sizes the vocabulary", () => {
    // lingua/transformer.py FeedForward(hidden_dim=4·dim): int(2·hidden/3) (× ffn_dim_multiplier), rounded up to
    // multiple_of (default 256). dim 2048: int(16384/3) = 5461 → 5632; with multiple_of 1024 and multiplier 1.3:
    // int(1.3 · 5461) = 7099 → 7168. cl_toplang_128k is Llama 3's tokenizer.model (128,256 tokens in its params.json).
    const base = 'distributed:\n  fsdp_type: full_shard\nmodel:\n  dim: 2048\n  n_layers: 25\n  n_heads: 16\ndata:\n  batch_size: 4\n  seq_len: 4096\n  tokenizer:\n    name: tiktoken\n    path: tokenizers/cl_toplang_128k\n';
    const f = facts('file:///ws/llama_1B.yaml', base);
    assert.equal(f['model.ffnSize']?.value, 5632);
    assert.equal(f['model.vocabSize']?.value, 128256);
    const g = facts('file:///ws/llama_1B.yaml', base.replace('  n_heads: 16\n', '  n_heads: 16\n  multiple_of: 1024\n  ffn_dim_multiplier: 1.3\n'));
    assert.equal(g['model.ffnSize']?.value, 7168);
    const other = facts('file:///ws/llama_1B.yaml', base.replace('cl_toplang_128k', 'my_tokenizer.model'));
    assert.equal(other['model.vocabSize'], undefined);
  });

  test("Lingua: distributed.compile is read (DistributedArgs default false), and its RMSNorm upcasts to fp32", () => {
    // lingua/distributed.py DistributedArgs `compile: bool = False`; apps/main/train.py torch.compile(model) when set.
    // lingua/transformer.py RMSNorm.forward: self._norm(x.float()) * self.weight.float(), then type_as(x).
    const base = 'distributed:\n  fsdp_type: full_shard\nmodel:\n  dim: 2048\n  n_layers: 25\n  n_heads: 16\ndata:\n  batch_size: 4\n  seq_len: 4096\n';
    const off = facts('file:///ws/llama_1B.yaml', base);
    assert.equal(off['training.compile']?.value, false);
    assert.equal(off['training.compile']?.source.kind, 'default');
    assert.equal(off['training.normUpcast']?.value, true);
    const on = facts('file:///ws/llama_1B.yaml', base.replace('  fsdp_type: full_shard\n', '  fsdp_type: full_shard\n  compile: true\n'));
    assert.equal(on['training.compile']?.value, true);
    assert.equal(on['training.compile']?.source.kind, 'explicit');
  });

  test('picotron: the four degrees, the batch per GPU, bf16 weights without fp32 master (train.py model.to(dtype))', () => {
    const text = '{"distributed": {"tp_size": 2, "cp_size": 2, "pp_size": 2, "dp_size": 1, "pp_engine": "afab"}, "model": {"name": "HuggingFaceTB/SmolLM-360M-Instruct", "num_hidden_layers": 16, "dtype": "float32"}, "training": {"seq_length": 1024, "micro_batch_size": 4, "gradient_accumulation_steps": 8}}';
    assert.equal(detectFormat('file:///ws/template/base_config.json', text), 'picotron');
    const f = facts('file:///ws/template/base_config.json', text);
    assert.deepEqual(['parallel.tp', 'parallel.cp', 'parallel.pp', 'parallel.dp'].map((p) => f[p]?.value), [2, 2, 2, 1]);
    assert.equal(f['parallel.schedule']?.value, 'gpipe');
    assert.equal(f['training.microBatch']?.value, 4);
    assert.equal(f['training.gradAccum']?.value, 8);
    // model.dtype is not read by train.py: it trains in bfloat16 whenever the GPU supports it.
    assert.equal(f['training.precision']?.value, 'bf16');
    assert.equal(f['parallel.sharding.stage']?.value, 0);
  });
});
