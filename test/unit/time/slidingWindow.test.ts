/**
 * Sliding-window attention: which layers slide (transformers' configuration classes), the keys a window leaves, which
 * kernels skip the rest, and the attention work the step time then counts. Expected values from first principles and:
 * - Gemma2Config / GptOssConfig: layer_types alternate sliding_attention and full_attention starting with sliding;
 *   Gemma3TextConfig: sliding_window_pattern 6 (layer i global when (i + 1) % 6 = 0); Qwen2Config: layers from
 *   max_window_layers on slide when use_sliding_window is true (transformers configuration_gemma2.py, configuration_gpt_oss.py, configuration_gemma3.py, configuration_qwen2.py).
 * - A causal window of w keys (the query included, FlashAttention-2 `window_size=(w − 1, 0)`): query i sees min(i + 1, w)
 *   keys.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { GroupLink } from '../../../shared/comm/links';
import { findGpu } from '../../../shared/hardware/gpus';
import { modelFromHfConfig } from '../../../shared/model/hfConfig';
import { initFormats, parseConfig } from '../../../formats/index';
import { modelFromFacts } from '../../../shared/plan/resolveModel';
import { findPreset } from '../../../shared/model/presets';
import { makePlan } from '../../../shared/plan/defaults';
import type { EngineId, GpuSpec, ModelSpec, Plan } from '../../../shared/plan/types';
import { chunkedShare, slidingWindowShare, windowSkipsBlocks } from '../../../shared/time/kernels/attention';
import { coreAttentionFlops } from '../../../shared/time/flops';
import { layerCost, type KernelTimers } from '../../../shared/time/layerCost';
import { FITTED_PARAMS } from '../../../shared/time/params';

const H100 = findGpu('h100-sxm') as GpuSpec;

test('keys a causal window leaves: Σ min(i + 1, w) over the causal s²/2', () => {
  // s = 8, w = 4: 1 + 2 + 3 + 4 + 4·4 = 26 keys against 8²/2 = 32.
  assert.equal(slidingWindowShare(8, 4), 26 / 32);
  // A window at least as long as the sequence leaves every causal key.
  assert.equal(slidingWindowShare(4, 8), 1);
  // gpt-oss at 8,192 tokens, window 128: 128·129/2 + 8064·128 = 1,040,448 of 33,554,432.
  assert.equal(slidingWindowShare(8192, 128), 1_040_448 / 33_554_432);
});

const counts: [string, Record<string, unknown>, number, number][] = [
  ['Gemma 2 (every other layer, from the first)', { model_type: 'gemma2', num_hidden_layers: 42, sliding_window: 4096 }, 4096, 21],
  ['Gemma 3 (five of every six)', { model_type: 'gemma3_text', num_hidden_layers: 62, sliding_window: 1024 }, 1024, 62 - 10],
  ['gpt-oss with its class default window', { model_type: 'gpt_oss', num_hidden_layers: 24 }, 128, 12],
  ['layer_types as written', { model_type: 'gpt_oss', num_hidden_layers: 3, sliding_window: 128, layer_types: ['sliding_attention', 'full_attention', 'sliding_attention'] }, 128, 2],
  ['Mistral v0.1 (every layer)', { model_type: 'mistral', num_hidden_layers: 32, sliding_window: 4096, max_position_embeddings: 32768 }, 4096, 32],
  ['Qwen2 with use_sliding_window (layers from max_window_layers on)', { model_type: 'qwen2', num_hidden_layers: 28, sliding_window: 4096, use_sliding_window: true, max_window_layers: 21, max_position_embeddings: 32768 }, 4096, 7],
];
for (const [name, cfg, window, slidingLayers] of counts) {
  test(`sliding layers: ${name}`, () => {
    const m = modelFromHfConfig({ hidden_size: 1024, num_attention_heads: 8, ...cfg }).model;
    assert.deepEqual(m?.slidingWindow, { window, slidingLayers });
  });
}

/**
 * The bundled presets carry the window their config.json states: Mistral-7B-v0.1 `sliding_window: 4096` (Jiang et al.
 * 2023 §2, every layer), Phi-3-mini-4k-instruct `sliding_window: 2047` against `max_position_embeddings: 4096` (every
 * layer), Phi-3-mini-128k-instruct `sliding_window: 262144` against a 131,072-token context (none), Mistral-Nemo
 * `sliding_window: null` (none); the 128k model is its own preset, not an alias of the 4k one.
 */
