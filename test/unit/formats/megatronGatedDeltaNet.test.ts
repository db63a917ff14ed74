/**
 * Megatron-LM's Gated DeltaNet flags (Qwen3-Next, Qwen3.5): `--experimental-attention-variant gated_delta_net`,
 * `--linear-attention-freq` (TransformerConfig: an integer N makes layer i linear unless (i + 1) % N == 0; a list marks
 * linear layers with 1), the `--linear-*` widths with TransformerConfig's defaults (16 key and 32 value heads of 128, a
 * 4-tap convolution), `--attention-output-gate` and `--moe-shared-expert-gate`. Expected total: Qwen3-Next-80B-A3B as
 * transformers 5.24 builds it (Qwen3NextForCausalLM on the meta device, 79,674,391,296), which the flags below describe
 * (vocabulary 151,936 is a multiple of 128, so Megatron pads nothing at TP 1).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { countParams } from '../../../shared/model/params';
import { modelFromFacts } from '../../../shared/plan/resolveModel';

const QWEN3_NEXT = (gdn: string) => `#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --num-layers 48 --hidden-size 2048 --ffn-hidden-size 5120 --num-attention-heads 16 --group-query-attention --num-query-groups 2 \\
    --kv-channels 256 --qk-layernorm --attention-output-gate ${gdn} \\
    --num-experts 512 --moe-ffn-hidden-size 512 --moe-shared-expert-intermediate-size 512 --moe-shared-expert-gate --moe-router-topk 10 \\
    --swiglu --normalization RMSNorm --disable-bias-linear --untie-embeddings-and-output-weights --position-embedding-type rope \\
    --vocab-size 151936 --seq-length 4096 --micro-batch-size 1 --global-batch-size 64 --bf16
`;

describe('Megatron Gated DeltaNet flags', () => {
  before(async () => { await initFormats(); });

  test('--linear-attention-freq 4 with the default widths: the published model, and the warning at the variant', () => {
    const text = QWEN3_NEXT('--experimental-attention-variant gated_delta_net --linear-attention-freq 4');
    const g = parseConfig('/ws/qwen3_next.sh', text);
    const m = modelFromFacts(g.facts, {})!;
    assert.deepEqual(m.linearAttention, { layers: 36, keyHeads: 16, valueHeads: 32, keyHeadDim: 128, valueHeadDim: 128, convKernel: 4 });
    assert.equal(g.facts['model.linearAttention.valueHeads']?.source.kind, 'default');
    assert.equal(countParams(m).parameters, 79_674_391_296);
    const w = g.diagnostics.find((d) => d.code === 'hf-config-unmodelled-layers');
    assert.match(w?.message ?? '', /gated_delta_net: the Gated DeltaNet linear-attention layers \(36 of 48\)/);
    // Their saves and the code around the kernel are Megatron-LM's own (gatedDeltaNetSaves.ts, kernels/gatedDeltaNet.ts).
    assert.match(w?.message ?? '', /their own saved activations and step time \(Megatron-LM with flash-linear-attention 0\.5\.1\).*not measured/);
    assert.equal(w?.range.start.character, text.split('\n')[3].indexOf('--experimental-attention-variant') + '--experimental-attention-variant '.length);
  });

  test('a list pattern counts its 1s; explicit widths win over the defaults', () => {
    const g = parseConfig('/ws/q.sh', QWEN3_NEXT("--experimental-attention-variant gated_delta_net --linear-attention-freq '([1]*3+[0])*12' --linear-num-value-heads 64"));
    const m = modelFromFacts(g.facts, {})!;
    assert.equal(m.linearAttention?.layers, 36);
    assert.equal(m.linearAttention?.valueHeads, 64);
  });

  test('bad input: a pattern of the wrong length, an unreadable frequency, a variant without a frequency, another variant', () => {
    const short = parseConfig('/ws/q.sh', QWEN3_NEXT("--experimental-attention-variant gated_delta_net --linear-attention-freq '[1,1,1,0]*11'"));
    assert.match(short.diagnostics.find((d) => d.code === 'megatron-linear-attention-pattern')?.message ?? '', /lists 44 layers, --num-layers is 48/);
    const bad = parseConfig('/ws/q.sh', QWEN3_NEXT('--experimental-attention-variant gated_delta_net --linear-attention-freq every4'));
    assert.match(bad.diagnostics.find((d) => d.code === 'invalid-value')?.message ?? '', /--linear-attention-freq expects a whole number/);
    assert.equal(modelFromFacts(bad.facts, {})?.linearAttention, undefined);
    const none = parseConfig('/ws/q.sh', QWEN3_NEXT('--experimental-attention-variant gated_delta_net'));
    assert.match(none.diagnostics.find((d) => d.code === 'megatron-linear-attention-pattern')?.message ?? '', /without --linear-attention-freq/);
    const dsa = parseConfig('/ws/q.sh', QWEN3_NEXT('--experimental-attention-variant dsa --linear-num-key-heads 8'));
    assert.match(dsa.diagnostics.find((d) => d.code === 'unmodelled-value')?.message ?? '', /dsa is an attention variant ShardLens does not model/);
    assert.equal(modelFromFacts(dsa.facts, {})?.linearAttention, undefined);
    assert.equal(dsa.facts['model.linearAttention.keyHeads'], undefined);
  });
});

describe('Megatron-Bridge YAML: TransformerConfig fields', () => {
  before(async () => { await initFormats(); });

  test('num_query_groups groups the KV heads by itself (TransformerConfig has no group_query_attention field)', () => {
    // Megatron-Bridge's Llama 3 providers set num_query_groups = 8 and nothing else (src/megatron/bridge/models/llama).
    const yaml = 'model:\n  num_layers: 32\n  hidden_size: 4096\n  ffn_hidden_size: 14336\n  num_attention_heads: 32\n  num_query_groups: 8\n  seq_length: 8192\ntrain:\n  micro_batch_size: 1\n  global_batch_size: 128\n';
    const g = parseConfig('/ws/llama3_8b_pretrain_override_example.yaml', yaml, 'megatron-yaml');
    assert.equal(g.format, 'megatron-yaml');
    assert.equal(g.facts['model.kvHeads']?.value, 8);
    assert.ok(!g.diagnostics.some((d) => d.code === 'megatron-groups-without-gqa'));
  });

  test('the Gated DeltaNet fields of a Qwen3-Next override read as the flags do', () => {
    const yaml = 'model:\n  num_layers: 48\n  hidden_size: 2048\n  ffn_hidden_size: 5120\n  num_attention_heads: 16\n  num_query_groups: 2\n  kv_channels: 256\n'
      + '  qk_layernorm: true\n  attention_output_gate: true\n  experimental_attention_variant: gated_delta_net\n  linear_attention_freq: 4\n'
      + '  num_moe_experts: 512\n  moe_ffn_hidden_size: 512\n  moe_shared_expert_intermediate_size: 512\n  moe_shared_expert_gate: true\n  moe_router_topk: 10\n'
      + '  gated_linear_unit: true\n  normalization: RMSNorm\n  add_bias_linear: false\n  share_embeddings_and_output_weights: false\n  vocab_size: 151936\n  seq_length: 4096\n'
      + 'train:\n  micro_batch_size: 1\n  global_batch_size: 64\n';
    const g = parseConfig('/ws/qwen3_next_80b_a3b_finetune_override_example.yaml', yaml, 'megatron-yaml');
    assert.equal(countParams(modelFromFacts(g.facts, {})!).parameters, 79_674_391_296);
  });
});

describe('Megatron Mamba hybrids', () => {
  before(async () => { await initFormats(); });

  test('--hybrid-override-pattern: a warning at the pattern that the figures are not this model\'s, with its sublayers counted', () => {
    // A 52-sublayer pattern in Nemotron-H's style (M Mamba, * attention, - MLP; counted by hand: 24, 4, 24).
    const pattern = 'M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-';
    const text = `torchrun pretrain_mamba.py --num-layers 52 --hidden-size 4096 --num-attention-heads 32 --hybrid-override-pattern ${pattern} --seq-length 8192 --micro-batch-size 1 --bf16\n`;
    const g = parseConfig('/ws/train_nemotron_h.sh', text);
    const d = g.diagnostics.find((x) => x.code === 'megatron-hybrid-unmodelled');
    assert.equal(d?.severity, 'warning');
    assert.match(d!.message, /52 sublayers: 24 Mamba, 4 attention, 24 MLP, 0 MoE/);
    assert.equal(d!.range.start.character, text.indexOf(pattern));
    // A ratio of 0 (Megatron's default) is a plain transformer: nothing to say.
    const plain = parseConfig('/ws/t.sh', 'torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 --hybrid-attention-ratio 0.0\n');
    assert.ok(!plain.diagnostics.some((x) => x.code === 'megatron-hybrid-unmodelled'));
  });
});
