// The caching-allocator simulation (probe/oracle/allocator.py) on hand-built traces, each expected value derived by
// hand from the rules of PyTorch's DeviceCachingAllocator (c10/cuda/CUDACachingAllocator.cpp: round_size, get_pool,
// get_allocation_size, get_free_block, should_split, free_block, release_cached_blocks, the expandable segments'
// map_block) and the allocator notes of docs/source/notes/cuda.rst; then the oracle's recorded trace of one FSDP2
// configuration. Skipped with a message when no Python with torch ≥ 2.4 exists; fails instead when CI=true.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { ci, oracleMissing, oraclePython } from './fixtures/python';
import { makePlan } from '../../shared/plan/defaults';
import { exportOraclePlan } from '../../validation/torch/oraclePlan';
import { isOracleFailure, runOracle } from '../../validation/torch/oracleRun';
import type { OracleAllocatorReplay, OracleReport } from '../../validation/torch/oracleTypes';
import { LLAMA3_8B } from './fixtures/plans';

const python = oraclePython;
if (!python && !ci) console.log(`# allocator replay tests skipped: ${oracleMissing}`);

const MiB = 2 ** 20;
type Ev = ['a', number, number, string] | ['f', number];
interface Case { events: Ev[]; conf?: string; capacity?: number }

let next = 0;
const alloc = (bytes: number, stream = 'default'): Ev => ['a', next++, bytes, stream];
const free = (e: Ev): Ev => ['f', e[1]];

