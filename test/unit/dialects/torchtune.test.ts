/**
 * torchtune recipe keys (formats/lightning/torchtune.ts). Expected values from torchtune's source at the mirror's
 * HEAD (pytorch/torchtune bd2a0fc7c): the lora_* builders adapt `lora_attn_modules` (q_proj, k_proj, v_proj,
 * output_proj) and, with `apply_lora_to_mlp` (default False), w1, w2, w3 (torchtune/models/llama3_2/_model_builders.py);
 * the recipes raise RuntimeError for optimizer_in_bwd with gradient accumulation or clipping, and for activation
 * offloading without activation checkpointing (recipes/full_finetune_single_device.py __init__).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { countParams } from '../../../shared/model/params';
import { fillContext } from '../../../shared/memory/context';
import { computeStage, newStageNumbers } from '../../../shared/memory/stage';
import { NF4_BYTES } from '../../../shared/memory/dtypes';

const URI = 'file:///ws/3B_lora_single_device.yaml';
const LORA = 'model:\n  _component_: torchtune.models.llama3_2.lora_llama3_2_3b\n  lora_attn_modules: [\'q_proj\', \'v_proj\', \'output_proj\']\n  apply_lora_to_mlp: True\n  lora_rank: 64\n'
  + 'tokenizer:\n  max_seq_len: 2048\nbatch_size: 4\ngradient_accumulation_steps: 1\ndtype: bf16\n';

const read = (text: string) => parseConfig(URI, text);
const FULL_URI = 'file:///ws/3B_full_single_device.yaml';
/** The single stage's numbers of a one-GPU torchtune file (memory states and moment inputs). */
const stageOf = (text: string) => {
  const plan = resolvePlan(parseConfig(FULL_URI, text), [], { settings: { worldSize: 1 } }).plan;
  assert.ok(plan);
  return computeStage(fillContext(plan, undefined, false), 0, 0, plan.model.layers, newStageNumbers());
};
const codes = (text: string) => read(text).diagnostics.map((d) => `${d.severity}:${d.code}`);
const diagAt = (text: string, code: string) => read(text).diagnostics.find((d) => d.code === code);

