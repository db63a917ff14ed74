/**
 * Facts → Plan. Expected numbers: DeepSpeed's batch rules (runtime/config.py `_set_batch_related_parameters`,
 * docs/formats/README.md#the-batch-identity-and-deepspeeds-auto), HF Trainer's "auto" filling (integrations/deepspeed.py: reduce_bucket_size = h²,
 * stage3_prefetch_bucket_size = 0.9·h², micro batch default 8), Megatron DP = world / (TP·PP·CP).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { findReferencing, loadConfigGraph } from '../../../server/formats/workspace';
import { resolvePlan } from '../../../shared/plan/resolve';
import { fixture, memoryHost } from './helpers';

const ds = fixture('deepspeed/zero2_auto.json').text;
const axo = fixture('axolotl/llama_ds.yaml').text;

describe('resolvePlan', () => {
  before(async () => { await initFormats(); });

  test('"auto" resolved from the Axolotl file that references the DeepSpeed JSON', () => {
    const host = memoryHost({ '/ws/deepspeed/zero2_auto.json': ds, '/ws/axolotl/llama_ds.yaml': axo });
    const g = loadConfigGraph('/ws/deepspeed/zero2_auto.json', host, { settings: { worldSize: 8 } });
    assert.equal(g.related.length, 1);
    const p = g.resolved.plan!;
    assert.equal(p.training.microBatch, 2);
    assert.equal(p.training.gradAccum, 8);
    assert.equal(p.training.globalBatch, 2 * 8 * 8);
    assert.equal(p.training.precision, 'bf16-mixed');
    assert.equal(p.parallel.sharding.stage, 2);
    assert.equal(p.parallel.sharding.reduceBucketElems, 4096 * 4096); // "auto" = hidden² for Llama-3.1-8B
    assert.equal(p.sources['training.microBatch']?.kind, 'referenced');
    assert.match(p.sources['training.microBatch']!.detail, /"auto" in zero2_auto\.json.*llama_ds\.yaml/);
    assert.ok(!g.resolved.assumptions.some((a) => a.path === 'training.microBatch'));
  });

  test('a stored calibration for the plan\'s GPU adds its overhead and sets the kernel speed, and says so', () => {
    const host = memoryHost({ '/ws/deepspeed/zero2_auto.json': ds, '/ws/axolotl/llama_ds.yaml': axo });
    const settings = { gpu: 'A100-80GB', gpusPerNode: 8, nodes: 1, cudaContextBytes: 2 ** 30 };
    const plain = loadConfigGraph('/ws/axolotl/llama_ds.yaml', host, { settings }).resolved.plan!;
    const correction = { clusterId: 'a100-80gb', overheadBytes: 3 * 2 ** 30, efficiency: 0.5, warnings: [],
      source: { device: 'cuda', mode: 'ddp', worldSize: 8, createdAt: '2026-11-29', engine: 'torch 2.4' } };
    const other = { ...correction, clusterId: 'h100-sxm' };
    const cal = loadConfigGraph('/ws/axolotl/llama_ds.yaml', host, { settings: { ...settings, calibration: { 'a100-80gb': correction, 'h100-sxm': other } } }).resolved.plan!;
    // First principles: the measured extra bytes are added once to the context term, the efficiency is the kernel speed.
    assert.equal(cal.overhead.cudaContextBytes, plain.overhead.cudaContextBytes + 3 * 2 ** 30);
    assert.equal(cal.cluster.gpu.kernelSpeed, 0.5);
    assert.equal(cal.cluster.gpu.achievableFlopsFraction, plain.cluster.gpu.achievableFlopsFraction);
    assert.equal(cal.sources['overhead.cudaContextBytes']?.kind, 'setting');
    assert.match(cal.sources['overhead.cudaContextBytes']!.detail, /shardlens\.calibration\["a100-80gb"\]/);
    // A correction for another GPU does not apply.
    const onlyOther = loadConfigGraph('/ws/axolotl/llama_ds.yaml', host, { settings: { ...settings, calibration: { 'h100-sxm': other } } }).resolved.plan!;
    assert.equal(onlyOther.overhead.cudaContextBytes, plain.overhead.cudaContextBytes);
  });

  test('the referencing file sees the DeepSpeed JSON it names', () => {
    const host = memoryHost({ '/ws/deepspeed/zero2_auto.json': ds, '/ws/axolotl/llama_ds.yaml': axo });
    const g = loadConfigGraph('/ws/axolotl/llama_ds.yaml', host, { settings: { gpu: 'A100-80GB', gpusPerNode: 8, nodes: 2 } });
    const p = g.resolved.plan!;
    assert.deepEqual(g.dependencies, ['/ws/deepspeed/zero2_auto.json']);
    assert.equal(p.parallel.sharding.style, 'deepspeed');
    assert.equal(p.parallel.sharding.offloadOptimizer, 'cpu');
    assert.equal(p.parallel.dp, 16);
    assert.match(p.cluster.gpu.name, /A100/);
    assert.equal(p.sources['parallel.sharding.stage']?.kind, 'referenced');
    assert.deepEqual(findReferencing('/ws/deepspeed/zero2_auto.json', host), ['/ws/axolotl/llama_ds.yaml']);
  });

  test('"auto" with no referencing file: HF Trainer defaults, each an assumption', () => {
    const r = resolvePlan(parseConfig('/x/ds_config.json', ds), [], { settings: { worldSize: 4, model: 'Llama-3.1-8B' } });
    assert.equal(r.plan?.training.microBatch, 8);
    assert.equal(r.plan?.training.gradAccum, 1);
    assert.equal(r.plan?.training.globalBatch, 32);
    const a = r.assumptions.find((x) => x.path === 'training.microBatch');
    assert.match(a!.detail, /HF Trainer/);
    assert.ok(r.assumptions.some((x) => x.path === 'training.precision'));
    assert.ok(r.assumptions.some((x) => x.path === 'cluster.gpu' && x.setting === 'shardlens.cluster.gpu'));
  });

  test('batch identity derived as DeepSpeed does: GAS = train / (micro · dp)', () => {
    const f = parseConfig('/x/ds_config.json', '{"train_batch_size": 256, "train_micro_batch_size_per_gpu": 8}');
    const r = resolvePlan(f, [], { settings: { worldSize: 8, model: 'Llama-3.1-8B' } });
    assert.equal(r.plan?.training.gradAccum, 4);
    assert.equal(r.plan?.sources['training.gradAccum']?.kind, 'derived');
    const only = resolvePlan(parseConfig('/x/ds_config.json', '{"train_batch_size": 64}'), [], { settings: { worldSize: 8, model: 'Llama-3.1-8B' } });
    assert.equal(only.plan?.training.gradAccum, 1);
    assert.equal(only.plan?.training.microBatch, 8);
  });

  test('broken batch identity is an error naming the numbers', () => {
    const f = parseConfig('/x/ds_config.json', '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4}');
    const r = resolvePlan(f, [], { settings: { worldSize: 16, model: 'Llama-3.1-8B' } });
    const p = r.problems.find((x) => x.code === 'batch-identity');
    assert.equal(p?.severity, 'error');
    assert.match(p!.message, /64.*2.*4.*16.*128/);
  });

  test('Megatron script: inline model, DP from the launcher world size', () => {
    const { path, text } = fixture('megatron/pretrain_llama.sh');
    const r = resolvePlan(parseConfig(path, text), []);
    const p = r.plan!;
    assert.equal(p.model.layers, 32);
    assert.equal(p.model.kvHeads, 8);
    assert.equal(p.parallel.dp, 2); // 16 / (4 · 2)
    assert.equal(p.training.gradAccum, 16); // 32 / (1 · 2)
    assert.equal(p.parallel.sharding.stage, 1);
    assert.ok(!r.assumptions.some((a) => a.path === 'cluster.worldSize'));
  });

  test('world size that does not fit the degrees is a problem', () => {
    const f = parseConfig('/x/run.sh', 'torchrun --nproc_per_node 6 pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 --tensor-model-parallel-size 4 --micro-batch-size 1');
    const r = resolvePlan(f, []);
    assert.ok(r.problems.some((x) => x.code === 'world-not-divisible'));
  });

  test('model from a config.json in the workspace; missing DeepSpeed file is a warning', () => {
    const cfg = fixture('hf/config.json').text;
    const host = memoryHost({ '/ws/acme/tiny/config.json': cfg, '/ws/train.yaml': 'base_model: acme/tiny\nmicro_batch_size: 1\ndeepspeed: missing.json\n' });
    const g = loadConfigGraph('/ws/train.yaml', host);
    assert.equal(g.resolved.plan?.model.hiddenSize, 4096);
    assert.equal(g.resolved.plan?.sources.model?.kind, 'referenced');
    assert.ok(g.resolved.problems.some((p) => p.code === 'reference-missing'));
  });

  test('unknown model: estimate with an assumed preset, said so', () => {
    const r = resolvePlan(parseConfig('/x/a.yaml', 'base_model: nobody/unknown-model-7b\nmicro_batch_size: 1\n', 'axolotl'), []);
    assert.ok(r.plan);
    assert.ok(r.problems.some((p) => p.code === 'model-unknown' && p.severity === 'warning'));
    assert.ok(r.assumptions.some((a) => a.path === 'model' && a.setting === 'shardlens.model'));
  });

  test('a value that disagrees with the referencing file is the HF Trainer "mismatch" warning', () => {
    const dsFixed = parseConfig('/ws/ds_config.json', '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}');
    const ax = parseConfig('/ws/a.yaml', 'base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 2\ndeepspeed: ds_config.json\n', 'axolotl');
    const r = resolvePlan(dsFixed, [ax], { settings: { worldSize: 8 } });
    assert.ok(r.problems.some((p) => p.code === 'hf-ds-mismatch' && p.paths.includes('training.microBatch')));
  });

  test('Axolotl inline DeepSpeed dict is read in place', () => {
    const f = parseConfig('/x/a.yaml', 'base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\ndeepspeed:\n  zero_optimization:\n    stage: 3\n    bogus: 1\n', 'axolotl');
    assert.equal(f.facts['parallel.sharding.stage']?.value, 3);
    assert.equal(f.facts['parallel.sharding.style']?.value, 'deepspeed');
    assert.ok(f.diagnostics.some((d) => d.code === 'ds-unknown-key' && d.range.start.line === 5));
  });

  test('Megatron uneven first/last pipeline stages become stageLayers', () => {
    const f = parseConfig('/x/run.sh', 'torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 30 --hidden-size 1024 --num-attention-heads 16 --pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 6 --decoder-last-pipeline-num-layers 6 --micro-batch-size 1');
    const r = resolvePlan(f, []);
    assert.deepEqual(r.plan?.parallel.stageLayers, [6, 9, 9, 6]); // (30 − 6 − 6) / 2 = 9 on the middle stages
  });

  test('HSDP: the shard group is DP / replicas when only the replica count is given', () => {
    const f = parseConfig('/x/j.toml', '[model]\nname = "llama3"\nflavor = "8B"\n[training]\nlocal_batch_size = 1\n[parallelism]\ndata_parallel_replicate_degree = 2\n', 'torchtitan');
    const r = resolvePlan(f, [], { settings: { worldSize: 16 } });
    assert.equal(r.plan?.parallel.dp, 16);
    assert.equal(r.plan?.parallel.sharding.shardGroupSize, 8);
  });
});
