// Gradient accumulation and the peak: a micro-batch after the first runs beside every gradient the earlier ones left
// (torch AccumulateGrad adds into `.grad` in place; FSDP2's foreach_reduce adds each new shard into the sharded
// `.grad`; `zero_grad(set_to_none=True)` runs only after the step). Expected differences are the gradient bytes from
// the models' published parameter counts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadConfig } from '../../../cli/load';
import { estimateMemory } from '../../../shared/memory/estimate';
import type { Plan } from '../../../shared/plan/types';
import { planOfText } from './helpers';

const root = join(__dirname, '..', '..', '..');
async function planOf(rel: string, gpus: string): Promise<Plan> {
  const plan = (await loadConfig(join(root, rel), { gpus })).resolved.plan;
  assert.ok(plan, `${rel} was not estimated`);
  return plan;
}

/** The same plan with `m` micro-batches per step (the global batch follows). */
function withAccum(plan: Plan, m: number): Plan {
  const t = plan.training;
  return { ...plan, training: { ...t, gradAccum: m, globalBatch: t.microBatch * m * plan.parallel.dp } };
}

const peakOf = (plan: Plan) => estimateMemory(plan).stages[0].peakAllocatedBytes;
const gradsAtPeak = (plan: Plan) => estimateMemory(plan).stages[0].terms.gradients?.bytes ?? 0;

