/**
 * What a 4-bit LoRA base adds beyond its weights (shared/memory/quantizedTransients.ts, docs/engine-memory.md
 * #qlora-transients), from the sources, each checked against first-principles bytes:
 * - bitsandbytes autograd/_functions.py MatMul4Bit: `F.dequantize_4bit(B, quant_state).to(A.dtype)` — a whole weight in
 *   the dtype it was quantized from (Lightning: fp16, lightning/fabric/plugins/precision/bitsandbytes.py
 *   `_Linear4bit.quantize`), plus its bf16 cast;
 * - MatMul4Bit (0.42.0 to 0.43.1) and MatMul8bitLt keep the input as `ctx.tensors`, which the backward does not free;
 *   LitGPT's `logits = model(input_ids)` keeps the previous micro-batch's logits, and their graph, through the next forward;
 * - bitsandbytes optim/optimizer.py get_state_buffer: a paged optimizer's tensors under 1e5 elements get ordinary
 *   `torch.zeros_like` states, fp32 for a 32-bit optimizer (Optimizer2State.init_state);
 * - LitGPT's GPT keeps an lm_head of its own (convert_hf_checkpoint copies a tied checkpoint's embedding into it), and
 *   Lightning's BitsandbytesPrecision quantizes every nn.Linear built in its init context, the head included.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { stageNumbers } from '../../../shared/memory/fast';
import { loraLayerParams, loraUnpagedParams } from '../../../shared/model/params';
import { dequantizedWeightBytes, heldInputBytesPerToken, largestBlockLinear } from '../../../shared/memory/quantizedTransients';
import type { LoraSpec } from '../../../shared/plan/types';
import { planOfText, preset } from './helpers';

const litgpt = (name: string) => readFileSync(`data/calibration/checks/litgpt2409/${name}.yaml`, 'utf8');

describe('QLoRA transients: the terms', () => {
  test('a dequantized weight: 2 bytes (fp16) per weight, 2 more for a bf16 cast', () => {
    // Llama 2 7B's gate projection, 11,008 × 4,096.
    const n = 11008 * 4096;
    assert.equal(dequantizedWeightBytes(n, 2, true), 4 * n);
    assert.equal(dequantizedWeightBytes(n, 2, false), 2 * n);
  });

  test('the largest linear of a block: the MLP\'s h·f, or a fused q/k/v projection where that is wider', () => {
    // Llama 3 8B: fused q/k/v 4,096 × (4,096 + 2·1,024) = 25.2 M < gate 4,096 × 14,336 = 58.7 M.
    assert.equal(largestBlockLinear({ h: 4096, q: 4096, kv: 1024, f: 14336 }, true), 4096 * 14336);
    // A narrow MLP (f = h): the fused projection's h·(q + 2kv) wins; unfused, q's h·q ties with the MLP.
    assert.equal(largestBlockLinear({ h: 1024, q: 1024, kv: 1024, f: 1024 }, true), 1024 * 3072);
    assert.equal(largestBlockLinear({ h: 1024, q: 1024, kv: 1024, f: 1024 }, false), 1024 * 1024);
  });

  test('held inputs per token: the two norm outputs, the attention output and the MLP product', () => {
    // Llama 2 7B in bf16: 2·(2·4,096 + 4,096 + 11,008) bytes.
    assert.equal(heldInputBytesPerToken({ h: 4096, q: 4096, kv: 4096, f: 11008 }, 2), 2 * (3 * 4096 + 11008));
  });
});

describe('paged optimizer states of small adapters stay on the GPU', () => {
  const llama2 = preset('llama-2-7b');
  test('rank 8 on every projection of Llama 2 7B: every adapter tensor is under 1e5 elements', () => {
    // Fused q/k/v (LitGPT): A 8·3·4,096 = 98,304 and B 3·4,096·8 = 98,304; o 2 × 32,768; gate and up: A 32,768,
    // B 11,008·8 = 88,064; down: A 88,064, B 32,768. All under 1e5: the whole layer's adapters.
    const lora: LoraSpec = { rank: 8, targets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'], baseDtype: 'nf4', fusedQkv: true };
    assert.equal(loraUnpagedParams(llama2, lora), 98304 * 2 + 32768 * 2 + 2 * (32768 + 88064) + 88064 + 32768);
    assert.equal(loraUnpagedParams(llama2, lora), loraLayerParams(llama2, lora));
  });
  test('rank 16: the MLP\'s 11,008-wide factors (176,128) and the fused q/k/v pair (196,608) are paged', () => {
    // Left on the GPU: o's A and B (65,536 each), gate's and up's A (65,536 each), down's B (65,536).
    const lora: LoraSpec = { rank: 16, targets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'], baseDtype: 'nf4', fusedQkv: true };
    assert.equal(loraUnpagedParams(llama2, lora), 5 * 65536);
    // Unfused (PEFT), q, k and v each have A and B of 65,536: six more.
    assert.equal(loraUnpagedParams(llama2, { ...lora, fusedQkv: false }), 11 * 65536);
  });
});

describe('LitGPT QLoRA (config hub, 00af8b0d) as read', () => {
  test('Llama 2 7B qlora.yaml: head quantized, dequantized copies cast to bf16, the previous logits and graph held', async () => {
    const plan = await planOfText('llama-2-7b_qlora.yaml', litgpt('llama-2-7b_qlora'), '1xa10g');
    assert.equal(plan.lora?.headQuantized, true);
    assert.equal(plan.lora?.dequantCast, true);
    assert.equal(plan.training.previousOutputHeld, true);
    // The bench passes bitsandbytes 0.42.0 (LitGPT's pin): with it the inputs are held.
    const x = stageNumbers({ ...plan, lora: { ...plan.lora!, baseSavesInputs: true } }, 0)!.momentInputs;
    const tokens = 2 * 512, h = 4096, V = 32000;
    // The head's dequantized weight: V·h in fp16 and again in bf16.
    assert.equal(x.dequantHead, 4 * V * h);
    // Held: 32 layers' inputs, the head's input (the head is a bitsandbytes linear too) and the previous bf16 logits.
    assert.equal(x.previousHeld, 32 * tokens * 2 * (3 * h + 11008) + tokens * h * 2 + tokens * V * 2);
    // Without the held inputs (bitsandbytes ≥ 0.43.2) only the previous logits remain.
    const now = stageNumbers(plan, 0)!.momentInputs;
    assert.equal(now.previousHeld, tokens * V * 2);
  });

  test('the paged AdamW keeps the fp32 states of rank-32 q/v adapters under 1e5 elements on the GPU', async () => {
    // lora_r 32, query and value (fused, n = 2): A 32·2·4,096 = 262,144 and B 2·4,096·32 = 262,144 elements: both
    // paged, nothing on the GPU. Tiny Llama's rank 32 on every projection (h 2,048, kv 256, f 5,632): fused A
    // 32·3·2,048 = 196,608 and B (2,048 + 2·256)·32 = 81,920 (kept); o 65,536 twice (kept); gate, up: A 65,536 (kept),
    // B 180,224 (paged); down: A 180,224 (paged), B 65,536 (kept): 81,920 + 5·65,536 = 409,600 per layer, 22 layers,
    // 8 bytes each (two fp32 states).
    const llama = await planOfText('llama-2-7b_qlora.yaml', litgpt('llama-2-7b_qlora'), '1xa10g');
    assert.equal(stageNumbers(llama, 0)!.optimizerStates, 0);
    const tiny = await planOfText('tiny-llama_qlora.yaml', litgpt('tiny-llama_qlora'), '1xa10g');
    assert.equal(stageNumbers(tiny, 0)!.optimizerStates, 22 * 409600 * 8);
  });

  test('Gemma 2B: LitGPT\'s own lm_head (256,000 × 2,048) is untied and quantized with the layers', async () => {
    const q = await planOfText('gemma-2b_qlora.yaml', litgpt('gemma-2b_qlora'), '1xa10g');
    assert.equal(q.model.tiedEmbeddings, false);
    assert.equal(q.sources?.['model.tiedEmbeddings']?.kind, 'derived');
    const lora = await planOfText('gemma-2b_lora.yaml', litgpt('gemma-2b_lora'), '1xa10g');
    // LoRA: the head in bf16 beside the embedding; QLoRA: the head in NF4 with the layers.
    const head = 256000 * 2048;
    const p = stageNumbers(lora, 0)!.parameters, tied = stageNumbers({ ...lora, model: { ...lora.model, tiedEmbeddings: true } }, 0)!.parameters;
    assert.equal(p - tied, 2 * head);
    const pq = stageNumbers(q, 0)!.parameters, tq = stageNumbers({ ...q, model: { ...q.model, tiedEmbeddings: true } }, 0)!.parameters;
    // NF4: half a byte per weight plus the block constants (shared/memory/quantizedBase.ts), under 0.6 bytes.
    assert.ok(pq - tq > 0.5 * head && pq - tq < 0.6 * head, `${pq - tq} for ${head} weights`);
  });

  test('16-true: the weights are quantized from fp16 and computed in fp16, no cast', async () => {
    const plan = await planOfText('tiny-llama_qlora.yaml', litgpt('tiny-llama_qlora').replace('precision: bf16-true', 'precision: 16-true'), '1xa10g');
    assert.equal(plan.lora?.dequantCast, undefined);
    assert.equal(stageNumbers(plan, 0)!.momentInputs.dequantHead, 2 * 32000 * 2048);
  });
});
