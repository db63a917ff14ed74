/**
 * Megatron-LM logs (format strings in formats.ts: training.py and utils/common_utils.py at d98e8a64d, utils.py at
 * 076972e37). The expected figures are worked out by hand from the logged text in each case's comment.
 */
import { describe, test } from 'node:test';
import { MIB, check, type Expect } from './check';
import { megatronIter, megatronMemory } from './formats';

interface Case { readonly name: string; readonly lines: readonly string[]; readonly expect: Expect }

const iters = (ms: readonly string[], legacy = false, every = 10) =>
  ms.map((m, i) => megatronIter({ iteration: i === 0 ? 1 : i * every, trainIters: 1_000, ms: m }, legacy));

const cases: readonly Case[] = [
  {
    // srun --label puts "0: " before each line. Four iteration lines: warm-up is max(1, ceil(10 %·4)) = 1 (5000.0 ms);
    // the rest 1300.0, 1200.0, 1250.0 ms → median 1.25 s, from lines 2–4 (the last used is line 4).
    // Memory of two ranks: max allocated 40960.50 and 41000.75 MB → 41000.75·2²⁰ B (line 6); max reserved 46080.25
    // and 46000.00 MB → 46080.25·2²⁰ B (line 5). The theoretical-memory line is an estimate and is ignored.
    name: 'HEAD format with "0: " labels: median after warm-up, memory peak over ranks in MiB',
    lines: [
      ...iters(['5000.0', '1300.0', '1200.0', '1250.0']),
      megatronMemory(0, 1, '20000.00', '40960.50', '45000.00', '46080.25'),
      megatronMemory(4, 1, '20000.00', '41000.75', '45000.00', '46000.00'),
      'Theoretical memory footprints: weight and optimizer=99999.99 MB, activation=99999.99 MB, total=199999.98 MB',
    ].map((l) => `0: ${l}`),
    expect: {
      engine: 'megatron',
      figures: { stepSeconds: 1.25, peakAllocatedBytes: 41_000.75 * MIB, peakReservedBytes: 46_080.25 * MIB },
      lines: { stepSeconds: 4, peakAllocatedBytes: 6, peakReservedBytes: 5 },
      details: { stepSeconds: /median of 3 logged iterations after 1 warm-up iteration, elapsed time per iteration \(ms\)/ },
      steps: 3,
      noWarnings: [/rough/],
    },
  },
  {
    // Twenty lines: warm-up is ceil(10 %·20) = 2 (9000.0 and 3000.0 ms); the other eighteen are nine of 1000.0 and
    // nine of 1100.0 ms → median (1.000 + 1.100) / 2 = 1.05 s.
    name: 'twenty logged intervals: the first 10 % are warm-up',
    lines: iters(['9000.0', '3000.0', ...Array<string>(9).fill('1000.0'), ...Array<string>(9).fill('1100.0')]),
    expect: { engine: 'megatron', figures: { stepSeconds: 1.05 }, steps: 18 },
  },
  {
    // The 2024-12 format: plain float memory (`{}`) — max allocated 40960.5078125 MB = 40960.5078125·2²⁰ B — and two
    // iteration lines: one warm-up (4000.0 ms), one left (1234.5 ms → 1.2345 s), fewer than 3: rough.
    name: '2024-12 format with plain float memory; two lines only: rough',
    lines: [...iters(['4000.0', '1234.5'], true), megatronMemory(0, 20, '20480.0', '40960.5078125', '43000.0', '45056.0')],
    expect: {
      engine: 'megatron',
      figures: { stepSeconds: 1.2345, peakAllocatedBytes: 40_960.5078125 * MIB, peakReservedBytes: 45_056 * MIB },
      steps: 1,
      warnings: [/Only 1 logged iteration of elapsed time per iteration \(ms\) after warm-up: the figure is rough/],
    },
  },
  {
    // Lines with skipped and nan iterations still count for time: warm-up 2000.0, then 1100.0, 1000.0, 1200.0 →
    // median 1.1 s; the nan ones (lines 3 and 4) are named in a warning.
    name: 'skipped and nan iterations still count for time, with a warning for nan',
    lines: [
      megatronIter({ iteration: 1, trainIters: 100, ms: '2000.0', skipped: 1 }),
      megatronIter({ iteration: 10, trainIters: 100, ms: '1100.0', skipped: 2 }),
      megatronIter({ iteration: 20, trainIters: 100, ms: '1000.0', nan: 1 }),
      megatronIter({ iteration: 30, trainIters: 100, ms: '1200.0', nan: 3 }),
    ],
    expect: { engine: 'megatron', figures: { stepSeconds: 1.1 }, steps: 3, warnings: [/2 logged intervals had nan iterations \(lines 3, 4\)/] },
  },
  {
    // A memory report alone (no iteration line): the peaks, no step time, steps 0.
    name: 'memory report only',
    lines: ['[Rank 0] (after 2 iterations) memory (MB) | allocated: 1024.00 | max allocated: 2048.00 | reserved: 3072.00 | max reserved: 4096.00'],
    expect: { engine: 'megatron', figures: { peakAllocatedBytes: 2048 * MIB, peakReservedBytes: 4096 * MIB }, steps: 0 },
  },
];

describe('Megatron-LM logs', () => {
  for (const c of cases) test(c.name, () => { check(c.lines.join('\n') + '\n', c.expect); });
});
