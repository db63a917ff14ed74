/**
 * torchtitan TOML (both layouts), Accelerate, Axolotl, LLaMA-Factory, HF config.json.
 * Expected values: torchtitan job_config.py defaults (AC selective; shard degree −1 = all remaining ranks),
 * Accelerate's 1-based FSDP strategy index (2 = SHARD_GRAD_OP), parallelism_config product, docs/formats/.
 */
import { describe, test } from 'node:test';
import type { PlanPath } from '../../../shared/plan/paths';
import { resolvePlan } from '../../../shared/plan/resolve';
import assert from 'node:assert/strict';
import { detectFormat, parseConfig } from '../../../formats/index';
import { fixture, rangeOf } from './helpers';

const facts = (rel: string) => { const { path, text } = fixture(rel); return { f: parseConfig(path, text), text, path }; };

describe('torchtitan TOML', () => {
  test('2025 layout: [parallelism], local_batch_size, hf_assets_path reference', () => {
    const { f, text, path } = facts('torchtitan/new_layout.toml');
    assert.equal(detectFormat(path, text), 'torchtitan');
    const v = (p: PlanPath) => f.facts[p]?.value;
    assert.equal(v('model.preset'), 'llama3:8B');
    assert.equal(v('training.microBatch'), 2);
    assert.equal(v('training.globalBatch'), 64);
    assert.equal(v('parallel.tp'), 2);
    assert.equal(v('parallel.sharding.shardGroupSize'), 4);
    assert.equal(v('parallel.dp'), 4); // replicate 1 × shard 4
    // World = DP × TP × PP × CP = 4 × 2 × 1 × 1, derived when the plan is resolved; TP implies SP in torchtitan.
    const plan = resolvePlan(f, []).plan;
    assert.equal(plan && plan.cluster.gpusPerNode * plan.cluster.nodes, 8);
    assert.equal(plan?.parallel.sp, true);
    assert.equal(v('training.recompute'), 'full');
    assert.deepEqual(f.facts['parallel.tp']?.keyRange, rangeOf(text, 'tensor_parallel_degree'));
    assert.ok(f.references.some((r) => r.kind === 'model' && r.target === './assets/hf/Llama-3.1-8B/config.json'));
  });

  test('2024 layout: [training] batch_size and degrees, [experimental] pipeline degree; AC default selective', () => {
    const { f } = facts('torchtitan/old_layout.toml');
    const v = (p: PlanPath) => f.facts[p]?.value;
    // batch_size 8 with PP 2: torchtitan at 9dec370 (pipelining_utils.py build_pipeline_schedule) cuts it into
    // pipeline_parallel_microbatches = the PP degree = 2 micro-batches of 4 sequences.
    assert.equal(v('training.microBatch'), 4);
    assert.equal(v('training.deviceBatch'), 8);
    assert.equal(v('parallel.tp'), 8);
    assert.equal(v('parallel.pp'), 2);
    assert.equal(v('cluster.worldSize'), undefined); // data_parallel_degree = -1 needs NGPU
    assert.equal(v('training.recompute'), 'selective');
    assert.equal(f.facts['training.recompute']?.source.kind, 'default');
  });

  // torchtitan/distributed/activation_checkpoint.py: selective_ac_option "op" (op-level policy) or a positive integer N
  // (every N-th block checkpointed); JobConfig's default is "2".
  const ac = (option: string | undefined, mode = 'selective') => parseConfig('/x/train_configs/a.toml',
    `[model]\nname = "llama3"\nflavor = "8B"\n[activation_checkpoint]\nmode = "${mode}"\n${option === undefined ? '' : `selective_ac_option = ${option}\n`}`, 'torchtitan');
  const policy = (f: ReturnType<typeof ac>) => [f.facts['training.recomputePolicy']?.value, f.facts['training.recomputeEvery']?.value];
  test('selective_ac_option: "op" is the op-level policy, an integer N checkpoints every N-th block, the default is "2"', () => {
    assert.deepEqual(policy(ac('"op"')), ['torchtitan-op', undefined]);
    assert.deepEqual(policy(ac('"3"')), ['torchtitan-layer', 3]);
    assert.deepEqual(policy(ac('1')), ['torchtitan-layer', 1]);
    const d = ac(undefined);
    assert.deepEqual(policy(d), ['torchtitan-layer', 2]);
    assert.equal(d.facts['training.recomputePolicy']?.source.kind, 'default');
    // Under full checkpointing the option is not read.
    assert.deepEqual(policy(ac('"op"', 'full')), [undefined, undefined]);
  });
  test('selective_ac_option that is neither "op" nor a positive integer: an error at the value, no policy guessed', () => {
    for (const bad of ['"sometimes"', '0', '"-2"', '2.5']) {
      const f = ac(bad);
      assert.equal(f.facts['training.recomputePolicy'], undefined, bad);
      const d = f.diagnostics.find((x) => x.code === 'invalid-value');
      assert.ok(d && d.severity === 'error' && d.range.start.line === 5, `${bad}: ${JSON.stringify(f.diagnostics)}`);
    }
  });

  // Pipeline micro-batches and stages, as torchtitan builds them: torchtitan/distributed/pipeline_parallel.py at
  // 238fa995 (`build_pipeline_schedule`: local_batch_size / pipeline_parallel_microbatch_size micro-batches, default size
  // 1; `generate_llm_fqn_per_model_part`: L + 1 + 1 effective layers dealt over the stages, extras to the first stages,
  // the first and last stage give one layer each to the embedding and the head; multi-stage schedules 2 stages per rank).
  const pipe = (parallelism: string, training = 'local_batch_size = 32\nseq_len = 8192', flavor = '405B') => parseConfig('/x/train_configs/a.toml',
    `[model]\nname = "llama3"\nflavor = "${flavor}"\n[training]\n${training}\n[parallelism]\ndata_parallel_shard_degree = 8\ntensor_parallel_degree = 8\n${parallelism}\n`, 'torchtitan');
  const planOf = (f: ReturnType<typeof pipe>) => resolvePlan(f, []);
  test('PP: the local batch is cut into pipeline micro-batches of pipeline_parallel_microbatch_size (default 1)', () => {
    const sized = planOf(pipe('pipeline_parallel_degree = 8\npipeline_parallel_microbatch_size = 4')).plan!;
    assert.deepEqual([sized.training.microBatch, sized.training.gradAccum, sized.training.globalBatch], [4, 8, 256]);
    const unit = planOf(pipe('pipeline_parallel_degree = 8')).plan!;
    assert.deepEqual([unit.training.microBatch, unit.training.gradAccum], [1, 32]);
    // Without PP the local batch is the micro-batch.
    const flat = planOf(pipe('pipeline_parallel_degree = 1\npipeline_parallel_microbatch_size = 4')).plan!;
    assert.deepEqual([flat.training.microBatch, flat.training.gradAccum], [32, 1]);
    // With a global batch the accumulation steps multiply the micro-batches: 512 / (4 × DP 8) = 16.
    const acc = planOf(pipe('pipeline_parallel_degree = 8\npipeline_parallel_microbatch_size = 4', 'local_batch_size = 32\nglobal_batch_size = 512\nseq_len = 8192')).plan!;
    assert.deepEqual([acc.training.microBatch, acc.training.gradAccum], [4, 16]);
  });
  test('PP: a micro-batch size that does not divide the local batch is an error at its value', () => {
    const f = pipe('pipeline_parallel_degree = 8\npipeline_parallel_microbatch_size = 5');
    const d = f.diagnostics.find((x) => x.code === 'invalid-value');
    assert.ok(d && d.severity === 'error' && d.range.start.line === 10, JSON.stringify(f.diagnostics));
    const count = pipe('pipeline_parallel_degree = 8\npipeline_parallel_microbatches = 0');
    assert.ok(count.diagnostics.some((x) => x.code === 'invalid-value' && x.severity === 'error' && x.range.start.line === 10));
  });
  test('PP: torchtitan\'s split gives the first and last stage one layer less (126 layers over 8 and 16 stages, 32 over 4)', () => {
    const one = planOf(pipe('pipeline_parallel_degree = 8')).plan!;
    assert.equal(one.parallel.vpp, 1);
    assert.deepEqual(one.parallel.stageLayers, [15, 16, 16, 16, 16, 16, 16, 15]); // 128 effective / 8 = 16 each
    const inter = planOf(pipe('pipeline_parallel_degree = 8\npipeline_parallel_schedule = "Interleaved1F1B"')).plan!;
    assert.deepEqual([inter.parallel.vpp, inter.parallel.schedule], [2, 'interleaved']);
    // 16 stages of 8 effective layers: stage 0 and 15 hold 7, rank 0 holds stages 0 and 8, rank 7 stages 7 and 15.
    assert.deepEqual(inter.parallel.stageLayers, [15, 16, 16, 16, 16, 16, 16, 15]);
    // 32 + 2 = 34 effective over 4 stages: 9, 9, 8, 8, less one on the first and the last.
    const small = planOf(pipe('pipeline_parallel_degree = 4', 'local_batch_size = 8\nseq_len = 8192', '8B')).plan!;
    assert.deepEqual(small.parallel.stageLayers, [8, 9, 8, 7]);
    const heavy = planOf(pipe('pipeline_parallel_degree = 4\npipeline_parallel_first_stage_less_layers = 3\npipeline_parallel_last_stage_less_layers = 3', 'local_batch_size = 8\nseq_len = 8192', '8B')).plan!;
    // 38 effective: 10, 10, 9, 9 → 7, 10, 9, 6.
    assert.deepEqual(heavy.parallel.stageLayers, [7, 10, 9, 6]);
    // A weight above a stage's share (34 + 20 − 1 = 53 effective over 4 stages: 13 each, first 20 > 13) is refused.
    const tooHeavy = planOf(pipe('pipeline_parallel_degree = 4\npipeline_parallel_first_stage_less_layers = 20', 'local_batch_size = 8\nseq_len = 8192', '8B'));
    assert.ok(tooHeavy.problems.some((p) => p.code === 'pipeline-split' && p.severity === 'error'), JSON.stringify(tooHeavy.problems));
  });
  test('PP: pipeline_parallel_layers_per_stage sets the stages per rank; a count that does not divide is an error', () => {
    // ⌈(126 + 2) / 4⌉ = 32 stages over PP 8 = 4 per rank.
    const r = planOf(pipe('pipeline_parallel_degree = 8\npipeline_parallel_schedule = "Interleaved1F1B"\npipeline_parallel_layers_per_stage = 4'));
    assert.equal(r.plan!.parallel.vpp, 4);
    assert.deepEqual(r.plan!.parallel.stageLayers, [15, 16, 16, 16, 16, 16, 16, 15]);
    // ⌈(126 + 2) / 5⌉ = 26 stages: not a multiple of 8.
    const bad = planOf(pipe('pipeline_parallel_degree = 8\npipeline_parallel_schedule = "Interleaved1F1B"\npipeline_parallel_layers_per_stage = 5'));
    assert.ok(bad.problems.some((p) => p.code === 'pipeline-split' && p.severity === 'error'), JSON.stringify(bad.problems));
  });
  test('PP, 2024 layout: pipeline_parallel_microbatches and split points (stages = points + 1)', () => {
    const old = (exp: string) => parseConfig('/x/train_configs/a.toml',
      `[model]\nname = "llama3"\nflavor = "405B"\n[training]\nbatch_size = 12\ndata_parallel_degree = 8\n[experimental]\npipeline_parallel_degree = 2\n${exp}\n`, 'torchtitan');
    assert.equal(old('pipeline_parallel_microbatches = 3').facts['training.microBatch']?.value, 4);
    assert.equal(old('').facts['training.microBatch']?.value, 6); // default count = PP degree 2
    const split = old('pipeline_parallel_schedule = "interleaved_1f1b"\npipeline_parallel_split_points = ["layers.30", "layers.60", "layers.90"]');
    assert.deepEqual([split.facts['parallel.vpp']?.value, split.facts['parallel.schedule']?.value], [2, 'interleaved']);
    const odd = old('pipeline_parallel_split_points = ["layers.40", "layers.80"]');
    assert.ok(odd.diagnostics.some((d) => d.code === 'invalid-value' && d.severity === 'error' && d.range.start.line === 8));
    assert.ok(old('pipeline_parallel_microbatches = 5').diagnostics.some((d) => d.code === 'invalid-value' && d.range.start.line === 8));
    const notList = old('pipeline_parallel_split_points = "layers.40"');
    assert.ok(notList.diagnostics.some((d) => d.code === 'invalid-value' && d.severity === 'warning' && d.range.start.line === 8));
  });

  test('broken TOML keeps the lines that parse', () => {
    const f = parseConfig('/x/train_configs/a.toml', '[model]\nname = "llama3"\nflavor = "8B"\n[training]\nlocal_batch_size = \nseq_len = 4096\n', 'torchtitan');
    assert.equal(f.facts['training.seqLen']?.value, 4096);
    assert.ok(f.diagnostics.some((d) => d.code === 'syntax' && d.range.start.line === 4));
  });
});

