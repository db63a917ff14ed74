/**
 * DeepSpeed logs (format strings in formats.ts: utils/timer.py, runtime/utils.py and runtime/pipe/engine.py at
 * edaa72212). The expected figures are worked out by hand from the logged text in each case's comment.
 */
import { describe, test } from 'node:test';
import { GIB, check, type Expect } from './check';
import { dsPipe, dsSeeMemory, dsThroughput } from './formats';

interface Case { readonly name: string; readonly lines: readonly string[]; readonly expect: Expect }

const cases: readonly Case[] = [
  {
    // ThroughputTimer at global steps 10…50 (lines 2–6): CurrSamplesPerSec 25.0 (warm-up), then 31.5, 32.5, 32.0,
    // 31.0 → median (31.5 + 32.0) / 2 = 31.75 samples/s, global (train_batch_size ÷ step time).
    // Allocated peak: MaxMemAllocated up to 7.41 GB, see_memory_usage Max_MA 2.34 and 8.02 GB → 8.02·2³⁰ B (line 7).
    // Reserved peak: Max_CA 4 and 10 GB, CA 3.45 and 9.5 GB → 10·2³⁰ B (line 7), with a rounding warning.
    name: 'ThroughputTimer and see_memory_usage: global samples per second, peaks in GiB',
    lines: [
      dsSeeMemory('1.23', '2.34', '3.45', '4'),
      ...[['25.0', '7.35'], ['31.5', '7.41'], ['32.5', '7.41'], ['32.0', '7.38'], ['31.0', '7.4']].map(([c, m], i) => dsThroughput((i + 1) * 10, c, '4.12', m)),
      dsSeeMemory('5.1', '8.02', '9.5', '10'),
    ],
    expect: {
      engine: 'deepspeed',
      figures: { samplesPerSecond: 31.75, peakAllocatedBytes: 8.02 * GIB, peakReservedBytes: 10 * GIB },
      lines: { samplesPerSecond: 6, peakAllocatedBytes: 7, peakReservedBytes: 7 },
      details: { samplesPerSecond: /median of 4 logged steps after 1 warm-up step, CurrSamplesPerSec/ },
      scope: 'global',
      steps: 4,
      warnings: [/rounds Max_CA to whole GiB/],
    },
  },
  {
    // The pipeline engine states a step time: 2.000 s (warm-up), then 1.500, 1.600, 1.550 → median 1.55 s; with a
    // step time there is no samples-per-second figure.
    name: 'pipeline engine: iter time (s) is the step time',
    lines: [['2.000', 16], ['1.500', 21.333], ['1.600', 20], ['1.550', 20.645]].map(([t, s], i) => dsPipe((i + 1) * 10, String(t), Number(s))),
    expect: { engine: 'deepspeed', figures: { stepSeconds: 1.55 }, steps: 3, noWarnings: [/Max_CA/] },
  },
];

describe('DeepSpeed logs', () => {
  for (const c of cases) test(c.name, () => { check(c.lines.join('\n') + '\n', c.expect); });
});
