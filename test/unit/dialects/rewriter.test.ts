/**
 * "Apply layout" on launch scripts that do not speak Megatron flags: values are replaced where they are written (a
 * literal or the variable that feeds the flag), missing ones are added with the dialect's own flag, and what the
 * trainer cannot hold is reported instead of written. Read back with the same reader.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { layoutEdits, type LayoutTarget } from '../../../formats/layout';
import { applyTextEdits } from '../../../formats/common/edit/text';

function target(t: Partial<LayoutTarget>): LayoutTarget {
  return {
    tp: 1, pp: 1, vpp: 1, cp: 1, ep: 1, dp: 8, sp: false, zero: 0, sharding: 'deepspeed', distributedOptimizer: false,
    microBatch: 1, gradAccum: 1, recompute: 'none', offload: 'none', globalBatch: 8, layers: 32, ...t,
  };
}

function apply(text: string, t: LayoutTarget) {
  const r = layoutEdits('megatron-script', text, t);
  const out = applyTextEdits(text, r.edits);
  return { out, r, facts: parseConfig('file:///ws/run.sh', out, 'megatron-script').facts };
}

describe('Apply layout on launch dialects', () => {
  before(async () => { await initFormats(); });

  test('DeepSpeed-Chat: the stage is changed in the variable that feeds --zero_stage; TP has no flag', () => {
    const text = 'ZERO_STAGE=$2\nif [ "$ZERO_STAGE" == "" ]; then\n    ZERO_STAGE=3\nfi\ndeepspeed main.py \\\n   --per_device_train_batch_size 4 \\\n   --zero_stage $ZERO_STAGE \\\n   --deepspeed\n';
    const { out, r, facts } = apply(text, target({ zero: 2, microBatch: 2, tp: 2 }));
    assert.match(out, /ZERO_STAGE=2\n/);
    assert.equal(facts['parallel.sharding.stage']?.value, 2);
    assert.equal(facts['training.microBatch']?.value, 2);
    assert.ok(r.unwritable?.includes('parallel.tp'));
    assert.ok(!out.includes('tensor-model-parallel'), 'no Megatron flag written into a DeepSpeed-Chat script');
  });

  test('OpenRLHF: a missing TP is added with its own flag; PP is not an OpenRLHF setting', () => {
    const text = 'deepspeed --module openrlhf.cli.train_sft \\\n   --zero_stage 2 \\\n   --micro_train_batch_size 4 \\\n   --train_batch_size 128\n';
    const { out, r, facts } = apply(text, target({ tp: 2, pp: 2, zero: 3, microBatch: 4 }));
    assert.match(out, /--ds_tensor_parallel_size 2/);
    assert.equal(facts['parallel.tp']?.value, 2);
    assert.equal(facts['parallel.sharding.stage']?.value, 3);
    assert.ok(r.unwritable?.includes('parallel.pp'));
  });

  test("ms-swift: --deepspeed zero3 becomes zero2", () => {
    const text = 'NPROC_PER_NODE=2 \\\nswift sft \\\n    --model Qwen/Qwen2.5-7B-Instruct \\\n    --per_device_train_batch_size 1 \\\n    --deepspeed zero3\n';
    const { out, facts } = apply(text, target({ zero: 2, microBatch: 1 }));
    assert.match(out, /--deepspeed zero2/);
    assert.equal(facts['parallel.sharding.stage']?.value, 2);
  });

  test('verl: the Megatron actor TP override is rewritten, the rollout TP is left alone', () => {
    const text = 'python3 -m verl.trainer.main_ppo \\\n    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 \\\n    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\\n    actor_rollout_ref.rollout.tensor_model_parallel_size=2\n';
    const { out, facts } = apply(text, target({ tp: 4, microBatch: 2 }));
    assert.match(out, /actor\.megatron\.tensor_model_parallel_size=4/);
    assert.match(out, /rollout\.tensor_model_parallel_size=2/);
    assert.equal(facts['parallel.tp']?.value, 4);
    assert.equal(facts['training.microBatch']?.value, 2);
  });
});
