/**
 * Hugging Face Trainer logs (format strings in formats.ts and shared/logs/hfTrainer.ts: trainer_utils.py
 * `speed_metrics` at 007360d65, trainer_pt_utils.py `log_metrics` at 010a915ce, trainer.py at 000945a9b). The
 * expected figures are worked out by hand from the logged text in each case's comment.
 */
import { describe, test } from 'node:test';
import { check, type Expect } from './check';
import { hfBlock } from './formats';

interface Case { readonly name: string; readonly lines: readonly string[]; readonly expect: Expect }

const TOTAL = (n: string) => `[INFO|trainer.py:2405] 2026-08-22 10:00:00,000 >>   Total optimization steps = ${n}`;
const AVERAGES = /averages over the whole run/;

const cases: readonly Case[] = [
  {
    // max_steps 1,000 (line 1) and train_runtime 1234.5678 s (the dict, line 2) → 1.2345678 s per step; the block's
    // truncated 0:20:34.56 is the same run and is not needed.
    name: 'dict and block with Total optimization steps: train_runtime ÷ steps',
    lines: [
      TOTAL('1,000'),
      "{'train_runtime': 1234.5678, 'train_samples_per_second': 25.92, 'train_steps_per_second': 0.81, 'train_loss': 2.1, 'epoch': 1.0}",
      ...hfBlock({ epoch: '1.0', total_flos: '1234GF', train_loss: '2.1', train_runtime: '0:20:34.56', train_samples_per_second: '25.92', train_steps_per_second: '0.81' }),
    ],
    expect: { engine: 'hf-trainer', figures: { stepSeconds: 1.2345678 }, lines: { stepSeconds: 2 }, steps: 1_000, warnings: [AVERAGES] },
  },
  {
    // The block alone without the step count: 1 ÷ train_steps_per_second 0.8 = 1.25 s.
    name: 'block alone: 1 ÷ train_steps_per_second',
    lines: hfBlock({ epoch: '3.0', train_runtime: '0:02:03.40', train_samples_per_second: '6.4', train_steps_per_second: '0.8' }),
    expect: { engine: 'hf-trainer', figures: { stepSeconds: 1.25 }, lines: { stepSeconds: 5 }, steps: 0, warnings: [AVERAGES], noWarnings: [/uncertain/] },
  },
  {
    // 1 ÷ 0.012 = 83.333… s; speed_metrics rounds to 3 decimals, ±0.0005 / 0.012 = ±4 %.
    name: 'slow run: the rounding of train_steps_per_second is flagged',
    lines: ["{'train_runtime': 83333.3, 'train_samples_per_second': 0.384, 'train_steps_per_second': 0.012, 'epoch': 1.0}"],
    expect: { engine: 'hf-trainer', figures: { stepSeconds: 1 / 0.012 }, warnings: [/uncertain by ±4 %/] },
  },
  {
    // A runtime over a day: "1 day, 2:03:04.50" = 86,400 + 2·3,600 + 3·60 + 4.5 = 93,784.5 s over 1,000 steps →
    // 93.7845 s per step.
    name: 'block runtime over a day with the step count',
    lines: [TOTAL('1,000'), ...hfBlock({ train_runtime: '1 day, 2:03:04.50', train_steps_per_second: '0.011' })],
    expect: { engine: 'hf-trainer', figures: { stepSeconds: 93.7845 }, steps: 1_000 },
  },
  {
    // No step rate and no step count: the samples per second are the figure, global (max_steps × the total batch).
    name: 'samples per second only: global',
    lines: ["{'train_runtime': 100.0, 'train_samples_per_second': 12.5, 'train_loss': 1.0}"],
    expect: { engine: 'hf-trainer', figures: { samplesPerSecond: 12.5 }, scope: 'global', warnings: [AVERAGES] },
  },
  {
    // all_results.json pasted: one key per line, double quotes; 1 ÷ 2.0 = 0.5 s.
    name: 'all_results.json',
    lines: ['{', '    "epoch": 1.0,', '    "train_runtime": 50.0,', '    "train_samples_per_second": 64.0,', '    "train_steps_per_second": 2.0', '}'],
    expect: { engine: 'hf-trainer', figures: { stepSeconds: 0.5 }, lines: { stepSeconds: 5 } },
  },
];

describe('Hugging Face Trainer logs', () => {
  for (const c of cases) test(c.name, () => { check(c.lines.join('\n') + '\n', c.expect); });
});
