/**
 * torchtitan logs (format strings in formats.ts: components/metrics.py at b5bcd76c6 and train.py at 3f20451bc). The
 * expected figures are worked out by hand from the logged text in each case's comment.
 */
import { describe, test } from 'node:test';
import { GIB, check, type Expect } from './check';
import { titan2024, titanHead, titanValidate, type TitanStep } from './formats';

const step = (s: number, tps: number, memGiB: string): TitanStep => ({ step: s, loss: 7.12345, gradNorm: 1.2345, memGiB, memPct: 88.58, tps, tflops: 225.31, mfu: 22.78 });

const NOISE = [
  '[titan] 2026-08-21 09:59:00,001 - root - INFO - Starting job: Llama 3 8B training',
  '[titan] 2026-08-21 09:59:01,002 - root - INFO - CUDA capacity: NVIDIA H100 80GB HBM3 with 79.11GiB memory',
];

interface Case { readonly name: string; readonly lines: readonly string[]; readonly expect: Expect }

const headSteps = [1, 10, 20, 30, 40, 50, 60, 70, 80, 90];
const headTps = [1_020, 3_890, 3_900, 3_910, 3_880, 3_905, 3_895, 3_900, 3_890, 3_920];
const twentyTps = [500, 3_000, ...Array(9).fill(3_900), ...Array(9).fill(4_000)];

const cases: readonly Case[] = [
  {
    // Ten logged steps: warm-up is max(1, ceil(10 %·10)) = 1 line (step 1, 1,020 tps). The other nine sorted:
    // 3,880 3,890 3,890 3,895 3,900 3,900 3,905 3,910 3,920 → median 3,900 tps, last used line 2 + 10 = 12.
    // Memory: 84.21 GiB at step 50 (line 2 + 6 = 8) is the largest: 84.21·2³⁰ B. The validation line's 99.99 GiB is
    // not training and is ignored.
    name: 'HEAD format with ANSI colours and [rank0]: labels; warm-up skipped; validation ignored',
    lines: [
      ...NOISE,
      ...headSteps.map((s, i) => `[rank0]:${titanHead(step(s, headTps[i], s === 1 ? '70.10' : s === 50 ? '84.21' : '84.00'))}`),
      `[rank0]:${titanValidate(90, '99.99', 9_999)}`,
    ],
    expect: {
      engine: 'torchtitan',
      figures: { tokensPerSecondPerGpu: 3_900, peakReservedBytes: 84.21 * GIB },
      lines: { tokensPerSecondPerGpu: 12, peakReservedBytes: 8 },
      details: { tokensPerSecondPerGpu: /median of 9 logged steps after 1 warm-up step, tps/ },
      steps: 9,
      noWarnings: [/rough/, /several engines/],
    },
  },
  {
    // Twenty logged steps: warm-up is ceil(10 %·20) = 2 lines (500 and 3,000 tps). The other eighteen are nine of
    // 3,900 and nine of 4,000 → median (3,900 + 4,000) / 2 = 3,950 tps. Skipping only one line would give 3,900.
    // Memory: 61.50 GiB once, else 60.00 → 61.5·2³⁰ B.
    name: '2024-12 format (no grad_norm, no tflops): at least the first 10 % of steps are warm-up',
    lines: twentyTps.map((tps, i) => titan2024(step(i === 0 ? 1 : i * 10, tps, i === 7 ? '61.50' : '60.00'))),
    expect: {
      engine: 'torchtitan',
      figures: { tokensPerSecondPerGpu: 3_950, peakReservedBytes: 61.5 * GIB },
      lines: { tokensPerSecondPerGpu: 20, peakReservedBytes: 8 },
      details: { tokensPerSecondPerGpu: /median of 18 logged steps after 2 warm-up steps/ },
      steps: 18,
    },
  },
  {
    // Two ranks log steps 1, 10, 20, 30 (LOG_RANK=0,1). Each step's rate counts once, from its first line (rank 0):
    // 1,000 (warm-up), 4,000, 4,100, 4,200 → median 4,100; memory is the peak over both ranks: 82.50 GiB on rank 1.
    name: 'two ranks log the same steps: the rate counts each step once, memory is the peak over ranks',
    lines: [1, 10, 20, 30].flatMap((s, i) => [
      `[rank0]:${titanHead(step(s, [1_000, 4_000, 4_100, 4_200][i], '80.00'))}`,
      `[rank1]:${titanHead(step(s, 5_000, i === 3 ? '82.50' : '81.00'))}`,
    ]),
    expect: { engine: 'torchtitan', figures: { tokensPerSecondPerGpu: 4_100, peakReservedBytes: 82.5 * GIB }, lines: { peakReservedBytes: 8 }, steps: 3 },
  },
  {
    // A single logged step (mfu "N/A" under FP8): it is warm-up, used as the only figure and flagged rough.
    name: 'one logged step (mfu N/A): used, flagged as warm-up',
    lines: [titanHead({ ...step(1, 2_345, '30.25'), mfu: undefined }, false)],
    expect: {
      engine: 'torchtitan',
      figures: { tokensPerSecondPerGpu: 2_345, peakReservedBytes: 30.25 * GIB },
      steps: 1,
      warnings: [/warm-up .* rough/],
    },
  },
  {
    // Three logged steps: one warm-up, two left (4,000 and 4,100 → 4,050) → fewer than 3: rough.
    name: 'fewer than 3 steps after warm-up: rough',
    lines: [[1, 900], [10, 4_000], [20, 4_100]].map(([s, t]) => titanHead(step(s, t, '40.00'))),
    expect: { engine: 'torchtitan', figures: { tokensPerSecondPerGpu: 4_050, peakReservedBytes: 40 * GIB }, steps: 2, warnings: [/Only 2 logged steps of tps after warm-up: the figure is rough/] },
  },
];

describe('torchtitan logs', () => {
  for (const c of cases) test(c.name, () => { check(c.lines.join('\n') + '\n', c.expect); });
});
