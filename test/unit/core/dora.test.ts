/**
 * DoRA through PEFT (LoraSpec.dora; peft/tuners/lora/dora.py): the magnitude vectors, what each adapted projection keeps
 * (measured with PEFT in test/probe/doraSaves.test.ts and peftStates.test.ts), and the weight-norm transient of every
 * forward, whose size follows from the source: get_lora_weight multiplies an identity of the input width in the
 * adapters' dtype (fp32 under PEFT's autocast_adapter_dtype) through A and B, and autocast casts it to bf16.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { countParams } from '../../../shared/model/params';
import { stageNumbers } from '../../../shared/memory/fast';
import { doraForwardTransientBytes, loraSavesOf } from '../../../shared/memory/loraSaves';
import type { LoraSpec } from '../../../shared/plan/types';
import { validatePlan } from '../../../shared/plan/validate';
import { llamaPlan, preset } from './helpers';

const ALL: LoraSpec = { rank: 16, targets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'], baseDtype: 'bf16' };

describe('DoRA', () => {
  before(async () => { await initFormats(); });

  test('a magnitude per output of every adapted projection joins the trainable parameters', () => {
    // Llama 3 8B per layer: q 4096 + k 1024 + v 1024 + o 4096 + gate 14336 + up 14336 + down 4096 outputs, 32 layers.
    const outs = 4096 + 1024 + 1024 + 4096 + 14336 + 14336 + 4096;
    const m = preset('llama-3-8b');
    assert.equal(countParams(m, { ...ALL, dora: true }).trainableParameters - countParams(m, ALL).trainableParameters, 32 * outs);
  });

  test('the weight-norm transient of Llama 3 8B\'s widest adapted input: the fp32 identity and its bf16 cast, 6·14,336² bytes', () => {
    const saves = loraSavesOf({ ...ALL, dora: true })!;
    const w = { h: 4096, q: 4096, f: 14336, kv: 1024 };
    // down_proj: i = 14,336, o = 4,096; max(4i² + 2i², 2i² + 3·2·i·o) = 6i².
    assert.equal(doraForwardTransientBytes(saves, w, 2, 4), 6 * 14336 * 14336);
    // q and v only: i = 4,096; max(6i², 2i² + 6·i·4,096) = 8·4,096².
    assert.equal(doraForwardTransientBytes(loraSavesOf({ ...ALL, targets: ['q', 'v'], dora: true })!, w, 2, 4), 8 * 4096 * 4096);
  });

  test('memory: the saves of every layer and the transient of the recomputed one raise the peak; plain LoRA is unchanged', () => {
    const over = { training: { microBatch: 1, seqLen: 4096, precision: 'bf16-mixed' as const, recompute: 'none' as const } };
    const lora = stageNumbers(llamaPlan({ lora: ALL, ...over }), 0)!;
    const dora = stageNumbers(llamaPlan({ lora: { ...ALL, dora: true }, ...over }), 0)!;
    // Without recomputation every layer keeps 2·B·Σout per token: 2·2·43,008 bytes × 4,096 tokens × 32 layers.
    assert.equal(dora.layerActPerMicrobatch - lora.layerActPerMicrobatch, 2 * 2 * 43008 * 4096 * 32);
    assert.ok(dora.reserved - lora.reserved >= 2 * 2 * 43008 * 4096 * 32);
    const full = { training: { ...over.training, recompute: 'full' as const } };
    const rl = stageNumbers(llamaPlan({ lora: ALL, ...full }), 0)!;
    const rd = stageNumbers(llamaPlan({ lora: { ...ALL, dora: true }, ...full }), 0)!;
    assert.equal(rd.working - rl.working, 2 * 2 * 43008 * 4096 + 6 * 14336 * 14336, 'one recomputed layer: its saves and its transient');
  });

  test('the step time times the weight-norm pass (test/unit/time/adapters.test.ts), so no info says it is left out', () => {
    const codes = (lora: LoraSpec) => validatePlan(llamaPlan({ lora })).map((p) => p.code);
    assert.ok(!codes({ ...ALL, dora: true }).includes('dora-timing'));
  });

  test('readers: LLaMA-Factory use_dora, Axolotl peft_use_dora, and --use_dora on a TRL line', () => {
    const dora = (uri: string, text: string, format: Parameters<typeof parseConfig>[2]) => (parseConfig(uri, text, format).facts as Record<string, { value: unknown } | undefined>)['lora.dora']?.value;
    assert.equal(dora('file:///ws/lf.yaml', 'model_name_or_path: meta-llama/Llama-3.1-8B\nstage: sft\nfinetuning_type: lora\nuse_dora: true\n', 'llamafactory'), true);
    assert.equal(dora('file:///ws/a.yml', 'base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nlora_r: 16\npeft_use_dora: true\n', 'axolotl'), true);
    assert.equal(dora('file:///ws/run.sh', '#!/bin/bash\naccelerate launch trl/scripts/sft.py --model_name_or_path meta-llama/Llama-3.1-8B --use_peft --use_dora --per_device_train_batch_size 2\n', 'megatron-script'), true);
  });
});
