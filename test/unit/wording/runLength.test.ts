/**
 * The run's length (shared/wording/runLength.ts) from first principles: wall-clock = steps × step time, GPU-hours =
 * wall-clock × GPUs / 3600 s; Megatron's `--train-samples` gives steps = samples // global batch
 * (megatron/training/training.py update_train_iters, no batch-size ramp-up). And the readers that state the steps.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { formatDuration, formatGpuHours, runLength, runLine } from '../../../shared/wording/runLength';
import { memoryHost } from '../formats/helpers';

function load(path: string, text: string) {
  return loadConfigGraph(path, memoryHost({ [path]: text }), { settings: { worldSize: 8 } });
}

describe('run length', () => {
  before(async () => { await initFormats(); });

  test('durations and GPU-hours in words', () => {
    for (const [s, want] of [[45, '45.0 s'], [90, '1.5 min'], [1800, '30 min'], [9600, '2.67 h'], [90_000, '25.0 h'], [3 * 86400, '3.00 days'], [30 * 86400, '30.0 days'], [2 * 365.25 * 86400, '2.0 years']] as const) {
      assert.equal(formatDuration(s), want, String(s));
    }
    assert.equal(formatGpuHours(21.333), '21.3 GPU-hours');
    assert.equal(formatGpuHours(345_890.4), '345,890 GPU-hours');
    assert.equal(formatGpuHours(2.5e6), '2.50 M GPU-hours');
  });

  // [file, text, planned steps]
  const FILES: [string, string, number | undefined][] = [
    ['/ws/t.toml', '[model]\nname = "llama3"\nflavor = "8B"\n[training]\nlocal_batch_size = 1\nseq_len = 4096\nsteps = 3000\n', 3000],
    ['/ws/m.sh', 'torchrun pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --micro-batch-size 1 --global-batch-size 64 --train-iters 25000 --bf16\n', 25000],
    // 640,000 samples // global batch 64 = 10,000 steps.
    ['/ws/s.sh', 'torchrun pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --micro-batch-size 1 --global-batch-size 64 --train-samples 640000 --bf16\n', 10000],
    ['/ws/a.yaml', 'base_model: meta-llama/Meta-Llama-3-8B\nmicro_batch_size: 1\nsequence_len: 2048\nmax_steps: 500\n', 500],
    ['/ws/l.yaml', 'model_name_or_path: meta-llama/Meta-Llama-3-8B\nstage: sft\nfinetuning_type: full\ncutoff_len: 2048\nper_device_train_batch_size: 1\nmax_steps: 1200\n', 1200],
    // HF's max_steps −1 trains num_train_epochs: no planned step count.
    ['/ws/h.yaml', 'model_name_or_path: meta-llama/Meta-Llama-3-8B\nstage: sft\nfinetuning_type: full\ncutoff_len: 2048\nper_device_train_batch_size: 1\nmax_steps: -1\n', undefined],
    ['/ws/h.sh', 'torchrun --nproc_per_node 8 train.py --model_name_or_path meta-llama/Meta-Llama-3-8B --per_device_train_batch_size 2 --max_steps 800 --bf16\n', 800],
  ];
  for (const [path, text, want] of FILES) {
    test(`${path}: ${want ?? 'no'} planned steps`, () => {
      const g = load(path, text);
      const plan = g.resolved.plan!;
      assert.ok(plan, JSON.stringify(g.resolved.problems));
      const r = runLength(plan, 2);
      assert.equal(r?.steps, want);
      if (r && want) {
        assert.equal(r.seconds, want * 2);
        assert.equal(r.gpus, 8);
        assert.ok(Math.abs(r.gpuHours - (want * 2 * 8) / 3600) < 1e-9);
      }
    });
  }

  test('the line says steps × step time, the wall-clock, the GPUs and the GPU-hours', () => {
    const g = load('/ws/t.toml', FILES[0]![1]);
    // 3,000 × 9.6 s = 28,800 s = 8.00 h; × 8 GPUs / 3600 = 64.0 GPU-hours.
    assert.equal(runLine(runLength(g.resolved.plan, 9.6)!), '3,000 steps × 9.60 s ≈ 8.00 h on 8 GPUs = 64.0 GPU-hours');
    assert.equal(runLength(g.resolved.plan, Number.NaN), undefined);
    assert.equal(runLength(g.resolved.plan, 0), undefined);
  });

  test('a step count that is not a whole number is a warning at the value, never an error', () => {
    const g = load('/ws/t.toml', '[model]\nname = "llama3"\nflavor = "8B"\n[training]\nsteps = "many"\n');
    const d = g.primary.diagnostics.find((x) => x.code === 'invalid-value');
    assert.equal(d?.severity, 'warning');
    assert.match(d?.message ?? '', /training\.steps should be a whole number of steps/);
    assert.ok(g.resolved.plan);
    assert.equal(runLength(g.resolved.plan, 1), undefined);
  });
});
