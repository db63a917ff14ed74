// The caching allocator's terms (shared/memory/allocator.ts), each expected value from PyTorch's allocator constants
// (c10/cuda/CUDACachingAllocator.cpp: kMinBlockSize 512 B, kSmallSize 1 MiB, kSmallBuffer 2 MiB, kMinLargeAlloc 10 MiB,
// kLargeBuffer 20 MiB, kRoundLarge 2 MiB), FSDP2's streams (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py)
// and first principles for a torchtitan Llama-3-8B step; one figure from the oracle's allocator replay, named.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { allGatherPoolBytes, blockBytes, firstStepLossCacheBytes, reduceScatterPoolBytes, segmentBytes } from '../../../shared/memory/allocator';
import { estimateMemory } from '../../../shared/memory/estimate';
import { makePlan } from '../../../shared/plan/defaults';
import type { Plan } from '../../../shared/plan/types';
import { findPreset } from '../../../shared/model/presets';

const MiB = 2 ** 20;
/** Llama-3-8B: the root (embedding + final norm + LM head) and one block, parameters. */
const V = 128_256, H = 4096;
const ROOT = 2 * V * H + H;
const BLOCK = H * (H + 1024 + 1024 + H) + 3 * H * 14_336 + 2 * H;

describe('allocator constants', () => {
  const cases: [string, number, number, number][] = [
    // [what, request, block (round_size), segment (get_allocation_size)]
    ['a small request rounds to 512 B and gets a 2 MiB small-pool segment', 1000, 1024, 2 * MiB],
    ['1 MiB is still small', MiB, MiB, 2 * MiB],
    ['1 MiB + 1 B is large: a 20 MiB segment below 10 MiB', MiB + 1, MiB + 512, 20 * MiB],
    ['10 MiB + 1 B: its own segment, rounded up to 2 MiB', 10 * MiB + 1, 10 * MiB + 512, 12 * MiB],
    ['a 1 GiB tensor: exactly 1 GiB', 2 ** 30, 2 ** 30, 2 ** 30],
  ];
  for (const [what, req, block, seg] of cases) {
    test(what, () => {
      assert.equal(blockBytes(req), block);
      assert.equal(segmentBytes(req), seg);
    });
  }
});

describe('FSDP2 side-stream pools', () => {
  test('all-gather pool: the root\'s and one block\'s input and output in bf16, (Ψ_root + Ψ_unit)·2·(1 + 1/N)', () => {
    const bytes = allGatherPoolBytes(2 * ROOT, 2 * BLOCK, 8);
    assert.equal(bytes, (2 * ROOT + 2 * BLOCK) * 9 / 8);
    // The oracle's replay of the 2-layer Llama-3-8B FSDP8 grid configuration reserved 2,805,989,376 B on the copy-in
    // stream (the block's input went into a split remainder): within 2 %.
    assert.ok(Math.abs(bytes / 2_805_989_376 - 1) < 0.02);
    // Without a root (a middle pipeline stage) two blocks' buffers coexist.
    assert.equal(allGatherPoolBytes(0, 2 * BLOCK, 8), 4 * BLOCK * 9 / 8);
  });
  test('reduce-scatter pool: the sharded fp32 gradients, 4Ψ/N', () => {
    assert.equal(reduceScatterPoolBytes(4e9), 4e9);
  });
});

/** torchtitan Llama-3-8B on 8 GPUs, 32k tokens, full AC (the torchtitan 2024-12 Table 2 shape). */
function titan8b(frag?: number): Plan {
  const model = findPreset('llama-3.1-8b')!.model;
  return makePlan({
    engine: 'fsdp2', model,
    training: { microBatch: 1, seqLen: 32_768, precision: 'bf16-mixed', optimizer: 'adamw', recompute: 'full', modelImpl: 'torchtitan' },
    parallel: { dp: 8, sharding: { style: 'fsdp2', stage: 3 } },
    ...(frag !== undefined ? { overhead: { allocatorFragmentation: frag } } : {}),
  } as never);
}