describe('Accelerate YAML', () => {
  test('FSDP v1 strategy given as its 1-based index', () => {
    const { f } = facts('accelerate/fsdp_v1_index.yaml');
    assert.equal(f.facts['parallel.sharding.fsdpStrategy']?.value, 'SHARD_GRAD_OP');
    assert.equal(f.facts['parallel.sharding.stage']?.value, 2);
    assert.equal(f.facts['cluster.worldSize']?.value, 16);
    assert.equal(f.facts['cluster.nodes']?.value, 2);
    assert.equal(f.facts['training.recompute']?.value, 'full');
  });

  test('FSDP2 with parallelism_config (HSDP × TP)', () => {
    const { f } = facts('accelerate/fsdp2_parallelism.yaml');
    const v = (p: PlanPath) => f.facts[p]?.value;
    assert.equal(v('parallel.sharding.style'), 'fsdp2');
    assert.equal(v('parallel.sharding.stage'), 2); // reshard_after_forward false ≈ SHARD_GRAD_OP
    assert.equal(v('parallel.dp'), 8);
    assert.equal(v('parallel.tp'), 2);
  });

  test('DeepSpeed reference with its range', () => {
    const { f, text } = facts('accelerate/deepspeed_ref.yaml');
    const r = f.references.find((x) => x.kind === 'deepspeed');
    assert.equal(r?.target, '../deepspeed/zero2_auto.json');
    assert.deepEqual(r?.range, rangeOf(text, '../deepspeed/zero2_auto.json'));
    assert.equal(f.facts['training.gradAccum']?.value, 4);
  });
});