describe('torchtune recipe keys', () => {
  before(async () => { await initFormats(); });

  test('LoRA targets: lora_attn_modules and apply_lora_to_mlp, counted as torchtune builds them', () => {
    const f = read(LORA);
    assert.equal(f.facts['lora.targets']?.value, 'q,v,o,gate,up,down');
    const plan = resolvePlan(f, [], { settings: { worldSize: 1 } }).plan;
    assert.ok(plan?.lora);
    // Llama 3.2 3B (h 3072, 24 heads × 128, 8 KV heads × 128, FFN 8192, 28 layers), rank 64:
    // q 64·(3072 + 3072) + v 64·(3072 + 1024) + o 64·(3072 + 3072) + 3 × 64·(3072 + 8192) = 3,211,264 per layer.
    assert.equal(countParams(plan.model, plan.lora).lora, 28 * 3_211_264);
  });

  test('without apply_lora_to_mlp (builder default False) only the attention modules are adapted', () => {
    assert.equal(read(LORA.replace('  apply_lora_to_mlp: True\n', '')).facts['lora.targets']?.value, 'q,v,o');
    assert.equal(read(LORA.replace('apply_lora_to_mlp: True', 'apply_lora_to_mlp: False')).facts['lora.targets']?.value, 'q,v,o');
  });

  test('apply_lora_to_output is said to be left out, at its key', () => {
    const text = LORA.replace('  lora_rank: 64\n', '  apply_lora_to_output: True\n  lora_rank: 64\n');
    const d = diagAt(text, 'unmodelled-value');
    assert.ok(d && /output projection/.test(d.message));
    assert.equal(d.range?.start.line, 4);
  });

  test('compile is read; a chunked loss runs chunk by chunk, compiled or eager', () => {
    const chunked = `${LORA}loss:\n  _component_: torchtune.modules.loss.LinearCrossEntropyLoss\n`;
    const on = read(`${chunked}compile: True\n`);
    assert.equal(on.facts['training.compile']?.value, true);
    assert.equal(on.facts['training.lossFusion']?.value, 'chunked');
    const off = read(`${chunked}compile: False\n`);
    assert.equal(off.facts['training.compile']?.value, false);
    assert.equal(off.facts['training.lossFusion']?.value, 'chunked-eager');
    assert.deepEqual(codes(`${chunked}compile: False\n`), []);
    // A plain loss says nothing.
    assert.deepEqual(codes(`${LORA}loss:\n  _component_: torch.nn.CrossEntropyLoss\ncompile: True\n`).filter((c) => c.includes('unmodelled')), []);
  });

  test('optimizer_in_bwd: stated in the plan; with accumulation or clipping, torchtune\'s start-up error at the key', () => {
    const text = `${LORA}optimizer_in_bwd: True\nclip_grad_norm: null\n`;
    assert.equal(read(text).facts['training.optimizerInBackward']?.value, true);
    assert.deepEqual(codes(text), []);
    const accum = diagAt(text.replace('gradient_accumulation_steps: 1', 'gradient_accumulation_steps: 8'), 'torchtune-optimizer-in-bwd');
    assert.ok(accum && accum.severity === 'error' && /Gradient accumulation is not supported/.test(accum.message));
    assert.equal(accum.range?.start.line, 8, 'at gradient_accumulation_steps');
    const clip = diagAt(text.replace('clip_grad_norm: null', 'clip_grad_norm: 1.0'), 'torchtune-optimizer-in-bwd');
    assert.ok(clip && /Gradient clipping is not supported/.test(clip.message));
    assert.equal(read(text.replace('optimizer_in_bwd: True', 'optimizer_in_bwd: False')).facts['training.optimizerInBackward']?.value, false);
  });

  test('optimizer_in_bwd frees each gradient once applied: the stage holds one weight\'s gradient, the largest', () => {
    // Full fine-tune of Llama 3.2 3B on one GPU: every gradient is bf16 (2 bytes), and the largest weight is the tied
    // embedding, 128,256 × 3,072; without the hook all 3.21 B parameters' gradients exist at the end of the backward.
    const full = 'model:\n  _component_: torchtune.models.llama3_2.llama3_2_3b\ntokenizer:\n  max_seq_len: 2048\nbatch_size: 1\ngradient_accumulation_steps: 1\ndtype: bf16\n';
    const hooked = stageOf(`${full}optimizer_in_bwd: True\n`);
    const plain = stageOf(full);
    assert.equal(hooked.gradients, 2 * 128_256 * 3_072);
    assert.equal(plain.gradients, 2 * countParams(resolvePlan(parseConfig(FULL_URI, full), [], { settings: { worldSize: 1 } }).plan!.model).parameters);
  });

  test('QLoRA quantizes the blocks\' linear weights only: the tied embedding and the final norm stay bf16', () => {
    // torchtune qlora_llama3_2_3b: FrozenNF4Linear in the blocks, nn.Embedding and TiedLinear kept (torchtune/models/
    // llama3_2/_component_builders.py); NF4 is 0.5 byte per weight plus its double-quantized scales (Dettmers et al.
    // 2023 §2), the adapters bf16.
    const text = LORA.replace('lora_llama3_2_3b', 'qlora_llama3_2_3b');
    const plan = resolvePlan(parseConfig(FULL_URI, text), [], { settings: { worldSize: 1 } }).plan;
    assert.ok(plan?.lora);
    const p = countParams(plan.model, plan.lora);
    const blocks = p.parameters - p.lora - p.embedding - p.finalNorm - p.lmHead;
    const want = blocks * NF4_BYTES + (p.embedding + p.finalNorm + p.lmHead) * 2 + p.lora * 2;
    assert.ok(Math.abs(stageOf(text).parameters - want) <= 1e-9 * want, `${stageOf(text).parameters} vs ${want}`);
  });

  test('an eager torchtune layer saves what torchtune\'s code saves: its RMSNorms\' fp32 inputs and unscaled outputs too', () => {
    // Measured on torchtune's own Llama 3.2 3B decoder layer (commit 1814feb17, llama3_2 component builder with one
    // layer, eager bf16, b = 2, s = 4000), run on fake tensors with the GPU's FlashAttention op (probe/oracle/attention.py
    // use_gpu_sdpa) under saved_tensors_hooks, counting storages with a token axis: 1,114,944,000 bytes per layer.
    // Compiled, Inductor fuses the norms: the layer saves what torchtitan's compiled block saves.
    const eager = 'model:\n  _component_: torchtune.models.llama3_2.llama3_2_3b\ntokenizer:\n  max_seq_len: 4000\nbatch_size: 2\ngradient_accumulation_steps: 1\ndtype: bf16\nenable_activation_checkpointing: False\n';
    assert.equal(stageOf(eager).momentInputs.layerActivations, 28 * 1_114_944_000);
    const compiled = stageOf(`${eager}compile: True\n`).momentInputs.layerActivations;
    // The compiled block: the norms' 16-bit inputs (2·B·T·h), no fp32 copies, silu's output recomputed (3 of 4 MLP tensors).
    const T = 2 * 4000, h = 3072, f = 8192;
    const removed = 2 * (4 + 2) * T * h - 2 * 2 * T * h + 2 * T * f;
    assert.equal(compiled, 28 * (1_114_944_000 - removed));
  });

  test('a *_single_device config trains without FSDP; the distributed recipes\' configs keep FSDP2', () => {
    // recipes/full_finetune_single_device.py and lora_finetune_single_device.py build the model on one device; the
    // distributed recipes wrap it with fully_shard (recipes/full_finetune_distributed.py).
    const single = read(LORA);
    assert.equal(single.facts['parallel.sharding.style']?.value, 'ddp');
    assert.equal(single.facts['parallel.sharding.stage']?.value, 0);
    assert.equal(single.facts['cluster.worldSize']?.value, 1);
    const dist = parseConfig('file:///ws/3B_lora.yaml', LORA);
    assert.equal(dist.facts['parallel.sharding.style']?.value, 'fsdp2');
    assert.equal(dist.facts['cluster.worldSize'], undefined);
    // Either way torchtune's own plain-PyTorch decoder: counted as torchtitan's graph, not transformers'.
    assert.equal(single.facts['training.modelImpl']?.value, 'torchtitan');
    assert.equal(dist.facts['training.modelImpl']?.value, 'torchtitan');
    // A stated shard dimension is FSDP even in a file of that name.
    assert.equal(read(`${LORA}data_parallel_shard_dim: -1\n`).facts['parallel.sharding.style']?.value, 'fsdp2');
  });

  test('enable_activation_offloading: stated in the plan with an info that the copies are not timed; without activation checkpointing, torchtune\'s start-up error at that key', () => {
    const text = `${LORA}enable_activation_checkpointing: True\nenable_activation_offloading: True\n`;
    assert.equal(read(text).facts['training.activationOffload']?.value, true);
    assert.deepEqual(codes(text), ['info:unmodelled-value']);
    const bad = text.replace('enable_activation_checkpointing: True', 'enable_activation_checkpointing: False');
    const d = diagAt(bad, 'torchtune-activation-offloading');
    assert.ok(d && d.severity === 'error');
    assert.equal(d.range?.start.line, 10, 'at enable_activation_checkpointing');
  });

  test('activation offloading keeps the forward stash of five checkpointed layer inputs on the GPU, not all 28', () => {
    // Llama 3.2 3B, full checkpointing: each layer keeps its input, b·s·h·2 bytes = 2 · 4096 · 3072 · 2; torchtune's
    // OffloadActivations (max_fwd_stash_size 5) keeps the last five of the 28 on the GPU.
    const full = 'model:\n  _component_: torchtune.models.llama3_2.llama3_2_3b\ntokenizer:\n  max_seq_len: 4096\nbatch_size: 2\ngradient_accumulation_steps: 1\ndtype: bf16\nenable_activation_checkpointing: True\n';
    const kept = (text: string) => stageOf(text).momentInputs.layerActivations;
    const input = 2 * 4096 * 3072 * 2;
    assert.equal(kept(full), 28 * input);
    assert.equal(kept(`${full}enable_activation_offloading: True\n`), 5 * input);
  });

  test('enable_fp8_training: a warning at the key that the run is timed and sized as bf16; the precision stays the dtype', () => {
    // full_finetune_distributed.py converts the linears with torchao float8 on a bf16 model (no fp32 master copy).
    const text = `${LORA}enable_fp8_training: True\n`;
    const d = diagAt(text, 'unmodelled-value');
    assert.equal(d?.severity, 'warning');
    assert.match(d?.message ?? '', /^enable_fp8_training: .*bf16 rates/);
    assert.equal(d?.range.start.line, text.split('\n').findIndex((l) => l.startsWith('enable_fp8_training')));
    assert.equal(read(text).facts['training.precision']?.value, 'bf16');
    assert.equal(diagAt(`${LORA}enable_fp8_training: False\n`, 'unmodelled-value'), undefined);
  });
});