describe('reserved memory of a step', () => {
  test('torchtitan FSDP2 at the loss backward: all-gather pool + reduce-scatter pool + the 16-bit logits\' block', () => {
    const s = estimateMemory(titan8b()).stages[0];
    const psi = 8_030_261_248;
    // The peak is the upcast loss's backward: no gradient yet (set_to_none), FSDP2 resharded, the 2-byte logits of
    // n = 32,768 · 128,256 freed before the fp32 requests twice their size.
    const expected = allGatherPoolBytes(2 * ROOT, 2 * BLOCK, 8) + 4 * psi / 8 + 2 * 32_768 * V;
    assert.ok(Math.abs((s.peakReservedBytes - s.peakAllocatedBytes) / expected - 1) < 1e-9, `${s.peakReservedBytes - s.peakAllocatedBytes} vs ${expected}`);
    assert.equal(s.terms.fragmentation!.bytes, s.peakReservedBytes - s.peakAllocatedBytes);
  });

  test('Megatron with its own loss and contiguous buffers: nothing cached beyond the tensors', () => {
    const model = findPreset('llama-3.1-8b')!.model;
    const plan = makePlan({
      engine: 'megatron', model, training: { microBatch: 1, seqLen: 4096, precision: 'bf16-mixed', optimizer: 'adamw', gradDtype: 'fp32' },
      parallel: { dp: 8, sharding: { style: 'megatron-distopt', stage: 1 } },
    } as never);
    const s = estimateMemory(plan).stages[0];
    assert.equal(s.peakReservedBytes, s.peakAllocatedBytes);
  });

  test('shardlens.overhead.fragmentation above 0 replaces the model by a flat fraction of the tensors', () => {
    const s = estimateMemory(titan8b(0.1)).stages[0];
    const ctx = s.terms.cudaContext!.bytes;
    assert.ok(Math.abs((s.peakReservedBytes - ctx) / (s.peakAllocatedBytes - ctx) - 1.1) < 1e-12);
  });
});

describe('the first step\'s loss', () => {
  test('the forward\'s cache counts beyond the optimizer states made at the first step (none when they are larger)', () => {
    assert.equal(firstStepLossCacheBytes(10 * MiB, 4 * MiB), 6 * MiB);
    assert.equal(firstStepLossCacheBytes(4 * MiB, 10 * MiB), 0);
  });

  test('torchtitan Llama 3 70B, FSDP 32 × TP 8 (Table 4 shape): the root copies and a block\'s forward transients beyond the optimizer states', () => {
    const model = findPreset('llama-3.1-70b')!.model;
    const plan = (recompute: string): Plan => makePlan({
      engine: 'fsdp2', model,
      training: { microBatch: 16, seqLen: 8192, precision: 'bf16-mixed', optimizer: 'adamw', recompute, modelImpl: 'torchtitan' },
      parallel: { dp: 32, tp: 8, sp: true, sharding: { style: 'fsdp2', stage: 3 } }, cluster: { gpusPerNode: 8, nodes: 32 },
    } as never);
    const full = estimateMemory(plan('full')).stages[0];
    // Per rank: the root's unsharded copies (embedding and head, V/8 rows of h in bf16; the final norm's h) and one
    // block's forward peak, 7296 MiB (test/unit/core/blocks.test.ts); Adam's two fp32 states of the rank's shard.
    const H70 = 8192, V70 = 128_256;
    const rootCopies = 2 * (2 * (V70 / 8) * H70) + 2 * H70;
    const states = (2 * 4 * full.parametersPerRank) / 32;
    const extra = rootCopies + 7296 * MiB - states;
    assert.ok(extra > 4 * 2 ** 30, `the cache exceeds the states by ${extra}`);
    // The other cached terms at the loss backward: the all-gather pool, the reduce-scatter pool and the 16-bit logits.
    const n = 16 * 8192 * (V70 / 8);
    const unit = 2 * ((H70 * (2 * H70 + 2 * 1024) + 3 * H70 * 28_672) / 8 + 2 * H70);
    const others = allGatherPoolBytes(2 * (2 * (V70 / 8) * H70 + H70), unit, 32) + (4 * full.parametersPerRank) / 32 + 2 * n;
    const cached = full.peakReservedBytes - full.peakAllocatedBytes;
    assert.ok(Math.abs(cached / (others + extra) - 1) < 1e-3, `${cached} vs ${others + extra}`);
  });
});

