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
import { FactSink } from '../../../formats/common/sink';

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

describe('batch terms set when the run starts', () => {
  before(async () => { await initFormats(); });

  test('accumulation from a run-time value is assumed 1 and listed, naming the flag', () => {
    const r = resolved('--per_device_train_batch_size=1 --gradient_accumulation_steps=$grad_acc');
    assert.equal(r.plan!.training.gradAccum, 1);
    assert.equal(r.plan!.sources['training.gradAccum']?.kind, 'assumed');
    const a = r.assumptions.find((x) => x.path === 'training.gradAccum');
    assert.ok(a && a.detail.startsWith('--gradient_accumulation_steps is set when the run starts'), JSON.stringify(r.assumptions));
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
    assert.match(detail('cluster.worldSize'), /--nnodes and --nproc_per_node are set when the run starts/);
    assert.match(detail('cluster.gpusPerNode'), /--nproc_per_node is set when the run starts/);
    assert.match(detail('training.seqLen'), /--block_size is set when the run starts/);
    assert.equal(r.plan!.cluster.nodes * r.plan!.cluster.gpusPerNode, 8);
  });

  test('a micro batch from a run-time value is assumed 1 and says why', () => {
    const r = resolved('--per_device_train_batch_size=$mbs --gradient_accumulation_steps=2');
    const a = r.assumptions.find((x) => x.path === 'training.microBatch');
    assert.ok(a && a.detail.includes('is set when the run starts'), JSON.stringify(r.assumptions));
    assert.equal(r.plan!.training.microBatch, 1);
  });

  // Megatron-LM: global batch = micro batch × DP × accumulation (megatron/core/num_microbatches_calculator.py), so one
  // of the three set at run time is assumed and the other two follow. 8 GPUs, TP 1 (Megatron's default): DP 8.
  const megatron = (batch: string) => resolvePlan(parseConfig('/ws/pretrain.sh', `#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \\
  --num-attention-heads 32 --seq-length 4096 ${batch} --bf16
`), []);

  test('a run-time micro batch with a stated global batch is 1 sequence per GPU, and the accumulation follows (1024 / (1 × 8) = 128)', () => {
    // Before, the micro batch was derived as 1024 / 8 = 128 sequences per GPU, with nothing assumed.
    const r = megatron('--micro-batch-size $MBS --global-batch-size 1024');
    assert.equal(r.plan!.training.microBatch, 1);
    assert.equal(r.plan!.training.gradAccum, 128);
    assert.equal(r.plan!.training.globalBatch, 1024);
    const a = r.assumptions.find((x) => x.path === 'training.microBatch');
    assert.ok(a && a.detail.startsWith('--micro-batch-size is set when the run starts') && a.detail.includes('global batch of 1024'), JSON.stringify(r.assumptions));
  });

  test('a run-time global batch is one micro-batch per step, said as an assumption naming the flag (2 × 8 = 16)', () => {
    // Before, it was silent: the global batch came out as micro × DP as if the file had said so.
    const r = megatron('--micro-batch-size 2 --global-batch-size $GBS');
    assert.equal(r.plan!.training.gradAccum, 1);
    assert.equal(r.plan!.training.globalBatch, 16);
    const a = r.assumptions.find((x) => x.path === 'training.gradAccum');
    assert.ok(a && a.detail.startsWith('--global-batch-size is set when the run starts'), JSON.stringify(r.assumptions));
  });

  test('a run-time accumulation with a stated global batch and no micro batch says the micro batch is the global batch over DP', () => {
    // A file that states train_batch_size 256 and leaves the accumulation to the run: accumulation 1 makes the micro
    // batch 256 / 8 = 32 per GPU, and the assumption says that, not "one micro-batch per step".
    const s = new FactSink('deepspeed', 'file:///ws/ds.json');
    s.explicit('training.globalBatch', 256, { key: 'train_batch_size' });
    s.explicit('cluster.worldSize', 8, { key: 'world_size' });
    s.unresolved('value-unresolved', 'gradient_accumulation_steps', 'gradient_accumulation_steps uses a variable.', undefined, ['training.gradAccum']);
    const r = resolvePlan(s.build(), []);
    assert.equal(r.plan!.training.microBatch, 32);
    const a = r.assumptions.find((x) => x.path === 'training.gradAccum');
    assert.ok(a && a.detail.includes('micro batch is the global batch of 256'), JSON.stringify(r.assumptions));
  });

  test('a framework default standing in for a run-time value is an assumption, not the framework default', () => {
    // `--tensor-model-parallel-size $TP`: the run decides TP; Megatron's default of 1 (megatron/training/arguments.py)
    // applies only when the flag is absent, so it is listed as assumed, naming the flag.
    const r = megatron('--tensor-model-parallel-size $TP --micro-batch-size 1 --global-batch-size 64');
    assert.equal(r.plan!.parallel.tp, 1);
    assert.equal(r.plan!.sources['parallel.tp']?.kind, 'assumed');
    const a = r.assumptions.find((x) => x.path === 'parallel.tp');
    assert.ok(a && a.detail.startsWith('--tensor-model-parallel-size is set when the run starts'), JSON.stringify(r.assumptions));
    // Stated, the same flag is no assumption.
    assert.ok(!megatron('--tensor-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 64').assumptions.some((x) => x.path === 'parallel.tp'));
  });

  test('a run-time global batch beside a stated accumulation and no micro batch is named in the micro-batch assumption', () => {
    // train_batch_size from the run, gradient_accumulation_steps 4, 8 GPUs: micro 1 makes the global batch 1 × 4 × 8 = 32
    // (DeepSpeed: train_batch_size = micro × accumulation × DP), which rests on the run-time value being that.
    const s = new FactSink('deepspeed', 'file:///ws/ds.json');
    s.explicit('training.gradAccum', 4, { key: 'gradient_accumulation_steps' });
    s.explicit('cluster.worldSize', 8, { key: 'world_size' });
    s.unresolved('value-unresolved', 'train_batch_size', 'train_batch_size uses a variable.', undefined, ['training.globalBatch']);
    const r = resolvePlan(s.build(), []);
    assert.equal(r.plan!.training.globalBatch, 32);
    const a = r.assumptions.find((x) => x.path === 'training.microBatch');
    assert.ok(a && a.detail.includes('train_batch_size is set when the run starts'), JSON.stringify(r.assumptions));
  });

  test('an OmegaConf interpolation in a number or a switch is information naming the key, not an error', () => {
    // torchtune and NeMo configs interpolate (`${oc.env:SEQ}`); the run resolves them, ShardLens cannot.
    const nemo = `trainer:\n  devices: 8\n  num_nodes: 1\nmodel:\n  micro_batch_size: 1\n  global_batch_size: 8\n  encoder_seq_length: 4096\n  num_layers: 32\n  hidden_size: 4096\n  num_attention_heads: 32\n  ffn_hidden_size: 11008\n  fp8: \${oc.env:FP8}\n`;
    const f = parseConfig('/ws/megatron_gpt_config.yaml', nemo);
    const d = f.diagnostics.find((x) => x.setting === 'model.fp8');
    assert.ok(d && d.severity === 'info' && d.paths.includes('training.precision'), JSON.stringify(f.diagnostics));
    assert.ok(!f.diagnostics.some((x) => x.severity === 'error'), JSON.stringify(f.diagnostics));
    // A number read the same way (axolotl sequence_len from a template) becomes the sequence-length assumption.
    const ax = parseConfig('/ws/axolotl.yml', 'base_model: meta-llama/Llama-3.1-8B\nsequence_len: ${SEQ_LEN}\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\n');
    assert.ok(ax.diagnostics.some((x) => x.setting === 'sequence_len' && x.severity === 'info'), JSON.stringify(ax.diagnostics));
    const a = resolvePlan(ax, []).assumptions.find((x) => x.path === 'training.seqLen');
    assert.ok(a && a.detail.startsWith('sequence_len is set when the run starts'), JSON.stringify(a));
  });
});
