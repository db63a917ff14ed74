/**
 * "Apply layout" rewriters keep each file's formatting: golden before/after texts written by hand from the format
 * docs (docs/formats/: deepspeed.md, megatron.md, torchtitan.md, accelerate.md, axolotl.md, llamafactory.md).
 * Each case checks the full rewritten text, and that the minimal edits applied to the original give the same text.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { layoutEdits, type LayoutTarget } from '../../../formats/layout';
import { applyTextEdits } from '../../../formats/common/edit/text';
import { layersPerStageFor } from '../../../shared/plan/derived';
import { parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import type { FormatId } from '../../../shared/plan/facts';

/** A layout with every field; cases override what they change. */
function target(t: Partial<LayoutTarget>): LayoutTarget {
  return {
    tp: 1, pp: 1, vpp: 1, cp: 1, ep: 1, dp: 8, sp: false, zero: 0, sharding: 'deepspeed', distributedOptimizer: false,
    microBatch: 1, gradAccum: 1, recompute: 'none', offload: 'none', globalBatch: 8, layers: 32, ...t,
  };
}

interface Case {
  name: string;
  format: FormatId;
  before: string;
  target: LayoutTarget;
  after: string;
  /** Substrings the notes must contain. */
  notes?: string[];
}

const cases: Case[] = [
  {
    name: 'DeepSpeed: stage, micro batch, accumulation and a new offload object in 4-space style',
    format: 'deepspeed',
    before: `{
    "train_batch_size": 256,
    "train_micro_batch_size_per_gpu": 4,
    "gradient_accumulation_steps": 8,
    "bf16": { "enabled": true },
    "zero_optimization": {
        "stage": 1,
        "overlap_comm": true
    }
}
`,
    target: target({ zero: 3, microBatch: 2, gradAccum: 16, dp: 8, offload: 'cpu', globalBatch: 256 }),
    after: `{
    "train_batch_size": 256,
    "train_micro_batch_size_per_gpu": 2,
    "gradient_accumulation_steps": 16,
    "bf16": { "enabled": true },
    "zero_optimization": {
        "stage": 3,
        "overlap_comm": true,
        "offload_optimizer": {
            "device": "cpu"
        }
    }
}
`,
  },
  {
    name: 'DeepSpeed under the HF Trainer: "auto" values stay, tabs stay',
    format: 'deepspeed',
    before: '{\n\t"train_micro_batch_size_per_gpu": "auto",\n\t"gradient_accumulation_steps": "auto",\n\t"zero_optimization": {\n\t\t"stage": 2\n\t}\n}\n',
    target: target({ zero: 3, microBatch: 2, gradAccum: 4 }),
    after: '{\n\t"train_micro_batch_size_per_gpu": "auto",\n\t"gradient_accumulation_steps": "auto",\n\t"zero_optimization": {\n\t\t"stage": 3\n\t}\n}\n',
    notes: ['train_micro_batch_size_per_gpu is "auto"'],
  },
  {
    name: 'Megatron: values at variable definitions, flags inserted in a \\ chain, recompute switched to full',
    format: 'megatron-script',
    before: `#!/bin/bash
GPUS_PER_NODE=8
TP=\${TP:-2}
MBS=4

torchrun --nproc_per_node $GPUS_PER_NODE pretrain_gpt.py \\
    --num-layers 24 \\
    --tensor-model-parallel-size $TP \\
    --micro-batch-size $MBS \\
    --global-batch-size 512 \\
    --recompute-activations \\
    --bf16
`,
    target: target({ tp: 4, pp: 2, sp: true, microBatch: 1, gradAccum: 128, dp: 4, recompute: 'full', distributedOptimizer: true, zero: 1, sharding: 'megatron-distopt', globalBatch: 512, layers: 24 }),
    after: `#!/bin/bash
GPUS_PER_NODE=8
TP=\${TP:-4}
MBS=1

torchrun --nproc_per_node $GPUS_PER_NODE pretrain_gpt.py \\
    --num-layers 24 \\
    --tensor-model-parallel-size $TP \\
    --pipeline-model-parallel-size 2 \\
    --sequence-parallel \\
    --use-distributed-optimizer \\
    --recompute-granularity full \\
    --recompute-method uniform \\
    --recompute-num-layers 1 \\
    --micro-batch-size $MBS \\
    --global-batch-size 512 \\
    --bf16
`,
  },
  {
    name: 'Megatron: an option string edited inline, virtual stages removed',
    format: 'megatron-script',
    before: 'GPT_ARGS="--num-layers 32 --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 2 --micro-batch-size 1"\n',
    target: target({ tp: 8, pp: 2, sp: true, microBatch: 2 }),
    after: 'GPT_ARGS="--num-layers 32 --tensor-model-parallel-size 8 --pipeline-model-parallel-size 2 --sequence-parallel --micro-batch-size 2"\n',
  },
  {
    name: 'Megatron: removing the last flag of a \\ chain drops the previous backslash',
    format: 'megatron-script',
    before: 'python pretrain_gpt.py \\\n    --micro-batch-size 2 \\\n    --use-distributed-optimizer\n',
    target: target({ microBatch: 2 }),
    after: 'python pretrain_gpt.py \\\n    --micro-batch-size 2\n',
  },
  {
    name: 'Megatron: bash array with interleaving and a variable default',
    format: 'megatron-script',
    before: 'MODEL_PARALLEL_ARGS=(\n    --tensor-model-parallel-size 8\n    --pipeline-model-parallel-size ${PP:-8}\n)\nTRAINING_ARGS=(\n    --micro-batch-size 1\n)\n',
    target: target({ tp: 8, pp: 16, vpp: 2, sp: true, microBatch: 1, layers: 96 }),
    after: 'MODEL_PARALLEL_ARGS=(\n    --tensor-model-parallel-size 8\n    --pipeline-model-parallel-size ${PP:-16}\n    --num-layers-per-virtual-pipeline-stage 3\n    --sequence-parallel\n)\nTRAINING_ARGS=(\n    --micro-batch-size 1\n)\n',
  },
  {
    name: 'Megatron: a flag line with a trailing comment is removed whole when TP drops to 1',
    format: 'megatron-script',
    before: 'MODEL_PARALLEL_ARGS=(\n    --tensor-model-parallel-size 2\n    --sequence-parallel  # needs TP > 1\n)\n',
    target: target({ tp: 1, microBatch: 1 }),
    // --micro-batch-size is required by Megatron-LM, so a script without it gets it next to the TP flag.
    after: 'MODEL_PARALLEL_ARGS=(\n    --tensor-model-parallel-size 1\n    --micro-batch-size 1\n)\n',
  },
  {
    name: 'Megatron: the older --virtual-pipeline-model-parallel-size count is kept in its own spelling',
    format: 'megatron-script',
    before: 'ARGS="--pipeline-model-parallel-size 4 --virtual-pipeline-model-parallel-size 2 --micro-batch-size 1"\n',
    target: target({ pp: 8, vpp: 3, microBatch: 1, layers: 96 }),
    after: 'ARGS="--pipeline-model-parallel-size 8 --virtual-pipeline-model-parallel-size 3 --micro-batch-size 1"\n',
  },
  {
    // The layout places 10, 10, 10, 11, 10, 10, 10, 9 layers over PP 8 · VPP 5 (formats/megatron/layout.ts); a target
    // with that split keeps it and writes no uneven-split or virtual-stage flag next to it (Megatron rejects both).
    name: 'Megatron: a pipeline layout that matches the target stays, with no split flags beside it',
    format: 'megatron-script',
    before: 'ARGS=(\n    --pipeline-model-parallel-size 8\n    --pipeline-model-parallel-layout "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL"\n    --micro-batch-size 1\n)\n',
    target: target({ pp: 8, vpp: 5, microBatch: 2, layers: 80, stageLayers: [10, 10, 10, 11, 10, 10, 10, 9] }),
    after: 'ARGS=(\n    --pipeline-model-parallel-size 8\n    --pipeline-model-parallel-layout "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL"\n    --micro-batch-size 2\n)\n',
  },
  {
    name: 'Megatron: a pipeline layout that does not fit the new PP is removed, with a note',
    format: 'megatron-script',
    before: 'ARGS=(\n    --pipeline-model-parallel-size 8\n    --pipeline-model-parallel-layout "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL"\n    --micro-batch-size 1\n)\n',
    target: target({ pp: 4, microBatch: 1, layers: 80 }),
    after: 'ARGS=(\n    --pipeline-model-parallel-size 4\n    --micro-batch-size 1\n)\n',
    notes: ['--pipeline-model-parallel-layout'],
  },
  {
    name: 'Megatron-DeepSpeed: --checkpoint-activations is its recomputation switch, ZeRO stage at its variable',
    format: 'megatron-script',
    before: 'ZERO_STAGE=1\ndeepspeed pretrain_gpt.py \\\n    --micro-batch-size 4 \\\n    --zero-stage $ZERO_STAGE \\\n    --deepspeed\n',
    target: target({ zero: 2, microBatch: 4, recompute: 'full' }),
    after: 'ZERO_STAGE=2\ndeepspeed pretrain_gpt.py \\\n    --micro-batch-size 4 \\\n    --checkpoint-activations \\\n    --zero-stage $ZERO_STAGE \\\n    --deepspeed\n',
  },
  {
    // deepspeed/runtime/pipe/engine.py: "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism".
    name: 'Megatron-DeepSpeed: under its pipeline engine the ZeRO stage is written as at most 1, with a note',
    format: 'megatron-script',
    before: 'deepspeed pretrain_gpt.py --pipeline-model-parallel-size 1 --micro-batch-size 4 --zero-stage 0 --checkpoint-activations --deepspeed\n',
    target: target({ pp: 2, zero: 3, microBatch: 4, recompute: 'full' }),
    after: 'deepspeed pretrain_gpt.py --pipeline-model-parallel-size 2 --micro-batch-size 4 --zero-stage 1 --checkpoint-activations --deepspeed\n',
    notes: ['--zero-stage 1 was written'],
  },
  {
    // ZeRO-3 keeps torchtitan's "default" reshard policy (no reshard with PP): what derivePlan and the planner evaluate.
    // Two stages per rank is torchtitan's default for Interleaved1F1B: layers_per_stage 4 would make ⌈(32 + 2) / 4⌉ = 9
    // stages, which torchtitan refuses for PP 4 (torchtitan/distributed/pipeline_parallel.py).
    name: 'torchtitan: degrees, interleaved schedule, PP microbatch, quote style and comments kept',
    format: 'torchtitan',
    before: `[training]
local_batch_size = 8
seq_len = 8192

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 8  # within a node
pipeline_parallel_degree = 1

[activation_checkpoint]
mode = 'selective'
`,
    target: target({ tp: 4, pp: 4, vpp: 2, cp: 2, dp: 2, zero: 3, sharding: 'fsdp2', microBatch: 1, gradAccum: 8, recompute: 'full', globalBatch: 16, layers: 32 }),
    after: `[training]
local_batch_size = 8
seq_len = 8192

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 4  # within a node
pipeline_parallel_degree = 4
context_parallel_degree = 2
pipeline_parallel_schedule = "Interleaved1F1B"
pipeline_parallel_microbatch_size = 1

[activation_checkpoint]
mode = 'full'
`,
  },
  {
    name: 'torchtitan: no PP, accumulation needs an explicit global batch; missing table appended',
    format: 'torchtitan',
    before: '[training]\nlocal_batch_size = 8\n',
    target: target({ dp: 8, zero: 3, sharding: 'fsdp2', microBatch: 2, gradAccum: 4, recompute: 'none', globalBatch: 64 }),
    after: '[training]\nlocal_batch_size = 2\nglobal_batch_size = 64\n\n[activation_checkpoint]\nmode = "none"\n',
  },
  {
    name: 'Accelerate FSDP v1: index-form strategy and an inserted checkpointing key',
    format: 'accelerate',
    before: 'compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n  fsdp_sharding_strategy: 1\n  fsdp_offload_params: false\nmixed_precision: bf16\nnum_processes: 8\n',
    target: target({ zero: 2, sharding: 'fsdp', fsdpStrategy: 'SHARD_GRAD_OP', recompute: 'full', microBatch: 4 }),
    after: 'compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n  fsdp_sharding_strategy: 2\n  fsdp_offload_params: false\n  fsdp_activation_checkpointing: true\nmixed_precision: bf16\nnum_processes: 8\n',
    notes: ['Micro batch 4'],
  },
  {
    name: 'Accelerate FSDP v1: hybrid sharding by name',
    format: 'accelerate',
    before: 'distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\nnum_machines: 4\nnum_processes: 32\n',
    target: target({ zero: 3, sharding: 'fsdp', fsdpStrategy: 'HYBRID_SHARD', shardGroup: 8, dp: 32 }),
    after: 'distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: HYBRID_SHARD\nnum_machines: 4\nnum_processes: 32\n',
  },
  {
    name: 'torchtitan: HSDP over 4 nodes of 8',
    format: 'torchtitan',
    before: '[parallelism]\ndata_parallel_replicate_degree = 1\ndata_parallel_shard_degree = -1\n',
    target: target({ zero: 3, sharding: 'fsdp2', fsdpStrategy: 'HYBRID_SHARD', shardGroup: 8, dp: 32, microBatch: 2, recompute: 'selective' }),
    after: '[parallelism]\ndata_parallel_replicate_degree = 4\ndata_parallel_shard_degree = 8\nfsdp_reshard_after_forward = "always"\n\n[training]\nlocal_batch_size = 2\n',
  },
  {
    name: 'Accelerate DeepSpeed plugin: stage, offload and accumulation',
    format: 'accelerate',
    before: 'distributed_type: DEEPSPEED\ndeepspeed_config:\n  gradient_accumulation_steps: 1\n  zero_stage: 2\n  offload_optimizer_device: none\nnum_processes: 8\n',
    target: target({ zero: 3, gradAccum: 4, offload: 'cpu' }),
    after: 'distributed_type: DEEPSPEED\ndeepspeed_config:\n  gradient_accumulation_steps: 4\n  zero_stage: 3\n  offload_optimizer_device: cpu\nnum_processes: 8\n',
  },
  {
    name: 'Axolotl: batch keys, checkpointing off, bundled DeepSpeed config swapped',
    format: 'axolotl',
    before: 'base_model: meta-llama/Llama-3.1-8B\nsequence_len: 4096\nmicro_batch_size: 4 # per GPU\ngradient_accumulation_steps: 2\ngradient_checkpointing: true\ndeepspeed: deepspeed_configs/zero2.json\n',
    target: target({ zero: 3, microBatch: 1, gradAccum: 8 }),
    after: 'base_model: meta-llama/Llama-3.1-8B\nsequence_len: 4096\nmicro_batch_size: 1 # per GPU\ngradient_accumulation_steps: 8\ngradient_checkpointing: false\ndeepspeed: deepspeed_configs/zero3.json\n',
  },
  {
    name: 'LLaMA-Factory: batch keys, checkpointing disabled by an inserted key, ds_z config swapped',
    format: 'llamafactory',
    before: '### model\nmodel_name_or_path: Qwen/Qwen3-8B\n\n### train\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 8\ndeepspeed: examples/deepspeed/ds_z3_config.json\nbf16: true\n',
    target: target({ zero: 2, microBatch: 2, gradAccum: 4 }),
    after: '### model\nmodel_name_or_path: Qwen/Qwen3-8B\n\n### train\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 4\ndeepspeed: examples/deepspeed/ds_z2_config.json\nbf16: true\ndisable_gradient_checkpointing: true\n',
  },
];