const presetWindows: [string, { window: number; slidingLayers: number } | undefined][] = [
  ['mistralai/Mistral-7B-v0.1', { window: 4096, slidingLayers: 32 }],
  ['microsoft/Phi-3-mini-4k-instruct', { window: 2047, slidingLayers: 32 }],
  ['microsoft/Phi-3-mini-128k-instruct', undefined],
  ['mistral-nemo-12b', undefined],
];
for (const [name, expected] of presetWindows) {
  test(`preset window: ${name}`, () => {
    const p = findPreset(name);
    assert.ok(p, name);
    assert.deepEqual(p.model.slidingWindow, expected);
  });
}

test('the Phi-3-mini preset\'s window in the model FLOPs at 4,096 tokens: every layer sees 2,047 keys at most', () => {
  const m: ModelSpec = findPreset('phi-3-mini')!.model;
  const x = { tokens: 4096, seqLen: 4096, tp: 1, etp: 1 };
  // Σ min(i + 1, 2047) over 4,096 queries: 2047·2048/2 + (4096 − 2047)·2047 keys of the causal 4096²/2.
  const keys = (2047 * 2048) / 2 + (4096 - 2047) * 2047;
  const ratio = coreAttentionFlops(m, x) / coreAttentionFlops({ ...m, slidingWindow: undefined }, x);
  assert.ok(Math.abs(ratio - keys / (4096 ** 2 / 2)) < 1e-12, `${ratio}`);
});

test('no window: Qwen2 without use_sliding_window, a window as long as the context, sliding_window null', () => {
  for (const cfg of [
    { model_type: 'qwen2', sliding_window: 4096, max_position_embeddings: 32768 },
    { model_type: 'mistral', sliding_window: 32768, max_position_embeddings: 32768 },
    { model_type: 'gemma2', sliding_window: null },
  ]) assert.equal(modelFromHfConfig({ hidden_size: 1024, num_attention_heads: 8, num_hidden_layers: 4, ...cfg }).model?.slidingWindow, undefined, JSON.stringify(cfg));
});

function gptOss(engine: EngineId, flash: 'explicit' | 'default', o: { cp?: number; eager?: boolean } = {}): Plan {
  const p = findPreset('gpt-oss-20b');
  assert.ok(p?.model.slidingWindow);
  return makePlan({
    engine, model: p.model, training: { microBatch: 1, seqLen: 8192, precision: 'bf16-mixed', flashAttention: !o.eager },
    parallel: { dp: 8, cp: o.cp ?? 1 }, cluster: { gpusPerNode: 8, nodes: 1 },
    sources: { 'training.flashAttention': { kind: flash, detail: 'test' } },
  }, H100);
}

test('which kernels skip the blocks outside the window', () => {
  assert.equal(windowSkipsBlocks(gptOss('megatron', 'default')), true, 'Transformer Engine window_size');
  assert.equal(windowSkipsBlocks(gptOss('fsdp2', 'default')), true, 'torchtitan FlexAttention');
  assert.equal(windowSkipsBlocks(gptOss('deepspeed', 'explicit')), true, 'flash_attention_2 asked for in the config');
  assert.equal(windowSkipsBlocks(gptOss('deepspeed', 'default')), false, 'transformers\' default SDPA with the sliding mask');
  assert.equal(windowSkipsBlocks(gptOss('megatron', 'default', { eager: true })), false, 'eager attention');
  assert.equal(windowSkipsBlocks(gptOss('megatron', 'default', { cp: 2 })), false, 'ring attention under CP');
});

