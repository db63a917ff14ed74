/**
 * What real pastes look like: Windows line ends, tqdm's lone `\r`, cut-off tails, huge logs, several engines in one
 * log, hostile numbers and text that is no log at all. Expected figures are worked out by hand in each comment.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GIB, MIB, check, failure, measure } from './check';
import { dsSeeMemory, megatronIter, megatronMemory, titanHead } from './formats';
import { parseTrainingLog } from '../../../shared/logs/parse';

const iter = (i: number, ms: string) => megatronIter({ iteration: i, trainIters: 1_000_000, ms });
// Warm-up 5000.0 ms, then 1300.0, 1200.0, 1250.0 ms → median 1.25 s (lines 2–4).
const MEGATRON = [iter(1, '5000.0'), iter(10, '1300.0'), iter(20, '1200.0'), iter(30, '1250.0')];
const titan = (step: number, tps: number, mem: string) => titanHead({ step, loss: 7, gradNorm: 1, memGiB: mem, memPct: 50, tps, tflops: 200, mfu: 20 });

describe('line ends, labels and noise', () => {
  // The last iteration line is line 4, or line 7 with a blank line between lines.
  const cases: readonly { name: string; log: string; line: number }[] = [
    { name: 'LF', log: MEGATRON.join('\n') + '\n', line: 4 },
    { name: 'CRLF', log: MEGATRON.join('\r\n') + '\r\n', line: 4 },
    { name: 'CRLF with ANSI colours', log: MEGATRON.map((l) => `\u001b[32m${l}\u001b[0m`).join('\r\n') + '\r\n', line: 4 },
    { name: 'torchrun [default0]: labels and blank lines', log: MEGATRON.map((l) => `[default0]:${l}`).join('\n\n'), line: 7 },
    { name: 'Open MPI --tag-output labels', log: MEGATRON.map((l) => `[1,0]<stdout>:${l}`).join('\n') + '\n', line: 4 },
  ];
  for (const c of cases) {
    test(`${c.name}: 1.25 s per step from line ${c.line}`, () => {
      check(c.log, { engine: 'megatron', figures: { stepSeconds: 1.25 }, lines: { stepSeconds: c.line }, steps: 3 });
    });
  }
  test("tqdm's lone \\r is a line end, as in VS Code: the dict after the bar is line 3", () => {
    const log = 'start\n 99%|█████████▉| 999/1000 [20:33<00:01,  1.23s/it]\r100%|██████████| 1000/1000 [20:34<00:00,  1.23s/it]'
      + "\r{'train_runtime': 1234.5, 'train_samples_per_second': 25.9, 'train_steps_per_second': 0.8, 'epoch': 1.0}\n";
    // 1 ÷ 0.8 = 1.25 s on line 4 (start, 99 % bar, 100 % bar, dict).
    check(log, { engine: 'hf-trainer', figures: { stepSeconds: 1.25 }, lines: { stepSeconds: 4 } });
  });
});

describe('cut-off logs', () => {
  test('a last line without line end that stops in a number is left out, with a warning', () => {
    // The cut line would read 12 ms; without it the median stays 1.25 s.
    const whole = iter(40, '1234.5');
    const log = MEGATRON.join('\n') + '\n' + whole.slice(0, whole.indexOf('(ms): ') + 8);
    assert.match(log, /\(ms\): 12$/);
    check(log, { engine: 'megatron', figures: { stepSeconds: 1.25 }, steps: 3, warnings: [/last line \(5\) has no line end/] });
  });
  test('a cut torchtitan line gives no half number', () => {
    // Steps 1 (warm-up), 10, 20, 30 at 4,000 tps and 40.00 GiB; the last line stops in "memory: 85.".
    const lines = [1, 10, 20, 30].map((s) => titan(s, 4_000, '40.00'));
    const cut = titan(40, 9_999, '85.00');
    const log = lines.join('\n') + '\n' + cut.slice(0, cut.indexOf('85.00') + 3);
    check(log, { engine: 'torchtitan', figures: { tokensPerSecondPerGpu: 4_000, peakReservedBytes: 40 * GIB }, warnings: [/may be cut off/] });
  });
  test('a last line that ends in a delimiter is complete and counts', () => {
    // Without a final line end the fifth line (1200.0 ms, ending in " |") counts: 1300, 1200, 1250, 1200 → 1.225 s.
    check(MEGATRON.join('\n') + '\n' + iter(40, '1200.0'), { engine: 'megatron', figures: { stepSeconds: 1.225 }, steps: 4, noWarnings: [/cut off/] });
  });
});

describe('huge logs are read within the caps', () => {
  test('5 MB of Megatron lines (under the line cap) are all read', () => {
    const lines: string[] = [];
    let size = 0;
    for (let i = 1; size < 5 * 1024 * 1024; i++) {
      const l = iter(i, i === 1 ? '9000.0' : '1000.0');
      lines.push(l);
      size += l.length + 1;
    }
    // Every line after the warm-up ones is 1000.0 ms → 1 s; no cap is reached.
    const m = check(lines.join('\n') + '\n', { engine: 'megatron', figures: { stepSeconds: 1 }, noWarnings: [/only the first/, /longer than/] });
    assert.ok(m.steps > 10_000 && m.steps < lines.length, String(m.steps));
  });
  test('5 MB of short lines: only the first 200,000 lines are read, and the log says so', () => {
    // Four torchtitan lines (4,000 tps after warm-up, 40.00 GiB), then 2.7 million two-byte lines.
    const head = [1, 10, 20, 30].map((s) => titan(s, 4_000, '40.00')).join('\n');
    const tail = titan(40, 1, '99.00');
    const log = `${head}\n${'x\n'.repeat(2_700_000)}${tail}\n`;
    assert.ok(log.length > 5 * 1024 * 1024);
    check(log, { engine: 'torchtitan', figures: { tokensPerSecondPerGpu: 4_000, peakReservedBytes: 40 * GIB }, warnings: [/more than 200,000 lines; only the first 200,000 were read/] });
  });
  test('a single 5 MB line is cut to 2,000 characters', () => {
    const log = `${'y'.repeat(5 * 1024 * 1024)}\n${MEGATRON.join('\n')}\n`;
    check(log, { engine: 'megatron', figures: { stepSeconds: 1.25 }, lines: { stepSeconds: 5 }, warnings: [/1 line was longer than 2,000 characters/] });
  });
});

describe('several engines in one log', () => {
  test('the engine with the most lines is read, and the log says which were found', () => {
    // Four Megatron lines against two DeepSpeed see_memory_usage lines (as Megatron-DeepSpeed prints).
    const log = [dsSeeMemory('1.0', '2.0', '3.0', '4'), ...MEGATRON, dsSeeMemory('1.0', '2.0', '3.0', '4')].join('\n') + '\n';
    check(log, { engine: 'megatron', figures: { stepSeconds: 1.25 }, warnings: [/several engines were found \(Megatron-LM: 4, DeepSpeed: 2\); the log was read as Megatron-LM/] });
  });
});

describe('hostile numbers', () => {
  test('Megatron: 1e400, -5, NaN, 0 and over a day are skipped and named', () => {
    // Good values: 5000.0 (warm-up), 1300.0, 1200.0, 1250.0 → 1.25 s. Bad (lines 5–9): 1e400 ms is infinite, −5.0,
    // nan, 0.0, and 90000000.0 ms = 90,000 s > one day. Memory: max reserved "1e400", "-5.00" and "NaN" are skipped;
    // 2048.00 MB → 2048·2²⁰ B.
    const bad = ['1e400', '-5.0', 'nan', '0.0', '90000000.0'].map((ms, i) => iter(100 + i, ms));
    const mem = ['1e400', '-5.00', 'NaN', '2048.00'].map((r) => megatronMemory(0, 1, '1.00', '1024.00', '1.00', r));
    check([...MEGATRON, ...bad, ...mem].join('\n') + '\n', {
      engine: 'megatron',
      figures: { stepSeconds: 1.25, peakAllocatedBytes: 1024 * MIB, peakReservedBytes: 2048 * MIB },
      warnings: [
        /Skipped 5 elapsed time per iteration \(ms\) values that were 0, negative, not a number or over a day \(lines 5, 6, 7, 8, 9\)/,
        /Skipped 3 max reserved \(MB\) values that were negative, not a number or over 10 TiB \(lines 10, 11, 12\)/,
      ],
    });
  });
  test('torchtitan: memory of 1e400 GiB, -5 GiB, nan and 11 TiB is skipped', () => {
    const lines = [titan(1, 900, '1e400'), titan(10, 4_000, '-5.00'), titan(20, 4_000, 'nan'), titan(30, 4_000, '11264.00'), titan(40, 4_000, '50.00')];
    check(lines.join('\n') + '\n', { engine: 'torchtitan', figures: { tokensPerSecondPerGpu: 4_000, peakReservedBytes: 50 * GIB }, warnings: [/Skipped 4 memory \(GiB\) values/] });
  });
  test('nothing but hostile values: an error that says so', () => {
    assert.match(failure([iter(1, 'nan'), iter(2, '-1.0')].join('\n') + '\n'), /Megatron-LM were found, but none held a usable figure.*Skipped 2/);
  });
});

describe('no log at all', () => {
  const texts: readonly [string, string][] = [
    ['empty', ''],
    ['whitespace', ' \n\r\n\t\n'],
    ['prose', 'Epoch 1: loss went down nicely.\nThe GPUs were warm.\n'],
    ['binary', String.fromCharCode(...Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256))],
    ['an estimate, not a measurement', 'Theoretical memory footprints: weight and optimizer=1234.56 MB, activation=789.01 MB, total=2023.57 MB\n'],
  ];
  for (const [name, text] of texts) {
    test(`${name}: an error naming the engines understood`, () => {
      assert.match(failure(text), /torchtitan, Megatron-LM, DeepSpeed or the Hugging Face Trainer/);
    });
  }
  test('a value that is not a string is an error, not a throw', () => {
    for (const v of [undefined, null, 42, {}]) assert.equal(parseTrainingLog(v as unknown as string).ok, false);
  });
  test('the result is plain data', () => {
    const m = measure(MEGATRON.join('\n'));
    assert.deepEqual(JSON.parse(JSON.stringify(m)), m);
  });
});
