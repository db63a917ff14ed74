/**
 * Axolotl's expert parallelism (the DeepEP plugin, src/axolotl/integrations/expert_parallel/ at 067b021c): the mesh is
 * (ep, dp_shard, cp, tp) with ep outside dp_shard; the plugin requires ep × dp_shard × tp × cp = world size
 * (plugin.py `_resolve_ep_group`), splits the routed experts E/ep per rank and FSDP-shards them over dp_shard only
 * (`fully_shard_experts`), and the outer FSDP wrap shards every other weight over ep × dp_shard × cp (the patched
 * `_dp_shard_cp_dim_names` in monkeypatch/accelerate/parallelism_config.py). Without FSDP (pure EP) the experts are
 * left out of torch DDP (`_ddp_params_and_buffers_to_ignore`, shard.py), so DDP's buckets hold the other weights only.
 *
 * Expected counts from first principles on Qwen3-30B-A3B's config.json (hidden 2048, 48 layers, 128 experts of
 * width 768, 32 query and 4 K/V heads of 128, vocabulary 151,936, untied head): experts 48·128·3·2048·768 =
 * 28,991,029,248; the rest (embedding and head 2·151,936·2048, attention 2048·4096·2 + 2048·512·2, router 2048·128,
 * norms) 1,541,093,376. accelerate's FSDP2 upcasts trained weights to fp32 (fsdp_utils.py `fsdp2_prepare_model`).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { estimateMemory } from '../../../shared/memory/estimate';
import { rangeOf } from './helpers';

const EXPERTS = 48 * 128 * 3 * 2048 * 768;
const REST = 2 * 151936 * 2048 + 48 * (2 * 2048 * 4096 + 2 * 2048 * 512 + 2048 * 128 + 2 * 128 + 2 * 2048) + 2048;

const HEAD = 'base_model: Qwen/Qwen3-30B-A3B-Instruct-2507\nplugins:\n  - axolotl.integrations.expert_parallel.ExpertParallelPlugin\n'
  + 'experts_implementation: grouped_mm\nsequence_len: 2048\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\n'
  + 'optimizer: adamw_torch_8bit\nbf16: true\ngradient_checkpointing: true\nflash_attention: true\n';
const FSDP = 'fsdp_config:\n  fsdp_version: 2\n  auto_wrap_policy: TRANSFORMER_BASED_WRAP\n  transformer_layer_cls_to_wrap: Qwen3MoeDecoderLayer\n  reshard_after_forward: true\n';
const URI = 'file:///ws/qwen3_ep.yaml';

describe('Axolotl expert parallelism', () => {
  before(async () => { await initFormats(); });

  test('EP × dp_shard: the world size is their product, every rank is data-parallel, the shard group spans both', () => {
    const text = `${HEAD}expert_parallel_size: 2\ndp_shard_size: 2\n${FSDP}`;
    const f = parseConfig(URI, text).facts;
    assert.equal(f['cluster.worldSize']?.value, 4);
    assert.equal(f['cluster.worldSize']?.source.kind, 'derived');
    assert.equal(f['parallel.dp']?.value, 4);
    assert.equal(f['parallel.ep']?.value, 2);
    // DeepEP is the plugin's only backend (args.py expert_parallel_backend: Literal["deep_ep"]).
    assert.equal(f['parallel.epDispatcher']?.value, 'deepep');
    assert.equal(f['parallel.sharding.shardGroupSize']?.value, 4);
    assert.deepEqual(f['parallel.sharding.shardGroupSize']?.source.range, valueRange(text, 'dp_shard_size'));
  });

  test('EP × dp_shard on 4 GPUs: every weight\'s fp32 copy is split four ways (experts E/ep over dp_shard, the rest over ep × dp_shard)', () => {
    const plan = resolvePlan(parseConfig(URI, `${HEAD}expert_parallel_size: 2\ndp_shard_size: 2\n${FSDP}`), [], { settings: { gpu: 'h100-sxm' } }).plan;
    assert.ok(plan);
    assert.equal(plan.cluster.nodes * plan.cluster.gpusPerNode, 4);
    const m = estimateMemory(plan);
    const want = ((EXPERTS + REST) * 4) / 4;
    const got = m.stages[0].terms.parameters!.bytes;
    assert.ok(Math.abs(got - want) <= 1e-6 * want, `${got} vs ${want}`);
    // Before: the experts counted as not sharded past EP (the shard group read as dp_shard alone): 2× the bytes.
    assert.ok(got < 0.6 * ((EXPERTS / 2 + REST / 2) * 4));
  });

  test('pure EP under DDP: the experts are split E/ep and left out of DDP\'s buckets, which hold the other weights\' fp32 gradients', () => {
    const plan = resolvePlan(parseConfig(URI, `${HEAD}expert_parallel_size: 4\n`), [], { settings: { gpu: 'h100-sxm' } }).plan;
    assert.ok(plan);
    assert.equal(plan.cluster.nodes * plan.cluster.gpusPerNode, 4);
    assert.equal(plan.parallel.sharding.stage, 0);
    const m = estimateMemory(plan);
    assert.equal(m.stages[0].terms.parameters!.bytes, (EXPERTS / 4 + REST) * 4);
    assert.equal(m.stages[0].terms.commBuffers!.bytes, REST * 4);
  });

  test('dp_replicate_size and tensor parallelism stop the plugin: errors at the keys', () => {
    const rep = `${HEAD}expert_parallel_size: 2\ndp_shard_size: 2\ndp_replicate_size: 2\n${FSDP}`;
    const d = parseConfig(URI, rep).diagnostics.find((x) => x.code === 'axolotl-ep-replicate');
    assert.equal(d?.severity, 'error');
    assert.deepEqual(d?.range, valueRange(rep, 'dp_replicate_size'));
    const tp = `${HEAD}expert_parallel_size: 2\ntensor_parallel_size: 2\n`;
    const e = parseConfig(URI, tp).diagnostics.find((x) => x.code === 'axolotl-ep-tp');
    assert.equal(e?.severity, 'error');
    assert.equal(e?.range?.start.line, tp.slice(0, tp.indexOf('expert_parallel_size')).split('\n').length - 1);
  });

  test('a world size set elsewhere that is not the product is an error, not a silent re-layout', () => {
    const plan = resolvePlan(parseConfig(URI, `${HEAD}expert_parallel_size: 2\ndp_shard_size: 2\n${FSDP}`), [], { settings: { gpu: 'h100-sxm', worldSize: 8 } });
    const codes = plan.problems.filter((p) => p.severity === 'error').map((p) => p.message).join('\n');
    assert.match(codes, /world size is 8/);
  });

  test('without EP the reader keeps dp_shard_size as the shard group', () => {
    const f = parseConfig(URI, `${HEAD}dp_shard_size: 2\n${FSDP}`).facts;
    assert.equal(f['parallel.sharding.shardGroupSize']?.value, 2);
    assert.equal(f['cluster.worldSize'], undefined);
  });
});

/** The range of a top-level key's value, `key: value` on one line (zero-based lines and characters). */
function valueRange(text: string, key: string): ReturnType<typeof rangeOf> {
  const line = text.split('\n').findIndex((l) => l.startsWith(`${key}: `));
  const value = text.split('\n')[line]!.slice(key.length + 2);
  return { start: { line, character: key.length + 2 }, end: { line, character: key.length + 2 + value.length } };
}
