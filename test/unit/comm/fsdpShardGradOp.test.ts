/**
 * FSDP at ZeRO stage 2 (ShardingStrategy.SHARD_GRAD_OP; FSDP2 fully_shard with reshard_after_forward=False) shards
 * the parameters and gathers them in every micro-batch's forward, keeping them until that micro-batch's backward is
 * done (torch/distributed/fsdp docs; torch _composable/fsdp fully_shard): one gather of every weight per micro-batch,
 * behind the forward. DeepSpeed's ZeRO-2 keeps whole parameters and gathers the updated partitions once, after the
 * optimizer step (Rajbhandari et al. 2020 §5.2). Expected counts from those rules; sizes Ψ·2 bytes per gather.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findGpu } from '../../../shared/hardware/gpus';
import type { GpuSpec } from '../../../shared/plan/types';
import { TimeCache } from '../../../shared/time/cache';
import { stageComm } from '../../../shared/time/stageComm';
import { gpt, plan } from '../sim/fixtures';

const H100 = findGpu('h100-sxm') as GpuSpec;
const layout = (style: 'fsdp2' | 'deepspeed', m: number) => plan({
  model: gpt(8, 2048, 16), training: { microBatch: 1, globalBatch: 8 * m, seqLen: 2048, precision: 'bf16-mixed' },
  parallel: { dp: 8, sharding: { style, stage: 2 } }, cluster: { gpu: H100, gpusPerNode: 8, nodes: 1 },
});

describe('parameter gathers at ZeRO stage 2', () => {
  test('FSDP2 stage 2 over 4 micro-batches: a gather of every weight in each forward, listed as FSDP\'s', () => {
    const p = layout('fsdp2', 4);
    const cache = new TimeCache();
    const c = stageComm(p, 0, cache).collectives;
    const ag = c.find((x) => x.id === 'zero3-param-all-gather');
    assert.ok(ag, c.map((x) => x.id).join(', '));
    assert.equal(ag.countPerStep, 4);
    assert.ok(!c.some((x) => x.id === 'zero-param-all-gather'));
    assert.equal(cache.stageTraffic(p, 0).agBytes, cache.stageParams(p, 0).dense * 2);
  });

  test('DeepSpeed ZeRO-2: one gather of the updated weights after the step', () => {
    const c = stageComm(layout('deepspeed', 4), 0, new TimeCache()).collectives;
    const ag = c.find((x) => x.id === 'zero-param-all-gather');
    assert.ok(ag, c.map((x) => x.id).join(', '));
    assert.equal(ag.countPerStep, 1);
  });
});
