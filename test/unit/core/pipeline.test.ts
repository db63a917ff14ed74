/**
 * Pipeline stages as each engine runs them (shared/memory/pipeline.ts, docs/engine-memory.md#pipeline): in-flight
 * counts from the engines' schedule code, the buffers torch's pipelining keeps, FSDP2 between micro-batches. Expected
 * values are derived in the comments from torch 2.13 (torch/distributed/pipelining/schedules.py, stage.py,
 * torch/distributed/fsdp/_fully_shard) and Megatron-LM (megatron/core/pipeline_parallel/schedules.py).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateMemory } from '../../../shared/memory/estimate';
import { inFlightMicrobatches } from '../../../shared/memory/fast';
import {
  cachedBoundaryBytes, fsdp2ChunkGatherPeak, fsdp2ReduceScatterBytes, inFlightChunkPasses, interleavedGroupSize, keptLossCount,
  pipelineEngineOf, receiveBufferBytes, receivedGradientBytes, stageBoundaryBytes,
} from '../../../shared/memory/pipeline';
import { blockOutputTransientBytes, embeddingOutputGradientBytes, headInputGradientBytes } from '../../../shared/memory/activations';
import type { PipelineSchedule } from '../../../shared/plan/types';
import { llamaPlan, preset } from './helpers';

const world8 = { gpusPerNode: 8, nodes: 1 };

describe('in-flight chunk passes per engine', () => {
  // [engine, schedule, p, v, m, passes per stage]
  const cases: [ 'torch' | 'megatron', PipelineSchedule, number, number, number, number[], string][] = [
    // torch Schedule1F1B: warmup_chunks = min(m, num_stages − stage_index), then backward before forward.
    ['torch', '1f1b', 4, 1, 8, [4, 3, 2, 1], 'Schedule1F1B warm-up min(m, p − i)'],
    // Megatron: min(p − i − 1, m) warm-ups, then forward before backward: one more alive at the backward.
    ['megatron', '1f1b', 4, 1, 8, [4, 3, 2, 1], 'forward_backward_pipelining_without_interleaving'],
    ['torch', '1f1b', 4, 1, 2, [2, 2, 2, 1], 'fewer micro-batches than stages'],
    ['torch', 'gpipe', 4, 1, 8, [8, 8, 8, 8], 'GPipe: every forward before any backward'],
    // Megatron interleaved: 2(p − r − 1) + (v − 1)·g warm-ups (g = p = 4) + 1: r=0 → 6 + 4 + 1 = 11.
    ['megatron', 'interleaved', 4, 2, 8, [11, 9, 7, 5], 'get_pp_rank_microbatches'],
    // torch p=4, m=8: rounds = 2, microbatches_per_round = 4 = p: the same counts.
    ['torch', 'interleaved', 4, 2, 8, [11, 9, 7, 5], '_get_warmup_ops with 4 micro-batches per round'],
    // torch p=2, m=3: rounds = max(1, 3 // 2) = 1, microbatches_per_round = 3; warm-up (2 − 1)·3 + 2(1 − r):
    // r=0 → 5 (+1 = 6 = m·v, capped), r=1 → 3 (+1 = 4). Megatron's g = p would give 2 + 2 + 1 = 5 and 3.
    ['torch', 'interleaved', 2, 2, 3, [6, 4], 'torch: micro-batches per round, not p'],
  ];
  for (const [engine, schedule, p, v, m, expected, why] of cases) {
    test(`${engine} ${schedule} p=${p} v=${v} m=${m}: ${expected.join(', ')} (${why})`, () => {
      assert.deepEqual(expected.map((_, i) => inFlightChunkPasses(engine, schedule, p, v, m, i)), expected);
    });
  }
  test('group sizes: Megatron p; torch ⌊m / max(1, ⌊m/p⌋)⌋ micro-batches per round', () => {
    assert.equal(interleavedGroupSize('megatron', 4, 6), 4);
    assert.equal(interleavedGroupSize('torch', 4, 8), 4);
    assert.equal(interleavedGroupSize('torch', 4, 6), 6);
    assert.equal(interleavedGroupSize('torch', 2, 3), 3);
  });
  test('engines: Megatron-LM its own schedules; torch-native engines torch.distributed.pipelining', () => {
    assert.deepEqual(['megatron', 'fsdp2', 'fsdp1', 'ddp', 'deepspeed', 'nanotron'].map((e) => pipelineEngineOf(e as never)),
      ['megatron', 'torch', 'torch', 'torch', 'other', 'other']);
  });
  test('the estimate reads the engine: torchtitan interleaved p=2, m=3 holds 6/2 and 4/2 micro-batches', () => {
    const plan = llamaPlan({ engine: 'fsdp2', training: { gradAccum: 3 }, parallel: { pp: 2, vpp: 2, dp: 4, schedule: 'interleaved' }, cluster: world8 });
    assert.deepEqual([0, 1].map((s) => inFlightMicrobatches(plan, s)), [3, 2]);
  });
});

describe('what the schedule keeps besides the layers', () => {
  // One stage boundary: b · s · h · 2 bytes = 1 · 2048 · 4096 · 2 = 16 MiB; ÷t with sequence parallelism.
  const B = stageBoundaryBytes(1, 2048, 4096, 2, 1);
  test('the boundary tensor is b·s·h·B (÷t with SP)', () => {
    assert.equal(B, 16 * 2 ** 20);
    assert.equal(stageBoundaryBytes(1, 2048, 4096, 2, 2), 8 * 2 ** 20);
  });
  test('torch: one activation and one gradient receive buffer per micro-batch and receiving chunk; Megatron none', () => {
    // stage.py _setup_forward_recv_info (every non-first stage) and _create_grad_recv_info (every non-last stage).
    assert.deepEqual([0, 1, 2, 3].map((s) => receiveBufferBytes('torch', 4, 1, 8, s, B) / B), [8, 16, 16, 8]);
    // Interleaved v=2 on rank 0 of 2: chunk 0 receives gradients only, chunk 2 both: 3 buffers per micro-batch.
    assert.equal(receiveBufferBytes('torch', 2, 2, 8, 0, B) / B, 24);
    assert.equal(receiveBufferBytes('megatron', 4, 1, 8, 1, B), 0);
  });
  test('torch caches outputs in fwd_cache; a receiving stage\'s first layer saves the receive buffer', () => {
    assert.equal(cachedBoundaryBytes('torch', 4, 1, 0, 4, B), 4 * B);
    assert.equal(cachedBoundaryBytes('torch', 4, 1, 1, 3, B), 0);
    assert.equal(cachedBoundaryBytes('torch', 4, 1, 3, 1, B), -B);
    // Megatron frees a sent output's data (deallocate_output_tensor).
    assert.equal(cachedBoundaryBytes('megatron', 4, 1, 0, 4, B), 0);
  });
  test('torch GPipe keeps every loss until the backwards; 1F1B and Megatron one', () => {
    assert.equal(keptLossCount('torch', 'gpipe', 4), 3);
    assert.equal(keptLossCount('torch', '1f1b', 4), 0);
    assert.equal(keptLossCount('megatron', 'gpipe', 4), 0);
  });
});

describe('FSDP2 under torch pipelining', () => {
  test('first forward: a group\'s all-gather output lives until the next group is copied out', () => {
    // Root R then one block B: R (AG) + R (copy) + B (AG) + B (copy).
    assert.equal(fsdp2ChunkGatherPeak(1002, 1, 416), 2 * 1002 + 2 * 416);
    // Blocks only: one block AG + copy; three blocks: the last two twice next to the first.
    assert.equal(fsdp2ChunkGatherPeak(0, 1, 416), 2 * 416);
    assert.equal(fsdp2ChunkGatherPeak(0, 3, 416), 5 * 416);
  });
  test('the reduce-scatter holds its input and output: Ψ·b·(1 + 1/N), + the fp32 cast of a bf16 output', () => {
    assert.equal(fsdp2ReduceScatterBytes(100, 4, 4), 500);
    // bf16 reduce of fp32 shards: input 2Ψ, output 2Ψ/4, its cast to the shards' fp32 4Ψ/4.
    assert.equal(fsdp2ReduceScatterBytes(100, 2, 4, 4), 200 + 50 + 100);
  });
  // torchtitan PP2 × FSDP4, Llama-3-8B at 2 layers, fp32 reduce (torchtitan's default mixed_precision_reduce):
  // stage 0 holds the embedding V·h and one layer; Ψ_stage per rank before sharding.
  const m = preset('llama-3-8b');
  const plan = llamaPlan({
    engine: 'fsdp2', model: { ...m, layers: 2 },
    training: { gradAccum: 4, recompute: 'full', gradDtype: 'fp32', modelImpl: 'torchtitan' },
    parallel: { pp: 2, dp: 4, sharding: { style: 'fsdp2', stage: 3, reshardAfterForward: false } }, cluster: world8,
  });
  const e = estimateMemory(plan);
  const V = m.vocabSize * m.hiddenSize;
  // The reduce-scatter's buffers are gradients (torch files what FSDPParamGroup.post_backward makes so; oracle tracker):
  // the embedding group reduces with every accumulated fp32 gradient still held, its input 4V and output shard 4V/4.
  test('gradients: the fp32 unsharded accumulation of the stage plus the embedding\'s reduce-scatter input and output', () => {
    const psi = e.stages[0].parametersPerRank;
    assert.equal(e.stages[0].peaks!.gradients, 4 * psi + 4 * V * (1 + 1 / 4));
  });
  test('engine buffers: one gradient receive buffer per micro-batch on the first stage', () => {
    assert.equal(e.stages[0].peaks!.other, 4 * 2048 * 4096 * 2);
  });
  test('temporaries: the embedding\'s fresh bf16 gradient of the last micro-batch, 2V, before it is accumulated', () => {
    assert.equal(e.stages[0].peaks!.temporaries, 2 * V);
  });
});

test('Megatron\'s first stage: the embedding\'s 16-bit .grad before the hook adds it to main_grad', () => {
  const m = preset('llama-3-8b');
  const e = estimateMemory(llamaPlan({
    engine: 'megatron', model: { ...m, layers: 2 }, training: { gradAccum: 4, gradDtype: 'fp32' },
    parallel: { pp: 2, dp: 4, sharding: { style: 'megatron-distopt', stage: 1 } }, cluster: world8,
  }));
  const psi = e.stages[0].parametersPerRank;
  // main_grad is fp32 over the whole stage (param_and_grad_buffer.py); the embedding's gradient is bf16 V·h.
  assert.equal(e.stages[0].peaks!.gradients, 4 * psi + 2 * m.vocabSize * m.hiddenSize);
  assert.equal(e.stages[0].peaks!.other, 0);
});

describe('Megatron: the tensors its schedule and model hold besides the saved activations', () => {
  const MiB = 2 ** 20;
  // Llama-3-8B widths, b = 1, s = 2048, bf16: one boundary b·s·h·2 = 16 MiB.
  const B = 16 * MiB;
  const shape = (tp: number, sp: boolean) => ({ sLocal: 2048, b: 1, h: 4096, actBytes: 2, tp, sp }) as never;
  test('a block\'s forward ends with its MLP output and the residual sum: B·sbh·(1 + 1/t_sp)', () => {
    // TERowParallelLinear's output, then bias_dropout_add's sum next to it.
    assert.equal(blockOutputTransientBytes(shape(1, false)), 2 * B);
    // SP t=2: the GEMM output before the reduce-scatter is the whole sequence (16 MiB), the scattered sum 8 MiB.
    assert.equal(blockOutputTransientBytes(shape(2, true)), 24 * MiB);
    // TP without SP: the all-reduce is in place, both whole.
    assert.equal(blockOutputTransientBytes(shape(2, false)), 2 * B);
  });
  test('the head\'s backward: the dgrad GEMM output and the final norm\'s input gradient', () => {
    assert.equal(headInputGradientBytes(shape(1, false)), 2 * B);
    assert.equal(headInputGradientBytes(shape(4, true)), 20 * MiB);
  });
  test('the embedding output\'s gradient is the whole sequence, all-gathered under SP', () => {
    assert.equal(embeddingOutputGradientBytes(shape(1, false)), B);
    assert.equal(embeddingOutputGradientBytes(shape(2, true)), B);
  });
  test('a received output gradient is held through the backward on every rank but the one with only the last chunk', () => {
    // p2p_communication.py receives into torch.empty(...); backward_step keeps output_tensor_grad until it returns.
    assert.equal(receivedGradientBytes('megatron', 1, false, B), B);
    assert.equal(receivedGradientBytes('megatron', 1, true, B), 0);
    // Interleaved v=2: the last rank's first chunk is not the model's last and receives gradients.
    assert.equal(receivedGradientBytes('megatron', 2, true, B), B);
    // torch's pipelining receives into its persistent buffers (receiveBufferBytes).
    assert.equal(receivedGradientBytes('torch', 1, false, B), 0);
  });

  const m = preset('llama-3-8b');
  const V = m.vocabSize * m.hiddenSize;
  const megatronPP = (x: { layers: number; tp?: number; recompute?: 'none' | 'full' }) => estimateMemory(llamaPlan({
    engine: 'megatron', model: { ...m, layers: x.layers },
    training: { gradAccum: 4, gradDtype: 'fp32', seqLen: 2048, microBatch: 1, recompute: x.recompute ?? 'none', flashAttention: true },
    parallel: { pp: 2, tp: x.tp ?? 1, sp: false, dp: 8 / 2 / (x.tp ?? 1), schedule: '1f1b', sharding: { style: 'megatron-distopt', stage: 1 } }, cluster: world8,
  }));
  // One Megatron TE layer without recomputation saves (megatron.py's docstring, TE's prepare_for_saving): the norm
  // input and output 2·16, q 16, k and v 4 each (8 KV heads of 128), the attention output 16 and fp32 statistics
  // 4·32·2048 = 0.25 MiB, the residual 16, the second norm's output 16, fc1's output 2·14336·2048·2 = 112 and the
  // SwiGLU output 56: 272.25 MiB; the first stage adds the token ids, 8·s·b = 16 KiB.
  const layer = 272.25 * MiB, tokens = 8 * 2048;
  test('1F1B p=2, first stage: two micro-batches in flight and the last block\'s output made next to its MLP output', () => {
    const e = megatronPP({ layers: 2 });
    // min(p − 0 − 1, m) = 1 warm-up forward, then the steady state's forward before its backward: 2.
    assert.equal(e.stages[0].peaks!.activations, 2 * (layer + tokens) + 2 * B);
    // The embedding's 16-bit .grad (V·h·2) made while the embedding output's gradient is read.
    assert.equal(e.stages[0].peaks!.temporaries, 2 * V + B);
  });
  test('1F1B p=2, last stage: the logits\' bf16 gradient with the head\'s and final norm\'s input gradients', () => {
    const e = megatronPP({ layers: 2 });
    // _VocabParallelCrossEntropy returns its fp32 softmax as the gradient, autograd casts it to the logits' bf16:
    // s·V·2 bytes; the head's dgrad and the norm's dx, 16 MiB each.
    assert.equal(e.stages[1].peaks!.temporaries, 2048 * m.vocabSize * 2 + 2 * B);
  });
  test('1F1B p=2 × TP2, full recompute, first stage: the received output gradient next to the recomputed layer', () => {
    const e = megatronPP({ layers: 4, tp: 2, recompute: 'full' });
    // Two micro-batches × two layers keep their inputs (16 MiB each, whole under TP without SP) and the token ids; the
    // backward recomputes one layer whole (the input, norm output, q/k/v 8/2/2, attention output 8 and statistics
    // 0.125, residual 16, norm output 16, fc1 56, SwiGLU 28: 168.125 MiB) while the output gradient received for the
    // micro-batch (16 MiB) is held.
    assert.equal(e.stages[0].peaks!.activations, 2 * (2 * B + tokens) + 168.125 * MiB + B);
  });
  test('no pipeline: the embedding output\'s gradient beside the embedding\'s .grad', () => {
    const e = estimateMemory(llamaPlan({
      engine: 'megatron', model: { ...m, layers: 2 }, training: { gradDtype: 'fp32', seqLen: 2048, microBatch: 1, flashAttention: true },
      parallel: { dp: 8, sharding: { style: 'megatron-distopt', stage: 1 } }, cluster: world8,
    }));
    assert.equal(e.stages[0].peaks!.temporaries, 2 * V + B);
  });
});
