/** makePlan defaults and sources, and activation scaling laws from first principles. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePlan } from '../../../shared/plan/defaults';
import { estimateMemory } from '../../../shared/memory/estimate';
import { H100, llamaPlan, preset } from './helpers';

describe('makePlan', () => {
  test('missing fields get defaults with kind "default"; given ones are explicit', () => {
    const p = makePlan({ model: preset('gpt2'), training: { microBatch: 4 } }, H100);
    assert.equal(p.training.microBatch, 4);
    assert.equal(p.sources['training.microBatch']?.kind, 'explicit');
    assert.equal(p.training.optimizer, 'adamw');
    assert.equal(p.sources['training.optimizer']?.kind, 'default');
    assert.equal(p.parallel.sharding.stage, 0);
    assert.equal(p.cluster.gpu.id, 'h100-sxm');
  });
  test('DP comes from the cluster, accumulation from the global batch', () => {
    const p = makePlan({ model: preset('llama-3-8b'), training: { microBatch: 2, globalBatch: 256 }, parallel: { tp: 2, pp: 2 }, cluster: { gpusPerNode: 8, nodes: 4 } });
    assert.equal(p.parallel.dp, 8);
    assert.equal(p.sources['parallel.dp']?.kind, 'derived');
    assert.equal(p.training.gradAccum, 16);
    assert.equal(p.parallel.sharding.shardGroupSize, 8);
  });
  test('a default cluster always matches the world size (12 GPUs → 3 nodes × 4)', () => {
    const p = makePlan({ model: preset('llama-3-8b'), parallel: { dp: 3, tp: 4 } });
    assert.equal(p.cluster.gpusPerNode * p.cluster.nodes, 12);
  });
  test('FSDP strategies map to ZeRO stages', () => {
    const st = (fsdpStrategy: 'FULL_SHARD' | 'SHARD_GRAD_OP' | 'NO_SHARD') => makePlan({ model: preset('gpt2'), parallel: { sharding: { style: 'fsdp', fsdpStrategy } } }).parallel.sharding.stage;
    assert.deepEqual([st('FULL_SHARD'), st('SHARD_GRAD_OP'), st('NO_SHARD')], [3, 2, 0]);
  });
  test('explicit sources given by a resolver are kept', () => {
    const src = { kind: 'explicit' as const, detail: 'ds.json: train_micro_batch_size_per_gpu' };
    const p = makePlan({ model: preset('gpt2'), training: { microBatch: 2 }, sources: { 'training.microBatch': src } });
    assert.equal(p.sources['training.microBatch'], src);
  });
});

describe('activation scaling (first principles)', () => {
  // Korthikanti et al.'s counts are Megatron-core's (shared/memory/activations.ts); eager PyTorch blocks: blocks.test.ts.
  // fp32 main_grad (Megatron's default): the stage peaks in the backward with every activation live, not at the
  // optimizer step's fp32 copy of a 16-bit main_grad.
  const act = (over: Parameters<typeof llamaPlan>[0]) =>
    estimateMemory(llamaPlan({ engine: 'megatron', ...over, training: { gradDtype: 'fp32', ...over?.training } })).stages[0].terms.activations!.bytes;
  test('TP + SP with flash attention divides every per-layer activation by t (Korthikanti Eq.4 without the s² term)', () => {
    assert.equal(act({ parallel: { tp: 2, sp: true } }), act({}) / 2);
  });
  test('TP without SP keeps the replicated 4B·sbh part (Eq.2)', () => {
    const one = act({}), two = act({ parallel: { tp: 2 } });
    // Llama has no dropout: replicated = 4·2·sbh per layer, s = 2048, b = 1, h = 4096, 32 layers.
    const replicated = 32 * 8 * 2048 * 4096;
    assert.equal(two, replicated + (one - replicated) / 2);
  });
  test('context parallelism divides the sequence (flash attention: exactly 1/cp)', () => {
    assert.equal(act({ parallel: { cp: 2 } }), act({}) / 2);
  });
  test('micro batch scales activations linearly', () => {
    assert.equal(act({ training: { microBatch: 4 } }), 4 * act({}));
  });
  test('recomputing half the layers lies between none and full', () => {
    const full = act({ training: { recompute: 'full' } });
    const half = act({ training: { recompute: 'full', recomputeLayers: 16 } });
    const none = act({ training: { recompute: 'none' } });
    assert.ok(full < half && half < none);
  });
});
