/**
 * The LoRA facts what a block saves depends on (shared/memory/loraSaves.ts), as each front end states them: the
 * adapters' dropout (PEFT LoraConfig lora_dropout, 0.0 by default in Axolotl and LLaMA-Factory; torchtune's builders 0.0;
 * LitGPT's lora.py 0.05), LitGPT's fused q/k/v adapters, and bitsandbytes' quantized base linears, which save their
 * inputs (bitsandbytes/autograd/_functions.py MatMul4Bit: ctx.tensors = (A, B)).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import type { FormatId } from '../../../shared/plan/facts';

const facts = (uri: string, text: string, format: FormatId) => parseConfig(uri, text, format).facts as Record<string, { value: unknown } | undefined>;

describe('LoRA dropout, fused q/k/v and bitsandbytes base linears, per front end', () => {
  before(async () => { await initFormats(); });

  test('Axolotl: lora_dropout read, 0 by default; QLoRA through bitsandbytes keeps the base inputs', () => {
    const base = 'base_model: meta-llama/Llama-3.1-8B\nsequence_len: 2048\nmicro_batch_size: 1\nlora_r: 16\n';
    const lora = facts('file:///ws/a.yaml', `${base}adapter: lora\nlora_dropout: 0.05\n`, 'axolotl');
    assert.equal(lora['lora.dropout']?.value, 0.05);
    assert.equal(lora['lora.baseSavesInputs'], undefined);
    const qlora = facts('file:///ws/a.yaml', `${base}adapter: qlora\n`, 'axolotl');
    assert.equal(qlora['lora.dropout']?.value, 0);
    assert.equal(qlora['lora.baseSavesInputs']?.value, true);
  });

  test('LLaMA-Factory: quantization_bit 4 with the default bitsandbytes method keeps the base inputs; hqq does not', () => {
    const base = 'model_name_or_path: meta-llama/Llama-3.1-8B\nstage: sft\nfinetuning_type: lora\nlora_dropout: 0.1\nquantization_bit: 4\n';
    const bnb = facts('file:///ws/lf.yaml', base, 'llamafactory');
    assert.equal(bnb['lora.dropout']?.value, 0.1);
    assert.equal(bnb['lora.baseSavesInputs']?.value, true);
    assert.equal(facts('file:///ws/lf.yaml', `${base}quantization_method: hqq\n`, 'llamafactory')['lora.baseSavesInputs'], undefined);
  });

  test('torchtune: model.lora_dropout, 0 by default; torchao\'s NF4 linear keeps no input', () => {
    const text = 'model:\n  _component_: torchtune.models.llama3_1.qlora_llama3_1_8b\n  lora_attn_modules: [q_proj, v_proj]\n  lora_rank: 8\n';
    const f = facts('file:///ws/8B_qlora_single_device.yaml', text, 'torchtune');
    assert.equal(f['lora.dropout']?.value, 0);
    assert.equal(f['lora.baseSavesInputs'], undefined);
    assert.equal(facts('file:///ws/8B_qlora_single_device.yaml', text.replace('lora_rank: 8', 'lora_rank: 8\n  lora_dropout: 0.05'), 'torchtune')['lora.dropout']?.value, 0.05);
  });

  test('LitGPT: 0.05 by default, fused q/k/v adapters, bitsandbytes with quantize', () => {
    const text = 'checkpoint_dir: checkpoints/meta-llama/Meta-Llama-3.1-8B\ndevices: 1\nlora_r: 8\n';
    const f = facts('file:///ws/lora.yaml', text, 'litgpt');
    assert.equal(f['lora.dropout']?.value, 0.05);
    assert.equal(f['lora.fusedQkv']?.value, true);
    assert.equal(facts('file:///ws/lora.yaml', `${text}quantize: bnb.nf4\n`, 'litgpt')['lora.baseSavesInputs']?.value, true);
  });

  test('TRL / HF Trainer flags: --lora_dropout, and --load_in_4bit through bitsandbytes', () => {
    const text = '#!/bin/bash\naccelerate launch trl/scripts/sft.py --model_name_or_path meta-llama/Llama-3.1-8B --use_peft --lora_r 16 --lora_dropout 0.05 --load_in_4bit --per_device_train_batch_size 2\n';
    const f = facts('file:///ws/sft.sh', text, 'megatron-script');
    assert.equal(f['lora.dropout']?.value, 0.05);
    assert.equal(f['lora.baseSavesInputs']?.value, true);
  });
});
