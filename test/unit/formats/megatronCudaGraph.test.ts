/**
 * Megatron-LM's CUDA graph flags (megatron/training/arguments.py; megatron/core/transformer/transformer_config.py
 * `cuda_graph_impl`: none, local, transformer_engine, full_iteration; the deprecated `--enable-cuda-graph` is local,
 * `--external-cuda-graph` transformer_engine, and `--cuda-graph-scope full_iteration` migrates to full_iteration), and
 * Transformer Engine's FP8 attention (`--fp8-dot-product-attention`), which ShardLens does not time and says so.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';

const script = (extra: string) => `#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 8192 \\
    --micro-batch-size 1 --global-batch-size 128 --bf16 ${extra}
`;
const graphOf = (extra: string) => parseConfig('/ws/train.sh', script(extra)).facts['training.cudaGraph']?.value;

describe('Megatron CUDA graphs', () => {
  before(async () => { await initFormats(); });

  test('--cuda-graph-impl is read as written', () => {
    for (const impl of ['none', 'local', 'transformer_engine', 'full_iteration']) assert.equal(graphOf(`--cuda-graph-impl ${impl}`), impl);
    assert.equal(graphOf(''), undefined);
  });

  test('the deprecated flags mean their implementations', () => {
    assert.equal(graphOf('--enable-cuda-graph'), 'local');
    assert.equal(graphOf('--external-cuda-graph'), 'transformer_engine');
    assert.equal(graphOf('--enable-cuda-graph --cuda-graph-scope full_iteration'), 'full_iteration');
    assert.equal(graphOf('--cuda-graph-scope full_iteration'), 'full_iteration');
    // A per-layer scope under an explicit implementation leaves it as it is.
    assert.equal(graphOf('--cuda-graph-impl transformer_engine --cuda-graph-scope attn'), 'transformer_engine');
  });

  test('an unknown implementation is a warning at its value, and nothing is read', () => {
    const text = script('--cuda-graph-impl everything');
    const r = parseConfig('/ws/train.sh', text);
    const d = r.diagnostics.find((x) => x.code === 'invalid-value' && x.message.includes('--cuda-graph-impl'));
    assert.ok(d, JSON.stringify(r.diagnostics));
    const line = text.split('\n').findIndex((l) => l.includes('everything'));
    assert.equal(d.range.start.line, line);
    assert.equal(d.range.start.character, text.split('\n')[line].indexOf('everything'));
    assert.equal(r.facts['training.cudaGraph'], undefined);
  });
});

describe('Megatron FP8 attention (--fp8-dot-product-attention)', () => {
  before(async () => { await initFormats(); });

  test('warned at the flag: attention is timed at 16-bit rates', () => {
    const text = script('--fp8-format e4m3 --fp8-recipe mxfp8 --fp8-dot-product-attention');
    const r = parseConfig('/ws/train.sh', text);
    const d = r.diagnostics.find((x) => x.code === 'megatron-fp8-attention-timing');
    assert.ok(d, JSON.stringify(r.diagnostics));
    assert.equal(d.severity, 'warning');
    assert.match(d.message, /16-bit rates/);
    const line = text.split('\n').findIndex((l) => l.includes('--fp8-dot-product-attention'));
    assert.equal(d.range.start.character, text.split('\n')[line].indexOf('--fp8-dot-product-attention'));
  });

  test('absent or switched off, no warning', () => {
    for (const extra of ['--fp8-format e4m3', '--fp8-dot-product-attention false']) {
      const r = parseConfig('/ws/train.sh', script(extra));
      assert.equal(r.diagnostics.some((x) => x.code === 'megatron-fp8-attention-timing'), false, extra);
    }
  });

  test('the Megatron-Bridge YAML fields are the same flags', () => {
    const yaml = 'model:\n  tensor_model_parallel_size: 2\n  seq_length: 4096\n  cuda_graph_impl: full_iteration\ntrain:\n  micro_batch_size: 1\n  global_batch_size: 64\n  train_iters: 10\nmixed_precision:\n  bf16: true\n  fp8: e4m3\n  fp8_dot_product_attention: true\n';
    const r = parseConfig('/ws/run.yaml', yaml);
    assert.equal(r.format, 'megatron-yaml');
    assert.equal(r.facts['training.cudaGraph']?.value, 'full_iteration');
    const d = r.diagnostics.find((x) => x.code === 'megatron-fp8-attention-timing');
    assert.ok(d, JSON.stringify(r.diagnostics));
    assert.equal(d.range.start.line, 11);
  });
});
