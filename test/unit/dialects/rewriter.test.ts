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
import { loadConfigGraph } from '../../../server/formats/workspace';
import { memoryHost } from '../formats/helpers';

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

// A wrapper that runs the launch script with arguments (`bash ./train.sh --tp 2`, read through train.sh's argument loop,
// docs/dialects.md): its flags are train.sh's, not the trainer's.
describe('Apply layout on a script that runs the launch script with arguments', () => {
  before(async () => { await initFormats(); });
  const train = 'TP=1\nMBS=1\nwhile [[ $# -gt 0 ]]; do\n  case $1 in\n    --tp) TP=$2; shift 2 ;;\n    *) shift ;;\n  esac\ndone\n'
    + 'torchrun pretrain_gpt.py --tensor-model-parallel-size $TP --micro-batch-size $MBS --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --global-batch-size 64 --seq-length 2048\n';

  test('Megatron: the value passed is changed where it is written; no Megatron flag goes onto the other script\'s command line', () => {
    const wrapper = 'bash ./train.sh --tp 2 --verbose\n';
    const files = { '/ws/train.sh': train, '/ws/go.sh': wrapper };
    const g = loadConfigGraph('/ws/go.sh', memoryHost(files));
    assert.equal(g.primary.facts['parallel.tp']?.value, 2);
    const r = layoutEdits('megatron-script', wrapper, target({ tp: 4, pp: 2, microBatch: 2, sharding: 'megatron-distopt' }), undefined, undefined, g.primary);
    const out = applyTextEdits(wrapper, r.edits);
    assert.equal(out, 'bash ./train.sh --tp 4 --verbose\n');
    // Read back through train.sh: TP 4.
    assert.equal(loadConfigGraph('/ws/go.sh', memoryHost({ ...files, '/ws/go.sh': out })).primary.facts['parallel.tp']?.value, 4);
    // The micro batch is train.sh's own MBS=1: named there; PP has no flag anywhere: to be added to the training command.
    assert.ok(r.notes.some((n) => /--micro-batch-size 2 is set in train\.sh/.test(n)), r.notes.join(' | '));
    assert.ok(r.notes.some((n) => /--pipeline-model-parallel-size 2/.test(n)), r.notes.join(' | '));
  });

  test('torchtitan: options forwarded with "$@" are changed in the wrapper; what it lacks is said', () => {
    const run = 'NGPU=${NGPU:-"8"}\nCONFIG_FILE=${CONFIG_FILE:-"./train_configs/debug_model.toml"}\ntorchrun --nproc_per_node=${NGPU} -m torchtitan.train --job.config_file ${CONFIG_FILE} "$@"\n';
    const toml = '[model]\nname = "llama3"\nflavor = "8B"\n[training]\nlocal_batch_size = 2\nseq_len = 8192\n[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 1\n';
    const wrapper = 'export CONFIG_FILE=./train_configs/llama3_8b.toml\nbash ./run_train.sh --parallelism.tensor_parallel_degree 2\n';
    const files = { '/ws/run_train.sh': run, '/ws/go.sh': wrapper, '/ws/train_configs/llama3_8b.toml': toml };
    const g = loadConfigGraph('/ws/go.sh', memoryHost(files));
    // The exported CONFIG_FILE reaches run_train.sh: the TOML is read (llama3 8B, 2 sequences per micro-batch).
    assert.equal(g.resolved.plan?.model.layers, 32);
    assert.equal(g.resolved.plan?.training.microBatch, 2);
    assert.equal(g.primary.facts['parallel.tp']?.value, 2);
    const r = layoutEdits('megatron-script', wrapper, target({ tp: 4, dp: 2, sharding: 'fsdp2', microBatch: 1, globalBatch: 2 }), undefined, undefined, g.primary);
    assert.equal(applyTextEdits(wrapper, r.edits), wrapper.replace('degree 2', 'degree 4'));
    assert.ok(r.unwritable?.includes('training.microBatch'));
  });
});
