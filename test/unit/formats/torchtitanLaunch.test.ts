/**
 * Launch scripts that run torchtitan's trainer. Expected behaviour from torchtitan's source:
 * - `-m torchtitan.train --job.config_file x.toml` (torchtitan until 2026-02, run_train.sh's CONFIG_FILE) reads the TOML,
 *   and `--section.key value` options override it (torchtitan/config/manager.py: the CLI is parsed over the TOML).
 * - torchtitan trains with FSDP2 over the shard dimension with fp32 parameters and bf16 compute
 *   (torchtitan/models/llama3/infra/parallelize.py, MixedPrecisionPolicy), not as Megatron's engine.
 * - From 2026-02 (pytorch/torchtitan#2386, "Config System Refactor: TOML to Python Dataclass Registry") run_train.sh
 *   launches `--module ${MODULE} --config ${CONFIG}`: a Python function returning Trainer.Config, which ShardLens
 *   neither runs nor reads, and says so.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { memoryHost } from './helpers';
import type { LayoutTarget } from '../../../formats/layout';
import { FORMATS } from '../../../formats/registry';

const TOML = `[model]
name = "llama3"
flavor = "8B"

[training]
local_batch_size = 1
seq_len = 8192

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 1

[activation_checkpoint]
mode = "selective"
`;

const OLD = `#!/bin/bash
NGPU=\${NGPU:-"8"}
CONFIG_FILE=\${CONFIG_FILE:-"./llama3_8b.toml"}
torchrun --nproc_per_node=\${NGPU} -m torchtitan.train --job.config_file \${CONFIG_FILE} --parallelism.tensor_parallel_degree 2 --training.local_batch_size=2
`;

const NEW = `#!/usr/bin/bash
NGPU=\${NGPU:-"8"}
MODULE=\${MODULE:-"llama3"}
CONFIG=\${CONFIG:-"llama3_8b"}
torchrun --nproc_per_node=\${NGPU} --rdzv_backend c10d -m torchtitan.train --module \${MODULE} --config \${CONFIG} "$@"
`;

describe('torchtitan launch scripts', () => {
  before(async () => { await initFormats(); });

  test('a job TOML with --section.key options: the options override it, the plan is torchtitan\'s (FSDP2, not Megatron)', () => {
    const g = loadConfigGraph('/ws/run_train.sh', memoryHost({ '/ws/run_train.sh': OLD, '/ws/llama3_8b.toml': TOML }), { settings: {} });
    const plan = g.resolved.plan;
    assert.ok(plan, JSON.stringify(g.resolved.problems));
    assert.equal(plan.parallel.tp, 2, 'the CLI option wins over the TOML');
    assert.equal(plan.parallel.dp, 4, '8 GPUs / TP 2');
    assert.equal(plan.training.microBatch, 2, '--training.local_batch_size=2');
    assert.equal(plan.training.seqLen, 8192, 'from the TOML');
    assert.equal(plan.engine, 'fsdp2');
    assert.equal(plan.parallel.sharding.style, 'fsdp2');
    assert.equal(plan.training.recompute, 'selective');
    // The options are read where they are written.
    const tp = g.primary.facts['parallel.tp'];
    assert.equal(tp?.source.kind, 'explicit');
    assert.equal(tp?.keyRange?.start.line, 3);
    assert.equal(g.primary.diagnostics.some((d) => d.code === 'torchtitan-python-config' || d.code === 'unknown-trainer'), false);
  });

  test('--module/--config (torchtitan ≥ 2026-02): a reference to the function in the model\'s registry; without the file, torchtitan\'s defaults', () => {
    const r = parseConfig('/ws/run_train.sh', NEW);
    const ref = r.references.find((x) => x.kind === 'config');
    assert.deepEqual([ref?.target, ref?.symbol], ['torchtitan/models/llama3/config_registry.py', 'llama3_8b']);
    const d = r.diagnostics.find((x) => x.code === 'torchtitan-python-config');
    assert.ok(d, JSON.stringify(r.diagnostics));
    assert.match(d.message, /"llama3\.llama3_8b" is a Python function: ShardLens reads it from torchtitan\/models\/llama3\/config_registry\.py without running it/);
    assert.equal(d.range.start.line, 4);
    assert.equal(r.diagnostics.some((x) => x.code === 'unknown-trainer'), false, 'one message, not two');
    const g = loadConfigGraph('/ws/run_train.sh', memoryHost({ '/ws/run_train.sh': NEW }), { settings: {} });
    assert.ok(g.resolved.problems.some((p) => p.code === 'reference-missing'), JSON.stringify(g.resolved.problems));
    const plan = g.resolved.plan;
    assert.ok(plan);
    assert.equal(plan.engine, 'fsdp2');
    assert.equal(plan.parallel.sharding.style, 'fsdp2');
    // torchtitan's defaults: seq_len 2048, local batch 8 (torchtitan/config/job_config.py).
    assert.equal(plan.training.seqLen, 2048);
    assert.equal(plan.training.microBatch, 8);
  });

  test('a --module/--config chosen by values the script cannot evaluate is warned, not followed', () => {
    const r = parseConfig('/ws/run.sh', 'torchrun --nproc_per_node 8 -m torchtitan.train --module "$(cat module.txt)" --config $1\n');
    assert.equal(r.references.some((x) => x.kind === 'config'), false);
    assert.equal(r.diagnostics.find((x) => x.code === 'torchtitan-python-config')?.severity, 'warning');
  });

  test('a Megatron script is still Megatron\'s', () => {
    const r = parseConfig('/ws/pretrain.sh', 'torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --num-layers 4 --hidden-size 1024 --num-attention-heads 8 --seq-length 2048 --micro-batch-size 1 --bf16\n');
    assert.equal(r.facts['launch.dialect']?.value, 'megatron');
    const g = loadConfigGraph('/ws/pretrain.sh', memoryHost({ '/ws/pretrain.sh': 'torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --num-layers 4 --hidden-size 1024 --num-attention-heads 8 --seq-length 2048 --micro-batch-size 1 --bf16\n' }), { settings: {} });
    assert.equal(g.resolved.plan?.engine, 'megatron');
  });

  const target = (t: Partial<LayoutTarget>): LayoutTarget => ({
    tp: 1, pp: 1, vpp: 1, cp: 1, ep: 1, dp: 8, sp: false, zero: 3, sharding: 'fsdp2', distributedOptimizer: false,
    microBatch: 1, gradAccum: 1, recompute: 'selective', offload: 'none', globalBatch: 8, layers: 32, ...t,
  });

  test('Apply layout writes torchtitan options, never Megatron flags: after the trainer, or over the stated value', () => {
    const rewrite = FORMATS['megatron-script'].rewrite!;
    const r = rewrite(NEW, target({ tp: 2, dp: 4, microBatch: 2 }));
    assert.ok(!/tensor-model-parallel-size|micro-batch-size/.test(r.text), r.text);
    assert.match(r.text, /-m torchtitan\.train --parallelism\.tensor_parallel_degree 2 --parallelism\.pipeline_parallel_degree 1 --parallelism\.context_parallel_degree 1 --training\.local_batch_size 2 --module/);
    // Read back: the options are the layout.
    const back = parseConfig('/ws/run_train.sh', r.text).facts;
    assert.equal(back['parallel.tp']?.value, 2);
    assert.equal(back['training.microBatch']?.value, 2);
    // The stated values of the older script are rewritten in place.
    const o = rewrite(OLD, target({ tp: 4, dp: 2, microBatch: 1 }));
    assert.match(o.text, /--parallelism\.tensor_parallel_degree 4 --training\.local_batch_size=1\n/);
    assert.equal((o.text.match(/tensor_parallel_degree/g) ?? []).length, 1);
  });

  test('Apply layout says what the job configuration keeps: pipeline micro-batches, ZeRO stages other than FSDP2\'s', () => {
    const r = FORMATS['megatron-script'].rewrite!(NEW, target({ pp: 4, dp: 2, zero: 2, microBatch: 1 }));
    assert.match(r.text, /--parallelism\.pipeline_parallel_degree 4/);
    assert.ok(!/local_batch_size/.test(r.text));
    assert.ok(r.notes.some((n) => /PP 4/.test(n)) && r.notes.some((n) => /ZeRO-2/.test(n)), JSON.stringify(r.notes));
  });
});
