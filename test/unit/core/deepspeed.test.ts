// DeepSpeed's own buffers (shared/memory/deepspeed.ts), each expected value from DeepSpeed 0.19.8's source
// (runtime/zero/stage_1_and_2.py, stage3.py, partitioned_param_coordinator.py, bf16_optimizer.py, engine.py) or first
// principles; the DeepSpeed JSON keys read from a real config file.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../cli/load';
import {
  dsAllreduceCopyElems, dsBucketBytes, dsFp16WrapperStepBytes, dsPartitionElems, dsRankZeroSpanElems, dsReduceCopyBytes, dsStepCopyBytes, dsZero3ForwardExtraElems, dsZero3GatheredElems,
} from '../../../shared/memory/deepspeed';
import { stageNumbers } from '../../../shared/memory/fast';
import { momentTotal } from '../../../shared/memory/moments';
import type { Plan } from '../../../shared/plan/types';
import { llamaPlan, preset } from './helpers';

// Llama-3-8B at 2 layers (the oracle grid's model): embedding and head 128,256 × 4,096, layers of 218,112,000.
const E = 128_256 * 4096;
const PSI2 = 2 * E + 2 * 218_112_000 + 4096;

describe('DeepSpeed buffers from its source', () => {
  test('partition: the flat group padded to a multiple of 2N, split in N (stage_1_and_2.py __init__)', () => {
    assert.equal(dsPartitionElems(PSI2, 8), 185_862_656);
    assert.equal(dsPartitionElems(1001, 4), 252); // 1001 padded to 1008
  });
  test('buckets: reduce_bucket_size 16-bit elements, two with overlap_comm below ZeRO-3, none without contiguous_gradients', () => {
    assert.equal(dsBucketBytes(5e8, false, true, 2, false), 1e9); // setup_buckets buf_0
    assert.equal(dsBucketBytes(5e8, true, true, 2, false), 2e9); // buf_0 and buf_1 (not 4.5 × the bucket sizes)
    assert.equal(dsBucketBytes(5e8, true, false, 2, false), 0);
    assert.equal(dsBucketBytes(5e8, true, true, 2, true), 1e9); // stage3.py: one per communication dtype
  });
  test('a reduction flattens its chunk: a parameter larger than the bucket on its own, else one bucket', () => {
    const P = 185_862_656;
    // The head's slices of 185.9M elements close a chunk once past 5e8: all 525.3M of it.
    assert.equal(dsReduceCopyBytes(E, 5e8, P, PSI2, 2), 2 * E);
    // With the HF "auto" bucket h² the first slice closes the chunk: h² + one partition at most.
    assert.equal(dsReduceCopyBytes(E, 4096 ** 2, P, PSI2, 2), 2 * (4096 ** 2 + P));
    assert.equal(dsReduceCopyBytes(58_720_256, 5e8, P, PSI2, 2), 1e9);
  });
  test('rank 0 holds every whole parameter overlapping its partition (get_partition_info, copy_grads_in_partition)', () => {
    assert.equal(dsRankZeroSpanElems(E, 185_862_656, 218_112_000, 58_720_256), E);
    // Llama-3-8B (32 layers) on 8 ranks: P = 1,003,782,656. The embedding and two layers leave 42,222,080 elements,
    // which the third layer's q, k, v, o (41,943,040) and its gate projection (58,720,256) cover: DeepSpeed holds
    // P + 58,441,216; the estimate rounds the overhang up to one whole gate projection.
    const P = dsPartitionElems(8_030_261_248, 8);
    assert.equal(P, 1_003_782_656);
    const span = dsRankZeroSpanElems(E, P, 218_112_000, 58_720_256);
    assert.ok(span >= P + 58_441_216 && span <= P + 58_720_256, `${span}`);
  });
  test('the step: fp64 norm copies (get_norm_dtype) or the fp32 cast with its 16-bit flatten', () => {
    const P = 185_862_656;
    assert.equal(dsStepCopyBytes(1, P, E, 8, false, false), 8 * P); // the embedding's slice in fp64
    assert.equal(dsStepCopyBytes(1, 1_003_782_656, E, 8, true, false), 6 * 1_003_782_656);
    assert.equal(dsStepCopyBytes(1, P, E, 8, false, true), 8 * P); // an fp32 partition is handed over as it is
    assert.equal(dsStepCopyBytes(3, P, E, 8, true, false), 6 * P); // 8·⌈E/8⌉ = 525M < 6P = 1.1G
  });
  test('ZeRO-3 keeps max_live parameters gathered, the whole stage once it fits within max_live plus one parameter', () => {
    assert.equal(dsZero3GatheredElems(PSI2, 1e9, E, E), PSI2);
    assert.equal(dsZero3GatheredElems(PSI2, 1e8, E, E), E);
    assert.equal(dsZero3GatheredElems(8_030_261_248, 1e9, E, E), 1e9);
    // The forward adds one prefetch's all-gather buffer (bucket + the crossing parameter) or the head fetched on demand.
    assert.equal(dsZero3ForwardExtraElems(PSI2, 1e9, E, E, 5e7, 58_720_256), 5e7 + 58_720_256);
    assert.equal(dsZero3ForwardExtraElems(PSI2, 1e8, E, E, 5e7, 58_720_256), 1e8);
  });
});