/** Replays traces through the simulation (python -m oracle.allocator_trace). */
function replay(cases: Case[]): OracleAllocatorReplay[] {
  const r = spawnSync(python!, ['-m', 'oracle.allocator_trace'], { cwd: resolve('probe'), input: JSON.stringify(cases), encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as OracleAllocatorReplay[];
}

describe('caching-allocator simulation on hand-built traces', { skip: ci ? false : !python }, () => {
  test('block rounding and segment sizes (round_size, get_allocation_size, should_split)', () => {
    const pack = Array.from({ length: 2049 }, () => alloc(1024));
    const mid = Array.from({ length: 7 }, () => alloc(3 * MiB));
    const [small, packed, medium, large, unsplit] = replay([
      // 1000 B rounds to 1024 B (multiple of 512); a small request gets a 2 MiB small-pool segment.
      { events: [alloc(1000)] },
      // 2048 blocks of 1 KiB fill one 2 MiB segment exactly (the small pool splits while ≥ 512 B remain); the 2049th
      // needs a second segment: 4 MiB reserved.
      { events: pack },
      // 3 MiB requests share 20 MiB segments (1–10 MiB → kLargeBuffer): six fit (18 MiB, the 2 MiB left > 1 MiB is
      // split off), the seventh does not fit in 2 MiB: a second 20 MiB segment, 40 MiB reserved.
      { events: mid },
      // 10 MiB + 1 B: block 10 MiB + 512 B, segment rounded up to 2 MiB = 12 MiB; the 2 MiB − 512 B left is > 1 MiB and
      // is split off, so allocated is the block alone.
      { events: [alloc(10 * MiB + 1)] },
      // 11 MiB + 1 B: segment 12 MiB, 1 MiB − 512 B left: not split (the large pool splits only above 1 MiB), so the
      // whole 12 MiB block counts as allocated.
      { events: [alloc(11 * MiB + 1)] },
    ]);
    assert.deepEqual([small.peakAllocated, small.peakReserved], [1024, 2 * MiB]);
    assert.equal(packed.peakReserved, 4 * MiB);
    assert.deepEqual([medium.peakAllocated, medium.peakReserved], [21 * MiB, 40 * MiB]);
    assert.deepEqual([large.peakAllocated, large.peakReserved], [10 * MiB + 512, 12 * MiB]);
    assert.deepEqual([unsplit.peakAllocated, unsplit.peakReserved], [12 * MiB, 12 * MiB]);
  });

  test('best fit, a larger later request, per-stream pools', () => {
    const a = alloc(100 * MiB), b = alloc(200 * MiB);
    const c = alloc(100 * MiB), d = alloc(200 * MiB);
    const s = alloc(100 * MiB, 'side');
    const [logits, smallest, streams] = replay([
      // The logits pattern: 100 and 200 MiB freed, then two 200 MiB requests: the first takes the 200 MiB block, the
      // 100 MiB block cannot serve the second, which gets a new segment: 100 + 200 + 200 = 500 MiB reserved.
      { events: [a, b, free(a), free(b), alloc(200 * MiB), alloc(200 * MiB)] },
      // Best fit takes the smallest block at least as large: 90 MiB from the 100 MiB block, 150 MiB from the 200 MiB
      // one; nothing new: 300 MiB.
      { events: [c, d, free(c), free(d), alloc(90 * MiB), alloc(150 * MiB)] },
      // A block freed on one stream never serves another: 100 MiB on "side", freed, then 100 MiB on the default
      // stream needs its own segment: 200 MiB, 100 MiB each.
      { events: [s, free(s), alloc(100 * MiB)] },
    ]);
    assert.deepEqual([logits.peakAllocated, logits.peakReserved], [400 * MiB, 500 * MiB]);
    assert.equal(smallest.peakReserved, 300 * MiB);
    assert.deepEqual(streams.reservedByStream, { side: 100 * MiB, default: 100 * MiB });
  });

  test('max_split_size_mb, roundup_power2_divisions', () => {
    const big = alloc(100 * MiB), big2 = alloc(100 * MiB);
    const [noSplit, rounded, divisions] = replay([
      // max_split_size_mb:64: a 50 MiB request (below 64 MiB) may not take the cached 100 MiB block: a new 50 MiB
      // segment, 150 MiB reserved.
      { events: [big, free(big), alloc(50 * MiB)], conf: 'max_split_size_mb:64' },
      // A 90 MiB request (above 64 MiB) may take a cached block less than 20 MiB larger (kLargeBuffer): it gets the
      // 100 MiB block whole (oversize blocks are not split): 100 MiB allocated, nothing new.
      { events: [big2, free(big2), alloc(90 * MiB)], conf: 'max_split_size_mb:64' },
      // roundup_power2_divisions:4 rounds 5 MiB + 1 B, between 4 and 8 MiB in steps of 1 MiB, up to 6 MiB. round_size
      // applies divisions only above 512 · divisions bytes, so 1200 B still rounds to a multiple of 512, 1536 B (the
      // notes' example of 1280 B describes the division arithmetic, not that threshold).
      { events: [alloc(1200), alloc(5 * MiB + 1)], conf: 'roundup_power2_divisions:4' },
    ]);
    assert.equal(noSplit.peakReserved, 150 * MiB);
    assert.deepEqual([rounded.peakAllocated, rounded.peakReserved], [100 * MiB, 100 * MiB]);
    assert.equal(divisions.peakAllocated, 1536 + 6 * MiB);
  });

  test('expandable segments: pages of 20 MiB, a free tail grows in place', () => {
    const a = alloc(100 * MiB), b = alloc(200 * MiB);
    const [logits, page] = replay([
      // The same logits pattern in one expandable segment: 100 + 200 MiB mapped (15 pages of 20 MiB), both freed into
      // one 300 MiB free block; the first 200 MiB request splits it (100 MiB left at the mapped tail), the second maps
      // 100 MiB more after that tail and uses both: 400 MiB reserved instead of 500.
      { events: [a, b, free(a), free(b), alloc(200 * MiB), alloc(200 * MiB)], conf: 'expandable_segments:True' },
      // A 25 MiB request maps whole 20 MiB pages: 40 MiB.
      { events: [alloc(25 * MiB)], conf: 'expandable_segments:True' },
    ]);
    assert.equal(logits.peakReserved, 400 * MiB);
    assert.equal(page.peakReserved, 40 * MiB);
  });

  test('at capacity: free the cache and retry, else out of memory', () => {
    const a = alloc(100 * MiB), l = alloc(300 * MiB);
    const [retry, oom] = replay([
      // 500 MiB allowed: the cached 100 MiB block cannot hold 420 MiB and 100 + 420 > 500, so cudaMalloc fails; the
      // allocator frees every unsplit cached block and retries: 420 MiB reserved, one retry.
      { events: [a, free(a), alloc(420 * MiB)], capacity: 500 * MiB },
      // 300 MiB live and nothing cached: a second 300 MiB cannot be had: out of memory.
      { events: [l, alloc(300 * MiB)], capacity: 500 * MiB },
    ]);
    assert.deepEqual([retry.peakReserved, retry.retries, retry.oom], [420 * MiB, 1, false]);
    assert.equal(oom.oom, true);
  });
});

describe('the oracle records an allocation trace and replays it', { skip: ci ? false : !python }, () => {
  test('FSDP2: the trace holds MemTracker\'s peak, and the all-gather and reduce-scatter streams have their own pools', async () => {
    const plan = makePlan({
      engine: 'fsdp2', model: { ...LLAMA3_8B, layers: 2 },
      training: { microBatch: 1, seqLen: 1024, precision: 'bf16-mixed', optimizer: 'adamw', modelImpl: 'torchtitan' },
      parallel: { dp: 8, sharding: { style: 'fsdp2', stage: 3 } },
    } as never);
    const e = exportOraclePlan(plan);
    assert.ok(!('code' in e));
    const out = await runOracle(e.oraclePlan, { python: python!, timeoutMs: 300_000 });
    assert.ok(!isOracleFailure(out), isOracleFailure(out) ? out.message : '');
    const rank = (out as OracleReport).ranks[0];
    const a = rank.allocator!;
    // The trace's tracked step peaks where MemTracker's total does: every tensor the tracker saw is in the trace.
    assert.equal(a.stepPeakRequested, rank.peaks.total);
    for (const r of [a.native, a.expandable]) {
      assert.ok(r.peakRequested <= r.peakAllocated && r.peakAllocated <= r.peakReserved && !r.oom);
    }
    // FSDP2 allocates its all-gather buffers on the copy-in stream and the reduce-scatter output (the sharded gradients)
    // on the reduce-scatter stream (torch _fsdp_collectives.py).
    const streams = Object.keys(a.native.reservedByStream).sort();
    assert.deepEqual(streams, ['default', 'fsdp all-gather-copy-in', 'fsdp reduce-scatter']);
    // The copy-in pool holds at least the root's all-gather output: embedding + head in bf16, 2 · 2 · V · h bytes.
    assert.ok(a.native.reservedByStream['fsdp all-gather-copy-in'] >= 4 * 128256 * 4096);
  });
});
