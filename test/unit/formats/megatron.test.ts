/**
 * Megatron-LM launch scripts through tree-sitter-bash. Expected values follow bash semantics
 * (`${VAR:-default}`, `$(( ))`, array expansion, word splitting) and Megatron's flag meanings and defaults
 * (config-formats.md §2.2: tied embeddings and biases by default; --recompute-activations = selective).
 */
import { before, describe, test } from 'node:test';
import type { PlanPath } from '../../../shared/plan/paths';
import assert from 'node:assert/strict';
import { detectFormat, initFormats, parseConfig } from '../../../formats/index';
import { fixture, rangeOf } from './helpers';

describe('Megatron launch scripts', () => {
  before(async () => { await initFormats(); });

  test('arrays, defaults, arithmetic, strings and the torchrun world size', () => {
    const { path, text } = fixture('megatron/pretrain_llama.sh');
    assert.equal(detectFormat(path, text), 'megatron-script');
    const f = parseConfig(path, text).facts;
    const v = (p: PlanPath) => f[p]?.value;
    // GPUS_PER_NODE=8, NNODES=2 → world 16; TP=4 (default), PP=2 → DP = 16/8 = 2; GBS = 1·2·16 = 32.
    assert.equal(v('cluster.gpusPerNode'), 8);
    assert.equal(v('cluster.nodes'), 2);
    assert.equal(v('cluster.worldSize'), 16);
    assert.equal(v('parallel.tp'), 4);
    assert.equal(v('parallel.pp'), 2);
    assert.equal(v('training.globalBatch'), 32);
    assert.equal(v('training.microBatch'), 1);
    assert.equal(v('model.kvHeads'), 8);
    assert.equal(v('model.layers'), 32);
    assert.equal(v('model.norm'), 'rmsnorm');
    assert.equal(v('model.positions'), 'rotary');
    assert.equal(v('model.tiedEmbeddings'), false);
    assert.equal(v('model.attnBias'), 'none');
    assert.equal(v('parallel.sp'), true);
    assert.equal(v('training.recompute'), 'selective');
    assert.equal(v('parallel.sharding.style'), 'megatron-distopt');
    assert.equal(v('model.vocabSize'), 128256);
  });

  test('a value from a variable points at the variable\'s definition', () => {
    const { path, text } = fixture('megatron/pretrain_llama.sh');
    const f = parseConfig(path, text).facts;
    // TP=${TP:-4}: the default "4" is what the user edits.
    const d = rangeOf(text, '${TP:-4}');
    const four = { start: { line: d.start.line, character: d.start.character + 6 }, end: { line: d.start.line, character: d.start.character + 7 } };
    assert.deepEqual(f['parallel.tp']?.source.range, four);
    assert.deepEqual(f['parallel.tp']?.keyRange, rangeOf(text, '--tensor-model-parallel-size'));
    assert.deepEqual(f['model.layers']?.keyRange, rangeOf(text, '--num-layers'));
    assert.deepEqual(f['model.layers']?.source.range, rangeOf(text, '32', 0));
  });

  test('Megatron defaults where flags are absent', () => {
    const f = parseConfig('/x/train.sh', 'torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 --num-query-groups 2').facts;
    assert.equal(f['model.tiedEmbeddings']?.value, true);
    assert.equal(f['model.attnBias']?.value, 'all');
    assert.equal(f['model.ffnSize']?.value, 256); // 4h
    assert.equal(f['model.kvHeads']?.value, 4); // --num-query-groups ignored without --group-query-attention
    assert.match(f['model.tiedEmbeddings']!.source.detail, /Megatron-LM default/);
    const sw = parseConfig('/x/train.sh', 'python pretrain_gpt.py --num-layers 2 --hidden-size 4096 --num-attention-heads 32 --swiglu').facts;
    assert.equal(sw['model.ffnSize']?.value, 10880); // int(4h·2/3/64)·64 for h = 4096
  });

  test('Megatron-DeepSpeed: deepspeed launcher and a heredoc-written DeepSpeed JSON', () => {
    const { path, text } = fixture('megatron/megatron_deepspeed.sh');
    const f = parseConfig(path, text).facts;
    assert.equal(f['cluster.worldSize']?.value, 16);
    assert.equal(f['parallel.sharding.stage']?.value, 2);
    assert.equal(f['parallel.sharding.style']?.value, 'deepspeed');
    assert.equal(f['training.fp32GradAccum']?.value, true);
    assert.equal(f['training.recompute']?.value, 'full');
    assert.equal(f['training.microBatch']?.value, 4);
    // The heredoc's "stage": $ZERO_STAGE maps back to the default written in ZERO_STAGE=${ZERO_STAGE:-2}.
    assert.deepEqual(f['parallel.sharding.stage']?.source.range, rangeOf(text, '2', 0));
  });

  test('broken shell still yields flags', () => {
    const f = parseConfig('/x/train.sh', 'A=(\n --num-layers 4 \\\n --hidden-size "$((\ntorchrun pretrain_gpt.py ${A[@]} --micro-batch-size 2 "unterminated');
    assert.equal(typeof f.facts, 'object');
  });

  test('unresolved environment variables are reported, not guessed', () => {
    const f = parseConfig('/x/train.sh', 'torchrun --nproc_per_node 8 --nnodes $SLURM_NNODES pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers 2');
    assert.equal(f.facts['parallel.tp']?.source.kind, 'default');
    assert.equal(f.facts['cluster.worldSize'], undefined);
    assert.ok(f.diagnostics.some((d) => d.code === 'megatron-unresolved'));
  });

  test('HF Trainer launch script: DeepSpeed reference and the flags that fill "auto"', () => {
    const text = 'deepspeed --num_gpus 4 run_clm.py --deepspeed ds_config.json --model_name_or_path Qwen/Qwen2.5-7B \\\n  --per_device_train_batch_size 2 --gradient_accumulation_steps 8 --bf16 --gradient_checkpointing --block_size 2048\n';
    assert.equal(detectFormat('/x/run.sh', text), 'megatron-script');
    const f = parseConfig('/x/run.sh', text);
    assert.deepEqual(f.references.map((r) => [r.kind, r.target]), [['deepspeed', 'ds_config.json'], ['model', 'Qwen/Qwen2.5-7B']]);
    assert.equal(f.facts['training.microBatch']?.value, 2);
    assert.equal(f.facts['training.gradAccum']?.value, 8);
    assert.equal(f.facts['training.precision']?.value, 'bf16-mixed');
    assert.equal(f.facts['training.recompute']?.value, 'full');
    assert.equal(f.facts['cluster.worldSize']?.value, 4);
    assert.equal(f.facts['model.tiedEmbeddings'], undefined); // no Megatron defaults for an HF model
  });
});