describe('Axolotl, LLaMA-Factory, HF config.json', () => {
  test('Axolotl keys and the model reference', () => {
    const { f, text, path } = facts('axolotl/llama_ds.yaml');
    assert.equal(detectFormat(path, text), 'axolotl');
    assert.equal(f.facts['model.preset']?.value, 'meta-llama/Llama-3.1-8B');
    assert.equal(f.facts['training.microBatch']?.value, 2);
    assert.equal(f.facts['training.recompute']?.value, 'full');
    assert.ok(f.references.some((r) => r.kind === 'deepspeed'));
  });

  test('Axolotl defaults: micro 1, sequence_len 512, adamw_torch_fused', () => {
    const f = parseConfig('/x/a.yaml', 'base_model: meta-llama/Llama-3.1-8B\ndatasets: []\n', 'axolotl').facts;
    assert.equal(f['training.microBatch']?.value, 1);
    assert.equal(f['training.seqLen']?.value, 512);
    assert.equal(f['training.optimizer']?.value, 'adamw');
  });

  test('LLaMA-Factory turns gradient checkpointing on by default and defaults to LoRA', () => {
    const f = parseConfig('/x/l.yaml', 'model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\ncutoff_len: 1024\n', 'llamafactory').facts;
    assert.equal(f['training.recompute']?.value, 'full');
    assert.equal(f['training.microBatch']?.value, 8); // HF per_device_train_batch_size default
    assert.equal(f['lora.rank']?.value, 8);
  });

  test('HF config.json model facts', () => {
    const { f, path, text } = facts('hf/config.json');
    assert.equal(detectFormat(path, text), 'hf-config');
    assert.equal(f.facts['model.kvHeads']?.value, 8);
    assert.equal(f.facts['model.ffnSize']?.value, 14336);
    assert.deepEqual(f.facts['model.hiddenSize']?.keyRange, rangeOf(text, '"hidden_size"'));
  });

  test('half-typed YAML: keys before the break survive', () => {
    const f = parseConfig('/x/a.yaml', 'base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 4\nsequence_len: [\n', 'axolotl');
    assert.equal(f.facts['training.microBatch']?.value, 4);
    assert.ok(f.diagnostics.some((d) => d.code === 'syntax'));
  });

  test('Lightning CLI: strategy alias, precision, devices × nodes', () => {
    const text = 'trainer:\n  strategy: deepspeed_stage_3_offload\n  precision: bf16-mixed\n  devices: 8\n  num_nodes: 2\n  accumulate_grad_batches: 4\nmodel:\n  class_path: my.Module\n';
    assert.equal(detectFormat('/x/config.yaml', text), 'lightning');
    const f = parseConfig('/x/config.yaml', text).facts;
    assert.equal(f['parallel.sharding.stage']?.value, 3);
    assert.equal(f['parallel.sharding.offloadOptimizer']?.value, 'cpu');
    assert.equal(f['cluster.worldSize']?.value, 16);
    assert.equal(f['training.gradAccum']?.value, 4);
    assert.equal(f['training.precision']?.value, 'bf16-mixed');
  });

  test('Megatron-Bridge override YAML reads parallel and batch keys without inventing a model', () => {
    const text = 'model:\n  tensor_model_parallel_size: 2\n  pipeline_model_parallel_size: 4\n  seq_length: 8192\ntrain:\n  global_batch_size: 128\n  micro_batch_size: 1\nddp:\n  overlap_grad_reduce: true\n';
    const f = parseConfig('/x/override.yaml', text);
    assert.equal(f.format, 'megatron-yaml');
    assert.equal(f.facts['parallel.pp']?.value, 4);
    assert.equal(f.facts['training.globalBatch']?.value, 128);
    assert.equal(f.facts['model.tiedEmbeddings'], undefined);
  });
});
