/**
 * Megatron-LM multi-head latent attention, list-valued --moe-layer-freq and sliding windows (--window-size). Expected values from Megatron-LM's
 * megatron/training/arguments.py (d98e8a64): --kv-lora-rank 32, --qk-head-dim 128, --qk-pos-emb-head-dim 64,
 * --v-head-dim 128 and no --q-lora-rank by default; the width flags act only with --multi-latent-attention;
 * --moe-layer-freq takes an int or a Python list expression with 1 marking an MoE layer (`moe_freq_type`). Model
 * total from the DeepSeek-V2 report (arXiv 2405.04434, §Appendix B: DeepSeek-V2-Lite 15.7B) and its config.json
 * (vocab 102,400).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { layerPattern } from '../../../formats/megatron/modelArgs';
import { countParams, isMoeLayer, moeLayersIn } from '../../../shared/model/params';
import { modelFromFacts } from '../../../shared/plan/resolveModel';
import type { PlanPath } from '../../../shared/plan/paths';

// DeepSeek-V2-Lite as Megatron-LM's modelopt example writes it (examples/post_training/modelopt/conf/deepseek-ai/
// DeepSeek-V2-Lite.sh), with the tokenizer's vocabulary given as a flag.
const V2_LITE = `#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --num-layers 27 --hidden-size 2048 --ffn-hidden-size 10944 --num-attention-heads 16 --kv-channels 16 \\
    --multi-latent-attention --kv-lora-rank 512 --v-head-dim 128 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --qk-layernorm \\
    --num-experts 64 --moe-layer-freq '([0]+[1]*26)' --moe-ffn-hidden-size 1408 --moe-router-topk 6 \\
    --moe-shared-expert-intermediate-size 2816 --swiglu --normalization RMSNorm --disable-bias-linear \\
    --untie-embeddings-and-output-weights --position-embedding-type rope --vocab-size 102400 \\
    --seq-length 4096 --micro-batch-size 1 --global-batch-size 8 --bf16
`;

describe('Megatron multi-head latent attention', () => {
  before(async () => { await initFormats(); });

  test('--multi-latent-attention reads its widths, Megatron\'s default for the missing one, and one KV head per query head', () => {
    const f = parseConfig('/ws/v2lite.sh', V2_LITE).facts;
    const v = (p: PlanPath) => f[p]?.value;
    assert.equal(v('model.mla.kvLoraRank'), 512);
    assert.equal(v('model.mla.qkNopeHeadDim'), 128);
    assert.equal(v('model.mla.qkRopeHeadDim'), 64);
    assert.equal(v('model.mla.vHeadDim'), 128);
    // No --q-lora-rank: queries come from the hidden state (DeepSeek-V2-Lite's q_lora_rank null).
    assert.equal(v('model.mla.qLoraRank'), 0);
    assert.equal(f['model.mla.qLoraRank']?.source.kind, 'default');
    // --kv-channels 16 does not size MLA heads: query/key heads are 128 + 64 wide.
    assert.equal(v('model.headDim'), 192);
    assert.equal(v('model.kvHeads'), 16);
    // --qk-layernorm under MLA is the latent norms, not per-head q/k norms.
    assert.equal(v('model.qkNorm'), false);
  });

  test('the script\'s model is DeepSeek-V2-Lite: 15.7B, the first layer dense', () => {
    const f = parseConfig('/ws/v2lite.sh', V2_LITE).facts;
    assert.equal(f['model.moe.denseFirstLayers']?.value, 1);
    const m = modelFromFacts(f, {});
    assert.ok(m?.mla);
    assert.deepEqual(m.mla, { qLoraRank: 0, kvLoraRank: 512, qkNopeHeadDim: 128, qkRopeHeadDim: 64, vHeadDim: 128 });
    const total = countParams(m).parameters;
    assert.ok(Math.abs(total / 15.7e9 - 1) < 0.005, `${total}`);
  });

  test('the model file as ModelOpt writes it (MODEL_ARGS and TOKENIZER_MODEL, no launch line) takes its vocabulary from TOKENIZER_MODEL', () => {
    // Megatron-LM examples/post_training/modelopt/conf/deepseek-ai/DeepSeek-V2-Lite.sh sets TOKENIZER_MODEL and
    // MODEL_ARGS only; finetune.sh and train.sh, which source it, pass --tokenizer-model ${TOKENIZER_MODEL}. The
    // tokenizer's vocabulary is config.json's 102,400, and with it the model is the report's 15.7B.
    const conf = `#!/bin/bash\n\nTOKENIZER_MODEL="deepseek-ai/DeepSeek-V2-Lite"\n\nMODEL_ARGS=" \\\n${V2_LITE.split('\n').slice(2, 7).join('\n').replace(/--vocab-size 102400 /, '').replace(/'/g, '')}\n    --seq-length 1024 --micro-batch-size 1 --tokenizer-type HuggingFaceTokenizer --make-vocab-size-divisible-by 3200 \\\n"\n`;
    const r = parseConfig('/ws/DeepSeek-V2-Lite.sh', conf);
    const vocab = r.facts['model.vocabSize'];
    assert.equal(vocab?.value, 102400, JSON.stringify(r.diagnostics.map((d) => d.message)));
    assert.equal(vocab?.source.kind, 'derived');
    // The fact points at the variable's value, where a hover and a change belong.
    const line = conf.split('\n').findIndex((l) => l.startsWith('TOKENIZER_MODEL='));
    assert.equal(vocab?.source.range?.start.line, line);
    const total = countParams(modelFromFacts(r.facts, {})!).parameters;
    assert.ok(Math.abs(total / 15.7e9 - 1) < 0.005, `${total}`);
    // A file that names its tokenizer with the flag keeps the flag's.
    const flagged = conf.replace('--tokenizer-type HuggingFaceTokenizer', '--tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Llama-3.1-8B');
    assert.equal(parseConfig('/ws/x.sh', flagged).facts['model.vocabSize']?.value, 128256);
  });

  test('a zero width is a warning at the flag and no MLA', () => {
    const r = parseConfig('/ws/x.sh', 'torchrun pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 8 --multi-latent-attention --kv-lora-rank 0\n');
    assert.ok(r.diagnostics.some((d) => d.code === 'invalid-value' && d.paths.includes('model.mla.kvLoraRank')));
    assert.equal(modelFromFacts(r.facts, {})?.mla, undefined);
  });

  test('width flags without --multi-latent-attention are ignored, with a warning at the flag', () => {
    const text = 'torchrun pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 8 --kv-lora-rank 512\n';
    const r = parseConfig('/ws/x.sh', text);
    assert.equal(r.facts['model.mla.kvLoraRank'], undefined);
    const d = r.diagnostics.find((x) => x.code === 'megatron-mla-without-flag');
    assert.ok(d);
    assert.equal(d.range.start.character, text.indexOf('--kv-lora-rank'));
    assert.equal(modelFromFacts(r.facts, {})?.mla, undefined);
  });
});

describe('--moe-layer-freq as a list', () => {
  before(async () => { await initFormats(); });
  const cases: [string, number[] | undefined][] = [
    ['([0]+[1]*3)', [0, 1, 1, 1]],
    ['[0]*2+[1]*2', [0, 0, 1, 1]],
    ['([0]*1+[1]*1)*2', [0, 1, 0, 1]],
    ['[1,0,1]', [1, 0, 1]],
    ['[2]*3', undefined],
    ['[0]*1e9', undefined],
    ['__import__("os")', undefined],
    ['([0]+[1]*3', undefined],
    // A hostile nesting depth is refused, not a stack overflow.
    ['('.repeat(100_000) + '[1]' + ')'.repeat(100_000), undefined],
    ['([1])', [1]],
  ];
  for (const [text, want] of cases) test(`${text.slice(0, 40)}${text.length > 40 ? "…" : ""} → ${JSON.stringify(want)}`, () => assert.deepEqual(layerPattern(text), want));

  const read = (freq: string) => parseConfig('/ws/x.sh', `torchrun pretrain_gpt.py --num-layers 8 --hidden-size 1024 --num-attention-heads 8 --num-experts 8 --moe-layer-freq '${freq}'\n`);
  test('dense layers first: denseFirstLayers', () => {
    const r = read('[0]*3+[1]*5');
    assert.equal(r.facts['model.moe.denseFirstLayers']?.value, 3);
    assert.equal(r.facts['model.moe.layerFrequency']?.value, 1);
  });
  test('one MoE layer closing every period: the frequency', () => {
    assert.equal(read('([0]+[1])*4').facts['model.moe.layerFrequency']?.value, 2);
  });
  test('one MoE layer opening every period: the frequency, first layer MoE', () => {
    const f = read('([1]+[0]*3)*2').facts;
    assert.equal(f['model.moe.layerFrequency']?.value, 4);
    assert.equal(f['model.moe.firstLayerMoe']?.value, true);
  });
  test('an integer N: layers 0, N, 2N, … are MoE (gpt_layer_specs.py i % N == 0): 27 layers at N = 2 hold 14', () => {
    const r = parseConfig('/ws/x.sh', 'torchrun pretrain_gpt.py --num-layers 27 --hidden-size 1024 --num-attention-heads 8 --num-experts 8 --moe-layer-freq 2\n');
    const m = modelFromFacts(r.facts, {});
    assert.equal(m?.moe?.firstLayerMoe, true);
    assert.equal(countParams(m!).moeLayers, 14);
    // Stage of layers [1, 5) holds layers 2 and 4 as MoE.
    assert.equal(moeLayersIn(m!, 1, 5), 2);
    assert.equal(isMoeLayer(m!, 0), true);
    assert.equal(isMoeLayer(m!, 1), false);
  });
  test('a list the model cannot hold is a warning, every layer MoE', () => {
    const r = read('[1,0,0,1,1,0,1,1]');
    assert.equal(r.facts['model.moe.layerFrequency'], undefined);
    assert.ok(r.diagnostics.some((d) => d.code === 'megatron-moe-layer-pattern'));
  });
});

describe('Megatron sliding-window attention', () => {
  before(async () => { await initFormats(); });
  // megatron/core/transformer/utils.py is_layer_window_attention: layer_number (1-based) % N != 0 slides; a list marks
  // sliding layers with 1. gpt-oss in Megatron-Bridge: window (128, 0), every other layer global.
  const read = (extra: string) => parseConfig('/ws/x.sh', `torchrun pretrain_gpt.py --num-layers 24 --hidden-size 2880 --num-attention-heads 64 ${extra}\n`);
  test('--window-size (128,0) with --window-attn-skip-freq 2: 129 keys in 12 of 24 layers', () => {
    const f = read(`--window-size '(128,0)' --window-attn-skip-freq 2`).facts;
    assert.equal(f['model.slidingWindow.window']?.value, 129);
    assert.equal(f['model.slidingWindow.slidingLayers']?.value, 12);
    const m = modelFromFacts(f, {});
    assert.deepEqual(m?.slidingWindow, { window: 129, slidingLayers: 12 });
  });
  test('no skip frequency: every layer slides; a list counts its 1s; -1 is no window', () => {
    assert.equal(read(`--window-size '(4095,0)'`).facts['model.slidingWindow.slidingLayers']?.value, 24);
    assert.equal(read(`--window-size '(4095,0)' --window-attn-skip-freq '([1]*3+[0])*6'`).facts['model.slidingWindow.slidingLayers']?.value, 18);
    assert.equal(read(`--window-size '(-1,0)'`).facts['model.slidingWindow.window'], undefined);
  });
  test('a malformed window is a warning at the value', () => {
    const r = read('--window-size big');
    assert.ok(r.diagnostics.some((d) => d.code === 'invalid-value' && d.message.startsWith('--window-size')));
    assert.equal(r.facts['model.slidingWindow.window'], undefined);
  });
});