describe('gradient accumulation carries the gradients into later micro-batches', () => {
  test('a one-GPU bf16 full fine-tune holds 2 bytes per parameter more at its peak', async () => {
    // LitGPT's TinyLlama full fine-tune (config hub, 8 micro-batches of 4): bf16-true, plain torch AdamW, no FSDP.
    // TinyLlama-1.1B has 1,100,048,384 parameters (its model card; 22 layers, hidden 2048, MLP 5632, vocabulary 32000,
    // untied head): 2,200,096,768 bytes of bf16 gradients.
    const plan = await planOf('data/calibration/checks/litgpt2409/tiny-llama_full.yaml', '1xA10G');
    const one = withAccum(plan, 1), eight = withAccum(plan, 8);
    // One micro-batch peaks before the backward: no gradient exists yet (set_to_none after the previous step).
    assert.equal(gradsAtPeak(one), 0);
    const grads = 2 * 1_100_048_384;
    assert.ok(Math.abs(peakOf(eight) - peakOf(one) - grads) < 0.001 * grads, `${peakOf(eight) - peakOf(one)} vs ${grads}`);
    assert.ok(Math.abs(gradsAtPeak(eight) - grads) < 0.001 * grads);
    // Two micro-batches already carry every gradient: the peak does not grow with more.
    assert.equal(peakOf(withAccum(plan, 2)), peakOf(eight));
  });

  test('FSDP2 carries the sharded fp32 gradients (torchtitan Llama 3.1 8B on 8 GPUs)', async () => {
    // torchtitan shards fp32 parameters and gradients (MixedPrecisionPolicy reduces into the fp32 sharded .grad):
    // Llama 3.1 8B has 8,030,261,248 parameters, so 4·Ψ/8 = 4,015,130,624 bytes of gradient per rank.
    const plan = await planOf('data/calibration/measured-runs/tt24_t2_8b_fsdp8_cp1.toml', '8xH100');
    const grads = (4 * 8_030_261_248) / 8;
    const diff = peakOf(withAccum(plan, 4)) - peakOf(withAccum(plan, 1));
    assert.ok(Math.abs(diff - grads) < 0.001 * grads, `${diff} vs ${grads}`);
  });

  test('FSDP2 under the HF Trainer\'s no_sync carries every gradient unsharded, in the reduce dtype', async () => {
    // The HF Trainer runs every micro-batch but the last under accelerator.no_sync, which for FSDP2 is
    // set_requires_gradient_sync(False): each group keeps its unsharded gradient, in the reduce dtype, until the last
    // micro-batch reduces it (torch fully_shard FSDPParam.to_accumulated_grad_if_needed). torchtitan's Llama 3.1 8B
    // layout reduces in fp32: 4·Ψ = 32,121,044,992 bytes on every rank, where the synced steps carry 4·Ψ/8.
    const plan = await planOf('data/calibration/measured-runs/tt24_t2_8b_fsdp8_cp1.toml', '8xH100');
    const noSync = { ...plan, training: { ...plan.training, syncEveryMicroBatch: false } };
    const grads = 4 * 8_030_261_248;
    const diff = peakOf(withAccum(noSync, 4)) - peakOf(withAccum(noSync, 1));
    assert.ok(Math.abs(diff - grads) < 0.001 * grads, `${diff} vs ${grads}`);
    // One micro-batch has nothing to carry: the sync setting changes nothing.
    assert.equal(peakOf(withAccum(noSync, 1)), peakOf(withAccum(plan, 1)));
  });

  test('FSDP1 under no_sync carries the unsharded gradients in the parameter dtype, on the GPU even with offload', async () => {
    // FullyShardedDataParallel.no_sync: the post-backward hook returns before the reduce-scatter, so the flat
    // parameter's .grad stays unsharded in the dtype autograd made it, the mixed-precision parameter dtype (bf16 under
    // Accelerate's bf16), and "will not be offloaded to CPU when inside the context manager" (the no_sync docstring).
    // Llama 3.1 8B: 2 · 8,030,261,248 = 16,060,522,496 bytes on every rank.
    const plan = await planOf('examples/accelerate/fsdp_v1_offload.yaml', '8xH100');
    assert.equal(plan.parallel.sharding.style, 'fsdp');
    assert.equal(plan.parallel.sharding.offloadParams, 'cpu');
    const grads = 2 * 8_030_261_248;
    const noSync = { ...plan, training: { ...plan.training, syncEveryMicroBatch: false } };
    const diff = peakOf(withAccum(noSync, 4)) - peakOf(withAccum(noSync, 1));
    assert.ok(Math.abs(diff - grads) < 0.001 * grads, `${diff} vs ${grads}`);
    // Synced in every micro-batch, the sharded gradients go to the host with the parameters (CPUOffload
    // offload_params=True keeps them in the flat parameter's _cpu_grad): accumulation adds nothing on the GPU.
    const synced = { ...plan, training: { ...plan.training, syncEveryMicroBatch: true } };
    assert.equal(peakOf(withAccum(synced, 4)), peakOf(withAccum(synced, 1)));
    assert.equal(gradsAtPeak(withAccum(synced, 4)), 0);
  });

  test('LitGPT on several devices accumulates under Fabric\'s no_backward_sync: FSDP1 carries bf16 gradients unsharded', async () => {
    // litgpt/finetune/full.py runs `fabric.no_backward_sync(model, enabled=is_accumulating)`, which Fabric's
    // FSDPStrategy turns into FullyShardedDataParallel.no_sync (lightning/fabric/strategies/fsdp.py
    // _FSDPBackwardSyncControl). The example: Llama 3.1 8B, bf16-true, 4 devices, global batch 64 of micro batch 4, so
    // 4 micro-batches; the later ones carry 2 · 8,030,261,248 bytes of unsharded bf16 gradients instead of a quarter.
    const plan = await planOf('examples/litgpt/llama-3.1-8b-full.yaml', '4xH100');
    assert.equal(plan.parallel.sharding.style, 'fsdp');
    assert.equal(plan.training.syncEveryMicroBatch, false);
    assert.equal(plan.sources['training.syncEveryMicroBatch']?.kind, 'default');
    assert.equal(plan.training.gradAccum, 4);
    assert.ok(Math.abs(gradsAtPeak(plan) - 2 * 8_030_261_248) < 0.001 * 2 * 8_030_261_248, `${gradsAtPeak(plan)}`);
  });

  test('the readers: Hugging Face Trainer files leave the sync to the last micro-batch; torchtitan and torchtune do not say', async () => {
    const ax = await planOf('test/server/fixtures/axolotl.yaml', '8xH100');
    assert.equal(ax.training.syncEveryMicroBatch, false);
    assert.equal(ax.sources['training.syncEveryMicroBatch']?.kind, 'default');
    const titan = await planOf('data/calibration/measured-runs/tt24_t2_8b_fsdp8_cp1.toml', '8xH100');
    assert.equal(titan.training.syncEveryMicroBatch, undefined);
    // LLaMA-Factory's v1 loop calls loss.backward() in every micro-batch with FSDP's sync on
    // (src/llamafactory/v1/core/base_trainer.py); its classic files run the HF Trainer.
    const v1 = await planOfText('v1.yaml', ['model: Qwen/Qwen3-8B', 'dist_config:', '  name: fsdp2', 'micro_batch_size: 1', 'cutoff_len: 2048', 'bf16: true', ''].join('\n'), '8xH100');
    assert.equal(v1.parallel.sharding.style, 'fsdp2');
    assert.equal(v1.training.syncEveryMicroBatch, undefined);
    const classic = await planOfText('classic.yaml', ['model_name_or_path: Qwen/Qwen3-8B', 'stage: sft', 'finetuning_type: full', 'cutoff_len: 2048', 'bf16: true', ''].join('\n'), '8xH100');
    assert.equal(classic.training.syncEveryMicroBatch, false);
    // Its Megatron back-end (examples/megatron) runs Megatron's schedules, not the Trainer's no_sync.
    const mca = await planOfText('mca.yaml', ['model_name_or_path: Qwen/Qwen3-8B', 'stage: sft', 'finetuning_type: full', 'cutoff_len: 2048', 'bf16: true',
      'gradient_accumulation_steps: 8', 'tensor_model_parallel_size: 2', 'pipeline_model_parallel_size: 2', 'use_distributed_optimizer: true', ''].join('\n'), '8xH100');
    assert.equal(mca.training.syncEveryMicroBatch, undefined);
    // Lingua turns the sync on for the cycle's last micro-batch only (apps/main/train.py set_requires_gradient_sync).
    const lingua = await planOf('examples/lingua/llama_1B.yaml', '8xH100');
    assert.equal(lingua.training.syncEveryMicroBatch, false);
  });

  test("Megatron's gradient buffer exists in every micro-batch already: accumulation adds nothing", async () => {
    // megatron/core/distributed/param_and_grad_buffer.py allocates main_grad once; it is zeroed, never freed.
    const plan = await planOf('data/calibration/measured-runs/nemo2407_llama3_8b.sh', '8xH100');
    const m = Math.max(2, plan.training.gradAccum);
    assert.equal(peakOf(withAccum(plan, m)), peakOf(withAccum(plan, 1)));
  });

  test('LoRA carries only the adapters\' gradients', async () => {
    // LitGPT's TinyLlama LoRA (r 32 on q, k, v, projection, MLP and head): the frozen base has no gradient, so the
    // accumulated gradients are the adapters', a fraction of a per cent of the full fine-tune's 2.2 GB.
    const plan = await planOf('data/calibration/checks/litgpt2409/tiny-llama_lora.yaml', '1xA10G');
    const diff = peakOf(withAccum(plan, 8)) - peakOf(withAccum(plan, 1));
    assert.ok(diff > 0 && diff < 0.05 * 2 * 1_100_048_384, `${diff}`);
  });
});