describe('DeepSpeed moments', () => {
  const model = { ...preset('llama-3-8b'), layers: 2 };
  const plan = (stage: 0 | 1 | 2 | 3, x: Record<string, unknown> = {}, training: Record<string, unknown> = {}): Plan =>
    llamaPlan({ engine: 'deepspeed', model, training: { microBatch: 1, seqLen: 2048, precision: 'bf16-mixed', ...training }, parallel: { dp: 8, sharding: { style: 'deepspeed', stage, ...x } }, cluster: { gpusPerNode: 8, nodes: 1 } });
  const moment = (p: Plan, name: string) => stageNumbers(p, 0)!.moments.find((m) => m.name === name);
  test('ZeRO-1 reduces after the backward: 2Ψ weights + 12Ψ/N + every 2Ψ gradient + the bucket + the embedding\'s flat copy', () => {
    const m = moment(plan(1), 'gradient reduction');
    assert.ok(m);
    assert.ok(Math.abs(momentTotal(m) - (2 * PSI2 + (12 * PSI2) / 8 + 2 * PSI2 + 1e9 + 2 * E)) < 1);
  });
  test('no gradient and no bucket before the backward (ZeRO-1/2 free them at the step); ZeRO-3 keeps its partitions and bucket', () => {
    for (const stage of [1, 2] as const) {
      const f = moment(plan(stage, { overlapComm: true }), 'forward')!;
      assert.equal(f.gradients + f.commBuffers, 0);
    }
    const f3 = moment(plan(3), 'forward')!;
    assert.equal(f3.commBuffers, 1e9);
    assert.ok(Math.abs(f3.gradients - 2 * 185_862_656) < 1024);
  });
  test('ZeRO-1 with gradient accumulation carries every gradient and the bucket into the next micro-batch', () => {
    const f = moment(plan(1, {}, { gradAccum: 2 }), 'loss backward')!;
    assert.ok(Math.abs(f.gradients - 2 * PSI2) < 1);
    assert.equal(f.commBuffers, 1e9);
  });
  test('BF16_Optimizer (ZeRO-1 + fp32 accumulation): fp32 gradients 4Ψ always, reduced through a 16-bit copy 2Ψ', () => {
    const m = moment(plan(1, {}, { fp32GradAccum: true }), 'gradient reduction')!;
    assert.ok(Math.abs(m.gradAccumBuffer - 4 * PSI2) < 1);
    assert.ok(Math.abs(m.engineCopies - 2 * PSI2) < 1);
    assert.equal(m.commBuffers, 0);
  });
  // Without ZeRO, bf16 runs DDP_BFLOAT16: FP16_UnfusedOptimizer (fp16/unfused_optimizer.py) around the torch optimizer.
  test('the FP16 wrapper\'s step: 2Ψ weights, 2Ψ gradients, 4Ψ master, 8Ψ Adam and the 4Ψ fp32 casts = 20Ψ, no bucket', () => {
    const p = plan(0);
    const step = moment(p, 'optimizer step')!;
    assert.ok(Math.abs(momentTotal(step) - 20 * PSI2) < 1, `${momentTotal(step)} vs ${20 * PSI2}`);
    assert.ok(Math.abs(step.engineCopies - 4 * PSI2) < 1);
    for (const m of stageNumbers(p, 0)!.moments.slice(0, 8)) assert.equal(m.commBuffers, 0, m.name);
  });
  test('the FP16 wrapper holds no gradient before the first backward\'s head gradient; a second micro-batch carries 2Ψ', () => {
    assert.equal(moment(plan(0), 'loss backward')!.gradients, 0);
    assert.equal(moment(plan(0), 'head gradient')!.gradients, 2 * E); // the untied head, 128,256 × 4,096
    assert.ok(Math.abs(moment(plan(0, {}, { gradAccum: 2 }), 'loss backward')!.gradients - 2 * PSI2) < 1);
    // The embedding's gradient, the backward's last, is made beside the accumulated one.
    assert.ok(Math.abs(moment(plan(0, {}, { gradAccum: 2 }), 'embedding gradient')!.gradients - 2 * (PSI2 + E)) < 1);
  });
  test('FusedAdam from the JSON: FP16_Optimizer flattens the fp32 casts beside them, 8Ψ at the step, 24Ψ in all', () => {
    // fp16/fused_optimizer.py step: _flatten_dense_tensors([p.grad.to(fp32) for p in group]) holds the list and the flat copy.
    assert.equal(dsFp16WrapperStepBytes(1000, true), 8000);
    assert.equal(dsFp16WrapperStepBytes(1000, false), 4000);
    const step = moment(plan(0, { dsFusedAdam: true }), 'optimizer step')!;
    assert.ok(Math.abs(momentTotal(step) - 24 * PSI2) < 1, `${momentTotal(step)} vs ${24 * PSI2}`);
  });
  test('the all-reduce without ZeRO flattens at most 5·10⁸ elements plus the parameter that crosses (engine.py allreduce_no_retain)', () => {
    assert.equal(dsAllreduceCopyElems(PSI2, E), 5e8 + E);
    assert.equal(dsAllreduceCopyElems(1e8, 5e7), 1e8); // a stage smaller than a bucket: one copy of it all
    const m = moment(plan(0), 'gradient reduction')!;
    assert.ok(Math.abs(m.engineCopies - 2 * (5e8 + E)) < 1);
    assert.ok(Math.abs(m.gradients - 2 * PSI2) < 1);
  });
});

