/**
 * Step-time terms that follow what the engines do (docs/time-model.md §3, §7): FSDP2's copy-out and reduce copy-in,
 * the shard group spanning the CP ranks, the load-balanced ring's kernels and fp32 merges, torchao's float8 TP
 * all-gathers, the optimizer's passes per implementation. Expected values come from the engines' source as each test
 * names it, or from first principles.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import timing from '../../../data/timing.json';
import { layoutLinks } from '../../../shared/comm/layout';
import { stageParams } from '../../../shared/comm/stageParams';
import { stageTraffic } from '../../../shared/comm/stageTraffic';
import { fsdp2CopyOutBytes, fsdp2ReduceCopyInBytes } from '../../../shared/comm/volumes';
import { findGpu } from '../../../shared/hardware/gpus';
import type { GpuSpec, Plan } from '../../../shared/plan/types';
import { estimateStepTime } from '../../../shared/time/estimate';
import { asyncTpReduceBytes } from '../../../shared/time/kernels/elementwise';
import { ringAttentionBlocks, ringKvHeads, ringMergeBytes, ringStepBytes, torchRingGatherBytes, torchRingGradBytes } from '../../../shared/time/kernels/ring';
import { optimizerTrafficBytesPerParam, trainableShardParams } from '../../../shared/time/optimizer';
import { A100, gpt, plan } from '../sim/fixtures';

const H100 = findGpu('h100-sxm') as GpuSpec;
const model = gpt(12, 1024, 16);

describe('FSDP2 copies on the compute stream (torch/distributed/_composable/fsdp/_fsdp_collectives.py)', () => {
  test('copy-out reads and writes every gathered element (split_with_sizes_copy): 2·Ψ·B_param', () => {
    assert.equal(fsdp2CopyOutBytes(1e9, 2), 4e9);
    assert.equal(fsdp2CopyOutBytes(1e9, 1), 2e9, 'a float8 all-gather copies 1-byte elements');
  });

  test('reduce copy-in reads bf16 gradients and writes the fp32 reduce-scatter input: Ψ·(2 + 4)', () => {
    assert.equal(fsdp2ReduceCopyInBytes(1e9, 2, 4), 6e9);
  });

  const mk = (style: 'fsdp2' | 'fsdp' | 'deepspeed', reshard: boolean): Plan => plan({
    model, training: { microBatch: 1, gradAccum: 1, seqLen: 1024, precision: 'bf16-mixed', gradDtype: 'fp32' },
    parallel: { dp: 8, sharding: { style, stage: 3, reshardAfterForward: reshard } }, cluster: { gpu: A100, gpusPerNode: 8 },
  });
  const traffic = (p: Plan) => stageTraffic(p, 0, layoutLinks(p), stageParams(p, 0));

  test('FSDP2 resharding after forward: one copy-out forward; copy-out and copy-in backward', () => {
    const p = mk('fsdp2', true);
    const psi = stageParams(p, 0).dense;
    const t = traffic(p);
    assert.equal(t.copyForwardBytes, 2 * psi * 2);
    assert.equal(t.copyBackwardBytes, 2 * psi * 2 + psi * (2 + 4));
  });

  test('FSDP2 without resharding gathers once: no backward copy-out', () => {
    const p = mk('fsdp2', false);
    const psi = stageParams(p, 0).dense;
    assert.equal(traffic(p).copyBackwardBytes, psi * (2 + 4));
  });

  test('FSDP1 and DeepSpeed ZeRO-3 are not charged FSDP2\'s copies', () => {
    for (const style of ['fsdp', 'deepspeed'] as const) {
      const t = traffic(mk(style, true));
      assert.equal(t.copyForwardBytes + t.copyBackwardBytes, 0, style);
    }
  });
});

describe('the shard group spans the CP ranks (torchtitan dp_shard × cp; Megatron DP × CP)', () => {
  const mk = (shard: number, cp: number, gpus: number): Plan => plan({
    model, training: { microBatch: 1, gradAccum: 1, seqLen: 4096 },
    parallel: { dp: gpus / cp, cp, sharding: { style: 'fsdp2', stage: 3, shardGroupSize: shard } }, cluster: { gpu: H100, gpusPerNode: 8 },
  });

  test('FSDP 4 × CP 2 on one node: one shard group of 8 on NVLink, no replicas', () => {
    const l = layoutLinks(mk(4, 2, 8));
    assert.equal(l.shard, 8);
    assert.equal(l.replicas, 1);
    assert.equal(l.shardLink.size, 8);
    assert.equal(l.shardLink.tier, 'nvlink');
  });

  test('FSDP 1 × CP 8: the eight CP ranks are the shard group, and each updates an eighth of the parameters', () => {
    const p = mk(1, 8, 8);
    assert.equal(layoutLinks(p).shard, 8);
    assert.equal(trainableShardParams(p, 0), stageParams(p, 0).trainable / 8);
  });

  test('HSDP FSDP 8 × 2 replicas on 16 GPUs: the shard group fills a node, the replica pair spans two', () => {
    const l = layoutLinks(mk(8, 1, 16));
    assert.equal(l.shardLink.tier, 'nvlink');
    assert.equal(l.replicaLink.size, 2);
    assert.equal(l.replicaLink.tier, 'network');
    assert.equal(l.replicaLink.perNode, 1);
  });
});

describe('load-balanced ring attention (torch/distributed/tensor/experimental/_attention.py)', () => {
  test('step 0 is the causal block of the rank\'s two chunks (1/cp of its work at s/cp tokens); the others run on s/(2·cp)', () => {
    assert.deepEqual(ringAttentionBlocks(65536, 2), { diagonalShare: 0.5, diagonalSeq: 32768, offSeq: 16384 });
    assert.deepEqual(ringAttentionBlocks(262144, 8), { diagonalShare: 0.125, diagonalSeq: 32768, offSeq: 16384 });
  });

  test('PyTorch merges in fp32 eager ops: B + 36 bytes per output element and step, K and V concatenated (2B each)', () => {
    const q = 1000, kv = 250, B = 2;
    assert.equal(ringMergeBytes(true, 1, q, kv, B).fwd, q * 38 + 2 * kv * 4);
    // Backward: dQ += (8 + B), dK and dV += and concatenated (16 + B each), K and V concatenated again (2B each).
    assert.equal(ringMergeBytes(true, 1, q, kv, B).bwd, q * 10 + 2 * kv * 18 + 2 * kv * 4);
    assert.deepEqual(ringMergeBytes(true, 0, q, kv, B), { fwd: 0, bwd: 0 });
  });

  test('Transformer Engine corrects in fused kernels: B + 8 forward, 8 per dQ/dK/dV element backward', () => {
    assert.deepEqual(ringMergeBytes(false, 3, 1000, 250, 2), { fwd: 3 * 1000 * 10, bwd: 3 * 1500 * 8 });
  });

  test('PyTorch rotates dK and dV as fp32 accumulators; TE in the activation dtype', () => {
    assert.deepEqual(ringStepBytes(true, 100, 2), { fwd: 400, bwd: 400 + 800 });
    assert.deepEqual(ringStepBytes(false, 100, 2), { fwd: 400, bwd: 800 });
  });

  test('PyTorch gathers every rank\'s K and V once per pass (cp·2·kv·B) and rotates fp32 dK/dV per backward step (8·kv)', () => {
    // _AllGatherRotater: one all_gather_tensor of the concatenated K and V of each of the cp ranks.
    assert.equal(torchRingGatherBytes(8, 1000, 2), 8 * 2 * 1000 * 2);
    assert.equal(torchRingGatherBytes(1, 1000, 2), 0);
    assert.equal(torchRingGradBytes(1000), 2 * 1000 * 4);
  });

  test('torchtitan repeats K and V to the query heads before SDPA, so its ring moves a/t heads; Megatron the g/t', () => {
    const tt = plan({ model: gpt(4, 4096, 32), engine: 'fsdp2', parallel: { cp: 2 } });
    const mg = plan({ model: gpt(4, 4096, 32), engine: 'megatron', parallel: { cp: 2 } });
    assert.equal(ringKvHeads(tt, 16, 1), 16);
    assert.equal(ringKvHeads(mg, 16, 1), 1);
  });

  test('the K/V all-gather hides only behind the first block: across nodes its exposed time grows faster than cp', () => {
    // TP 8 fills each node, so the CP group crosses nodes (400 Gb/s per GPU); at 32,768 tokens per GPU the first block's
    // time is fixed while the gathered bytes grow as cp − 1 (first principles: the gather must land before step 1).
    const exposed = (cp: number) => estimateStepTime(plan({
      model: { ...gpt(4, 16384, 128), kvHeads: 8, positions: 'rotary' }, engine: 'fsdp2',
      training: { microBatch: 1, gradAccum: 1, seqLen: 32768 * cp, precision: 'bf16-mixed', flashAttention: true, recompute: 'full' },
      parallel: { dp: 1, tp: 8, sp: true, cp, sharding: { style: 'fsdp2', stage: 3, shardGroupSize: 1 } }, cluster: { gpu: H100, gpusPerNode: 8 },
    })).exposedCommSeconds;
    assert.ok(exposed(8) > 2 * exposed(4), `${exposed(4)} → ${exposed(8)}`);
  });

  test('async TP sums its reduce-scattered partials in one kernel: T·n·B read, T/tp·n·B written', () => {
    // torch/distributed/_symmetric_memory/__init__.py _fused_matmul_reduce_scatter_impl: stacked partials of the
    // whole T × n output, torch.sum over the group.
    assert.equal(asyncTpReduceBytes(1000, 8192, 8, 2), 1000 * 8192 * 2 + 125 * 8192 * 2);
    assert.equal(asyncTpReduceBytes(1000, 8192, 1, 2), 0);
  });

  test('at equal tokens per GPU, the CP 4 / CP 2 step ratio lies in (1, 2]: a fixed cost per step cannot shrink', () => {
    // torchtitan's Table 2 (benchmarks/llama3_h100_202412_torchtitan.md) keeps 32,768 tokens per GPU from CP 1 to 8, so
    // attention work grows as cp while the linears stay: T(4)/T(2) = (a + 4b)/(a + 2b) ≤ 2 for any a ≥ 0.
    const step = (cp: number) => estimateStepTime(plan({
      model: { ...gpt(4, 4096, 32), positions: 'rotary' }, engine: 'fsdp2',
      training: { microBatch: 1, gradAccum: 1, seqLen: 32768 * cp, precision: 'bf16-mixed', flashAttention: true, recompute: 'full' },
      parallel: { dp: 8 / cp, cp, sharding: { style: 'fsdp2', stage: 3, shardGroupSize: 8 / cp } }, cluster: { gpu: H100, gpusPerNode: 8 },
    })).stepSeconds;
    const r = step(4) / step(2);
    assert.ok(r > 1 && r <= 2, `${r}`);
  });
});

describe('optimizer passes per implementation and precision regime (shared/time/optimizer.ts, data/timing.json)', () => {
  const mk = (optimizerImpl?: 'fused' | 'foreach' | 'for-loop', engine: Plan['engine'] = 'fsdp2', precision: Plan['training']['precision'] = 'bf16-mixed') =>
    plan({ model, engine, training: { optimizer: 'adamw', optimizerImpl, precision, gradDtype: 'fp32' }, parallel: { dp: 1 } });
  test('fused AdamW reads the gradient and reads and writes the weight it updates and both moments', () => {
    // FSDP2 keeps fp32 parameters, gradients and moments: 4 + 2·4 + 2·8 = 28 bytes per parameter.
    assert.equal(optimizerTrafficBytesPerParam(mk('fused')), 28);
    assert.equal(optimizerTrafficBytesPerParam(mk()), 28, 'the engine default is fused');
    // Megatron bf16 with fp32 gradient accumulation (--accumulate-allreduce-grads-in-fp32): main gradient 4, fp32 master read and written 8, then copied to the bf16 weight (4 + 2) in
    // its own kernel (_copy_main_params_to_model_params), moments 16: 34.
    assert.equal(optimizerTrafficBytesPerParam(mk('fused', 'megatron')), 34);
    // Pure bf16 (torchtune dtype bf16, LitGPT bf16-true): weight, gradient and moments in 16 bits: 2 + 4 + 8 = 14.
    assert.equal(optimizerTrafficBytesPerParam(mk('fused', 'fsdp2', 'bf16')), 14);
  });
  test('foreach and for-loop run one pass per op: 80 bytes over fp32 elements, half over 16-bit ones', () => {
    assert.equal(optimizerTrafficBytesPerParam(mk('foreach')), 80);
    assert.equal(optimizerTrafficBytesPerParam(mk('for-loop')), 80);
    assert.equal(optimizerTrafficBytesPerParam(mk('foreach', 'fsdp2', 'bf16')), 40);
  });
  test('8-bit Adam keeps its own figure (blockwise quantization)', () => {
    const p = plan({ model, training: { optimizer: 'adam-8bit' }, parallel: { dp: 1 } });
    assert.equal(optimizerTrafficBytesPerParam(p), timing.optimizerBytesPerParam['adam-8bit']);
  });
});

describe('torchao float8 TP all-gathers (torchao/float8/float8_tensor_parallel.py)', () => {
  const mk = (precision: 'fp8-mixed' | 'bf16-mixed', engine: 'fsdp2' | 'megatron'): Plan => plan({
    model: gpt(2, 8192, 64), engine, training: { microBatch: 4, gradAccum: 1, seqLen: 8192, precision, flashAttention: true },
    parallel: { tp: 8, sp: true, dp: 1 }, cluster: { gpu: H100, gpusPerNode: 8 },
  });
  const tp = (p: Plan) => estimateStepTime(p).collectives.find((c) => c.group === 'tp')?.seconds ?? 0;

  test('under torchtitan float8 the gathers move 1-byte elements: TP time between half and all of the bf16 time', () => {
    const r = tp(mk('fp8-mixed', 'fsdp2')) / tp(mk('bf16-mixed', 'fsdp2'));
    assert.ok(r > 0.5 && r < 1, `${r}`);
  });

  test('Megatron\'s TP collectives keep the activation dtype', () => {
    assert.ok(Math.abs(tp(mk('fp8-mixed', 'megatron')) / tp(mk('bf16-mixed', 'megatron')) - 1) < 1e-12);
  });
});
