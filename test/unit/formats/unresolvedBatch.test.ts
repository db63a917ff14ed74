/**
 * A batch term the file writes with a value only the run gives (simplescaling/s1 train/sft_slurm.sh:
 * `--gradient_accumulation_steps=$grad_acc` with `grad_acc=$((batch_size/(gpu_count * nnodes)))` and gpu_count from
 * `nvidia-smi -L | wc -l`) is an assumption the verdict lists, not "no gradient accumulation given": the estimate's
 * global batch and step time rest on it. When the micro and global batches are both known, accumulation follows from
 * them (global / (micro × DP)) and nothing is assumed.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';

const script = (batch: string) => `#!/bin/bash
gpu_count=$(nvidia-smi -L | wc -l)
grad_acc=$((16/gpu_count))
torchrun --nproc_per_node=8 train/sft.py \\
    --model_name="Qwen/Qwen2.5-7B-Instruct" \\
    --block_size=4096 \\
    ${batch} \\
    --bf16=True
`;
const resolved = (batch: string) => resolvePlan(parseConfig('/ws/train/sft.sh', script(batch)), []);

describe('batch terms set when the script runs', () => {
  before(async () => { await initFormats(); });

  test('accumulation from a run-time value is assumed 1 and listed, naming the flag', () => {
    const r = resolved('--per_device_train_batch_size=1 --gradient_accumulation_steps=$grad_acc');
    assert.equal(r.plan!.training.gradAccum, 1);
    assert.equal(r.plan!.sources['training.gradAccum']?.kind, 'assumed');
    const a = r.assumptions.find((x) => x.path === 'training.gradAccum');
    assert.ok(a && a.detail.startsWith('--gradient_accumulation_steps is set when the script runs'), JSON.stringify(r.assumptions));
  });

  test('a stated accumulation is not assumed', () => {
    const r = resolved('--per_device_train_batch_size=1 --gradient_accumulation_steps=2');
    assert.equal(r.plan!.training.gradAccum, 2);
    assert.ok(!r.assumptions.some((x) => x.path === 'training.gradAccum'));
  });

  test('GPU counts and the sequence length from run-time values say so in their assumptions', () => {
    const text = `#!/bin/bash
nnodes=$(scontrol show hostnames $SLURM_JOB_NODELIST | wc -l)
gpu_count=$(nvidia-smi -L | wc -l)
torchrun --nnodes=$nnodes --nproc_per_node=$gpu_count train/sft.py \\
    --model_name="Qwen/Qwen2.5-7B-Instruct" --block_size=$SEQ \\
    --per_device_train_batch_size=1 --gradient_accumulation_steps=4 --bf16=True
`;
    const r = resolvePlan(parseConfig('/ws/train/sft.sh', text), []);
    const detail = (p: string) => r.assumptions.find((x) => x.path === p)?.detail ?? '';
    assert.match(detail('cluster.worldSize'), /--nnodes and --nproc_per_node are set when the script runs/);
    assert.match(detail('cluster.gpusPerNode'), /--nproc_per_node is set when the script runs/);
    assert.match(detail('training.seqLen'), /--block_size is set when the script runs/);
    assert.equal(r.plan!.cluster.nodes * r.plan!.cluster.gpusPerNode, 8);
  });

  test('a micro batch from a run-time value is assumed 1 and says why', () => {
    const r = resolved('--per_device_train_batch_size=$mbs --gradient_accumulation_steps=2');
    const a = r.assumptions.find((x) => x.path === 'training.microBatch');
    assert.ok(a && a.detail.includes('is set when the script runs'), JSON.stringify(r.assumptions));
    assert.equal(r.plan!.training.microBatch, 1);
  });
});