describe('DeepSpeed JSON keys the estimate reads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'shardlens-ds-'));
  async function planOf(zero: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<Plan> {
    const p = join(dir, `ds_${Object.keys(zero).join('_')}.json`);
    writeFileSync(p, JSON.stringify({ train_micro_batch_size_per_gpu: 1, bf16: { enabled: true }, zero_optimization: zero, ...extra }));
    const plan = (await loadConfig(p, { gpus: '8xH100', model: 'llama-3-8b' })).resolved.plan;
    assert.ok(plan);
    return plan;
  }
  test('contiguous_gradients false: no reduction buckets', async () => {
    const on = await planOf({ stage: 2, overlap_comm: true });
    const off = await planOf({ stage: 2, overlap_comm: true, contiguous_gradients: false });
    assert.equal(off.parallel.sharding.contiguousGradients, false);
    assert.equal(stageNumbers(on, 0)!.commBuffers, 2e9);
    assert.equal(stageNumbers(off, 0)!.commBuffers, 0);
  });
  test('data_types.grad_accum_dtype fp32 with ZeRO-1 runs BF16_Optimizer (engine.py _do_optimizer_sanity_check)', async () => {
    const p = await planOf({ stage: 1 }, { data_types: { grad_accum_dtype: 'fp32' } });
    assert.equal(stageNumbers(p, 0)!.ds.kind, 2);
  });
  // runtime/engine.py `_configure_basic_optimizer`: Adam/AdamW build FusedAdam unless params.torch_adam; others do not.
  const FUSED: [Record<string, unknown>, boolean | undefined][] = [
    [{ type: 'AdamW', params: { lr: 1e-4 } }, true], [{ type: 'Adam' }, true], [{ type: 'AdamW', params: { torch_adam: true } }, false],
    [{ type: 'Lamb' }, undefined],
  ];
  for (const [optimizer, want] of FUSED) {
    test(`optimizer ${JSON.stringify(optimizer)}: FusedAdam ${want ?? 'not said'}`, async () => {
      const p = await planOf({ stage: 0 }, { optimizer });
      assert.equal(p.parallel.sharding.dsFusedAdam, want);
      // Without ZeRO the step's transient copies are 8Ψ with FP16_Optimizer, 4Ψ with FP16_UnfusedOptimizer.
      const s = stageNumbers(p, 0)!;
      assert.equal(s.ds.kind, 4);
      assert.ok(Math.abs(s.ds.step / (2 * s.paramsPerRank) - (want ? 4 : 2)) < 1e-9);
    });
  }
  test('no optimizer block (the HF Trainer passes its torch AdamW): FP16_UnfusedOptimizer', async () => {
    const p = await planOf({ stage: 0 });
    assert.equal(p.parallel.sharding.dsFusedAdam, undefined);
    assert.equal(stageNumbers(p, 0)!.ds.kind, 4);
  });
});