describe('layout rewriters keep formatting', () => {
  for (const c of cases) {
    test(c.name, () => {
      const r = layoutEdits(c.format, c.before, c.target);
      const after = applyTextEdits(c.before, r.edits);
      assert.equal(after, c.after);
      for (const n of c.notes ?? []) assert.ok(r.notes.some((x) => x.includes(n)), `notes ${JSON.stringify(r.notes)} lack "${n}"`);
    });
  }

  // torchtitan builds ⌈(L + 1 + 1) / layers_per_stage⌉ stages (torchtitan/distributed/pipeline_parallel.py at 238fa995):
  // the rewritten file, read back, must hold the virtual stages the layout asked for.
  test('torchtitan: the virtual stages written are the ones torchtitan builds when it reads the file back', () => {
    const before = '[model]\nname = "llama3"\nflavor = "405B"\n[training]\nlocal_batch_size = 8\n[parallelism]\npipeline_parallel_degree = 1\n';
    for (const [pp, vpp] of [[8, 2], [8, 4], [4, 4], [2, 8]] as const) {
      const r = layoutEdits('torchtitan', before, target({ pp, vpp, dp: 1, zero: 3, sharding: 'fsdp2', microBatch: 1, gradAccum: 8, globalBatch: 8, layers: 126 }));
      const plan = resolvePlan(parseConfig('/x/a.toml', applyTextEdits(before, r.edits), 'torchtitan'), []).plan!;
      assert.equal(plan.parallel.vpp, vpp, `PP ${pp} × ${vpp}: ${r.notes.join(' ')}`);
    }
    // 128 effective layers over 32 stages: 4 per stage; over 21: ⌈128/21⌉ = 7 gives 19 stages, 6 gives 22: none.
    assert.equal(layersPerStageFor(128, 32), 4);
    assert.equal(layersPerStageFor(128, 21), undefined);
    const none = layoutEdits('torchtitan', before, target({ pp: 7, vpp: 3, dp: 1, zero: 3, sharding: 'fsdp2', microBatch: 1, gradAccum: 8, globalBatch: 8, layers: 126 }));
    assert.ok(none.notes.some((n) => n.includes('21 stages')), JSON.stringify(none.notes));
  });

  test('edits are minimal: a one-value change is one edit of that value', () => {
    const before = '[parallelism]\ntensor_parallel_degree = 8\n';
    const r = layoutEdits('torchtitan', before, target({ tp: 4, zero: 3, sharding: 'fsdp2', microBatch: 8, recompute: 'selective' }));
    // local_batch_size is missing and gets inserted; tensor_parallel_degree changes one character.
    const tpEdit = r.edits.find((e) => e.range.start.line === 1);
    assert.deepEqual(tpEdit, { range: { start: { line: 1, character: 25 }, end: { line: 1, character: 26 } }, newText: '4' });
  });

  test('the delta states costs and changed settings', () => {
    const before = target({ tp: 1, microBatch: 4 });
    const r = layoutEdits('deepspeed', '{}', target({ tp: 1, microBatch: 1 }), before,
      { before: { peakBytes: 71.2 * 2 ** 30, stepSeconds: 9.8 }, after: { peakBytes: 54.3 * 2 ** 30, stepSeconds: 7.1 } });
    assert.equal(r.delta, 'peak 71.2 → 54.3 GiB, step 9.8 → 7.1 s; micro batch 4 → 1');
  });

  test('unknown formats and broken text give notes, not exceptions', () => {
    assert.equal(layoutEdits('hf-config', '{}', target({})).edits.length, 0);
    const r = layoutEdits('axolotl', 'a: [1, 2\nb: c: d\n', target({}));
    assert.equal(r.edits.length, 0);
    assert.ok(r.notes.length > 0);
  });
});