test('the step counts the sliding layers\' windowed kernel and the others\' full causal one', () => {
  const calls: [string, number, number][] = [];
  const t: KernelTimers = {
    gemm16: () => 0, gemm8: () => 0, attention: (pass, flops, seq) => { calls.push([pass, flops, seq]); return 1; }, hbm: () => 0,
    impl: 'fa2', fusion: 'eager', fp8: false, params: FITTED_PARAMS,
  };
  const plan = gptOss('megatron', 'default');
  const link = { size: 1 } as GroupLink;
  const c = layerCost(plan, { tokens: 8192, normTokens: 8192, qHeads: 64, kvHeads: 8, ffn: 2880, b: 1, seq: 8192, cp: 1, tp: 1, actBytes: 2 }, t, { tp: link, cp: link, ep: link }, 1);
  // gpt-oss-20b: 64 heads of 64; causal forward 4·T·s·a·d/2.
  const full = (4 * 8192 * 8192 * 64 * 64) / 2;
  const win = full * (1_040_448 / 33_554_432);
  assert.deepEqual(calls, [['fwd', full, 8192], ['fwd', win, 128], ['bwd', 2.5 * full, 8192], ['bwd', 2.5 * win, 128]]);
  // 12 of 24 layers slide: half of each kernel (each timed 1 s here).
  assert.equal(c.fwd.attention, 1);
});

test('the model FLOPs count the window whatever the kernel', () => {
  const m: ModelSpec = findPreset('gemma-3-27b')!.model;
  const x = { tokens: 32768, seqLen: 32768, tp: 1, etp: 1 };
  const full = coreAttentionFlops({ ...m, slidingWindow: undefined }, x);
  // 52 of 62 layers see 1,024-key windows.
  const share = slidingWindowShare(32768, 1024);
  assert.ok(Math.abs(coreAttentionFlops(m, x) / full - (10 / 62 + (52 / 62) * share)) < 1e-12);
});

test('chunked attention (Llama 4): each query sees its own chunk up to itself', async () => {
  // s = 10 in chunks of 4: 1+2+3+4, 1+2+3+4, 1+2 = 23 keys against 10²/2 = 50.
  assert.equal(chunkedShare(10, 4), 23 / 50);
  assert.equal(chunkedShare(4, 8), 1);
  // Llama4TextConfig: every 4th layer global (no_rope_layer_interval 4), the other 36 of 48 chunked at 8,192 tokens.
  const m = findPreset('llama-4-scout')!.model;
  assert.deepEqual(m.slidingWindow, { window: 8192, slidingLayers: 36, chunked: true });
  const x = { tokens: 32768, seqLen: 32768, tp: 1, etp: 1 };
  // At 32,768 tokens four whole chunks: 4·8192·8193/2 keys of 32768²/2.
  const share = (4 * 8192 * 8193) / 2 / (32768 ** 2 / 2);
  assert.ok(Math.abs(coreAttentionFlops(m, x) / coreAttentionFlops({ ...m, slidingWindow: undefined }, x) - (12 / 48 + (36 / 48) * share)) < 1e-12);
  // An explicit no_rope_layers list (1 = rotary, chunked) is counted as written.
  const r = modelFromHfConfig({ model_type: 'llama4_text', hidden_size: 1024, num_hidden_layers: 4, num_attention_heads: 8, attention_chunk_size: 2048, no_rope_layers: [1, 0, 1, 0] });
  assert.deepEqual(r.model?.slidingWindow, { window: 2048, slidingLayers: 2, chunked: true });
  // The class default chunk (8,192) without the key; null turns it off; layer_types as transformers writes them.
  const base = { model_type: 'llama4_text', hidden_size: 1024, num_hidden_layers: 8, num_attention_heads: 8 };
  assert.deepEqual(modelFromHfConfig(base).model?.slidingWindow, { window: 8192, slidingLayers: 6, chunked: true });
  assert.equal(modelFromHfConfig({ ...base, attention_chunk_size: null }).model?.slidingWindow, undefined);
  const typed = modelFromHfConfig({ ...base, num_hidden_layers: 4, layer_types: ['chunked_attention', 'chunked_attention', 'chunked_attention', 'full_attention'] });
  assert.deepEqual(typed.model?.slidingWindow, { window: 8192, slidingLayers: 3, chunked: true });
  assert.ok(!typed.problems.some((p) => p.code === 'hf-config-unmodelled-layers'), 'chunked layers are modelled');
  // The same config.json opened on its own (the hf-config format's facts) reads the same chunks.
  await initFormats();
  assert.deepEqual(modelFromFacts(parseConfig('/ws/config.json', JSON.stringify(base)).facts, {})?.slidingWindow, { window: 8192, slidingLayers: 6, chunked: true });
});
