/**
 * `shardlens calibrate <config> --log <train.log>`: a torchtitan log of the Dec-2024 Table 2 run "FSDP 8, CP 1"
 * (3,890 tokens/s/GPU, peak reserved 83.90 GiB; pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md) against
 * the estimate of its launch file, and the settings entry that reproduces it. The log lines follow torchtitan's own
 * format string (torchtitan/components/metrics.py, MetricsProcessor.log: "step: … loss: … grad_norm: … memory:
 * {max_reserved_gib:5.2f}GiB({pct:.2f}%) tps: {round(tps):,} tflops: … mfu: …"), with its ANSI colours.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runCli, tempTree } from './helpers';

const TOML = readFileSync(join(ROOT, 'data/calibration/measured-runs/tt24_t2_8b_fsdp8_cp1.toml'), 'utf8');
const ESC = '\u001b';
const line = (step: number, tps: number) => `[rank0]:[titan] 2024-12-10 10:00:${String(step).padStart(2, '0')},000 - root - INFO - `
  + `${ESC}[31mstep: ${String(step).padStart(2)}  ${ESC}[32mloss:  7.1234  ${ESC}[33mgrad_norm:  1.2345  ${ESC}[36mmemory: 83.90GiB(88.31%)  `
  + `${ESC}[34mtps: ${tps.toLocaleString('en-US')}  ${ESC}[36mtflops: 225.31  ${ESC}[35mmfu: N/A${ESC}[39m`;
// Step 1 is compile warm-up; the steady steps' median is 3,890 tokens/s/GPU.
const LOG = [line(1, 512), ...[3880, 3890, 3900, 3885, 3895, 3890, 3890].map((t, i) => line(10 * (i + 1), t))].join('\n') + '\n';
const SETTINGS = JSON.stringify({ 'shardlens.cluster.gpu': 'h100-96gb-500w', 'shardlens.cluster.gpusPerNode': 8, 'shardlens.worldSize': 8 });

describe('shardlens calibrate', () => {
  test('a torchtitan log: measured against estimated, the correction, and the settings entry that reproduces it', () => {
    const t = tempTree({ '.git/HEAD': 'ref: x\n', '.vscode/settings.json': SETTINGS, 'train.toml': TOML, 'logs/train.log': LOG });
    try {
      const r = runCli(['calibrate', 'train.toml', '--log', 'logs/train.log', '--json'], { cwd: t.dir });
      assert.equal(r.status, 0, r.stderr + r.stdout);
      const out = JSON.parse(r.stdout);
      // One GPU's step is local batch 1 × 32,768 tokens: 32,768 / 3,890 s.
      assert.ok(Math.abs(out.comparison.step.measured - 32768 / 3890) < 1e-9, JSON.stringify(out.comparison.step));
      assert.equal(out.comparison.memory.measured, 83.9 * 2 ** 30);
      assert.ok(Math.abs(out.after.step.estimated / (32768 / 3890) - 1) < 1e-3);
      const entry = out.setting['shardlens.calibration']['h100-96gb-500w'];
      assert.ok(entry.efficiency > 0.5 && entry.efficiency < 2, String(entry.efficiency));
      assert.ok(entry.overheadBytes >= 0);
      const text = runCli(['calibrate', 'train.toml', '--log', 'logs/train.log'], { cwd: t.dir });
      assert.equal(text.status, 0, text.stderr);
      assert.match(text.stdout, /step\s+measured 8\.42 s/);
      assert.match(text.stdout, /"shardlens\.calibration"/);
    } finally {
      t.cleanup();
    }
  });

  test('with the correction saved, the same log reads as reproduced and a new one is solved against the catalog', () => {
    const t = tempTree({ '.git/HEAD': 'ref: x\n', '.vscode/settings.json': SETTINGS, 'train.toml': TOML, 'train.log': LOG });
    try {
      const first = JSON.parse(runCli(['calibrate', 'train.toml', '--log', 'train.log', '--json'], { cwd: t.dir }).stdout);
      const saved = { ...JSON.parse(SETTINGS), ...first.setting };
      const t2 = tempTree({ '.git/HEAD': 'ref: x\n', '.vscode/settings.json': JSON.stringify(saved), 'train.toml': TOML, 'train.log': LOG });
      try {
        const again = JSON.parse(runCli(['calibrate', 'train.toml', '--log', 'train.log', '--json'], { cwd: t2.dir }).stdout);
        assert.ok(Math.abs(again.comparison.step.error) < 1e-3, `calibrated estimate ${again.comparison.step.estimated}`);
        assert.ok(Math.abs(again.correction.efficiency / first.correction.efficiency - 1) < 1e-6);
        // `estimate` applies the stored correction and names it in the plan's sources.
        const est = runCli(['simulate', 'train.toml', '--json'], { cwd: t2.dir });
        assert.ok(Math.abs(JSON.parse(est.stdout).stepSeconds / (32768 / 3890) - 1) < 1e-3, est.stdout.slice(0, 300));
        // The step time says it rests on the calibration, and which.
        const shown = runCli(['simulate', 'train.toml'], { cwd: t2.dir });
        assert.match(shown.stdout, /^Step 8\.42 s \(kernels ×[\d.]+, calibrated: shardlens\.calibration\["h100-96gb-500w"\]/m);
      } finally {
        t2.cleanup();
      }
    } finally {
      t.cleanup();
    }
  });

  test('bad input: exit 2 with the reason, never a comparison', () => {
    const t = tempTree({ '.git/HEAD': 'ref: x\n', '.vscode/settings.json': SETTINGS, 'train.toml': TOML, 'noise.log': 'hello\nworld\n', 'empty.log': '' });
    try {
      for (const [args, want] of [
        [['calibrate', 'train.toml'], /usage: shardlens calibrate/],
        [['calibrate', 'train.toml', '--log'], /--log needs a value/],
        [['calibrate', 'train.toml', '--log', 'missing.log'], /missing\.log: no such file/],
        [['calibrate', 'train.toml', '--log', 'noise.log'], /torchtitan/],
        [['calibrate', 'train.toml', '--log', 'empty.log'], /torchtitan/],
        [['calibrate', 'train.toml', '--log', '/dev/zero'], /not a regular file/],
        [['calibrate', 'train.toml', '--log', 'noise.log', '--cluster-id', '../../etc'], /--cluster-id/],
      ] as const) {
        const r = runCli([...args], { cwd: t.dir });
        assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}`);
        assert.match(r.stderr, want);
      }
    } finally {
      t.cleanup();
    }
  });
});