describe('the Trainer\'s sync_each_batch, and the information when no_sync raises the peak', () => {
  // An Axolotl FSDP2 fine-tune of Llama 3.1 8B on 8 GPUs with 4 micro-batches.
  const AX = ['base_model: meta-llama/Llama-3.1-8B', 'sequence_len: 2048', 'micro_batch_size: 1', 'gradient_accumulation_steps: 4',
    'bf16: true', 'optimizer: adamw_torch_fused', 'gradient_checkpointing: true', 'fsdp_version: 2', 'fsdp_config:', '  reshard_after_forward: true', ''].join('\n');

  test('accelerator_config.gradient_accumulation_kwargs.sync_each_batch, as a map, as JSON text and as a Trainer flag', async () => {
    // transformers trainer.py syncs in every micro-batch when the Accelerate plugin's sync_each_batch is set.
    const map = await planOfText('ax-map.yaml', `${AX}accelerator_config:\n  gradient_accumulation_kwargs:\n    sync_each_batch: true\n`, '8xH100');
    assert.equal(map.training.syncEveryMicroBatch, true);
    assert.equal(map.sources['training.syncEveryMicroBatch']?.kind, 'explicit');
    const json = await planOfText('ax-json.yaml', `${AX}accelerator_config: '{"gradient_accumulation_kwargs": {"sync_each_batch": true}}'\n`, '8xH100');
    assert.equal(json.training.syncEveryMicroBatch, true);
    const off = await planOfText('ax-off.yaml', `${AX}accelerator_config:\n  gradient_accumulation_kwargs:\n    sync_each_batch: false\n`, '8xH100');
    assert.equal(off.training.syncEveryMicroBatch, false);
    assert.equal(off.sources['training.syncEveryMicroBatch']?.kind, 'explicit');
    const flags = await planOfText('run.sh', ['torchrun --nproc_per_node 8 train.py --model_name_or_path meta-llama/Llama-3.1-8B --bf16 \\',
      '  --per_device_train_batch_size 1 --gradient_accumulation_steps 4 --fsdp "full_shard auto_wrap" \\',
      `  --accelerator_config '{"gradient_accumulation_kwargs": {"sync_each_batch": true}}'`, ''].join('\n'), '8xH100');
    assert.equal(flags.training.syncEveryMicroBatch, true);
    // A path to a JSON file (TrainingArguments accepts one), malformed JSON or another type says nothing: the default stays.
    for (const [i, v] of ['accelerate_config.json', "'{not json'", "'[1, 2]'", "'null'"].entries()) {
      const p = await planOfText(`ax-bad${i}.yaml`, `${AX}accelerator_config: ${v}\n`, '8xH100');
      assert.equal(p.training.syncEveryMicroBatch, false, v);
      assert.equal(p.sources['training.syncEveryMicroBatch']?.kind, 'default', v);
    }
  });

  test('the information: the unsharded gradients, the peak, the synced peak and the setting', async () => {
    // FSDP2 under no_sync carries Ψ unsharded gradients in the reduce dtype: bf16 here, 2 · 8,030,261,248 bytes = 14.96 GiB.
    const plan = await planOfText('ax-nosync.yaml', AX, '8xH100');
    const est = estimateMemory(plan);
    const info = est.problems.find((p) => p.code === 'no-sync-gradients');
    assert.ok(info, est.problems.map((p) => p.code).join(', '));
    assert.equal(info.severity, 'info');
    assert.match(info.message, /unsharded \(no_sync while accumulating\): 15\.0 GiB of the [\d.]+ GiB peak/);
    assert.match(info.message, /sync_each_batch: true/);
    const synced = estimateMemory({ ...plan, training: { ...plan.training, syncEveryMicroBatch: true } });
    assert.ok(!synced.problems.some((p) => p.code === 'no-sync-gradients'));
    const syncedPeak = Math.max(...synced.stages.map((s) => s.peakReservedBytes));
    assert.ok(info.message.includes(`would peak at ${(syncedPeak / 2 ** 30).toFixed(1)} GiB`), info.message);
    // One micro-batch has nothing to carry: nothing to say.
    assert.ok(!estimateMemory({ ...plan, training: { ...plan.training, gradAccum: 1, globalBatch: plan.parallel.dp } }).problems.some((p) => p.code === 'no-sync-gradients'));
  });
});

