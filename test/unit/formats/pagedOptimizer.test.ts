/**
 * bitsandbytes' paged optimizers keep their states in CUDA unified memory, paged out to CPU memory when the GPU runs
 * short (bitsandbytes docs "Paged optimizers"; Dettmers et al. 2023, QLoRA §2): the estimate counts the states on the
 * GPU, so a warning at the optimizer's name says the peak is over-stated. Read through a reader (torchtune's
 * `optimizer._component_`) and through a key table (axolotl `optimizer:`); a plain optimizer gets no such warning.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';

const paged = (uri: string, text: string) => parseConfig(uri, text).diagnostics.filter((d) => /paged \(CUDA unified\) memory/.test(d.message));

describe('paged optimizers', () => {
  before(async () => { await initFormats(); });

  test('torchtune bitsandbytes.optim.PagedAdamW8bit: 8-bit Adam, and a warning at the class path', () => {
    const text = 'model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\nbatch_size: 2\noptimizer:\n  _component_: bitsandbytes.optim.PagedAdamW8bit\n  lr: 2e-5\n';
    const f = parseConfig('file:///ws/8B_full_single_device.yaml', text);
    assert.equal(f.facts['training.optimizer']?.value, 'adam-8bit');
    const d = paged('file:///ws/8B_full_single_device.yaml', text);
    assert.equal(d.length, 1);
    assert.equal(d[0].severity, 'warning');
    assert.equal(d[0].range?.start.line, 4);
  });

  test('axolotl optimizer: paged_adamw_8bit through the key table; adamw_torch says nothing', () => {
    const text = 'base_model: NousResearch/Llama-2-7b-hf\nadapter: qlora\nload_in_4bit: true\nsequence_len: 4096\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\noptimizer: paged_adamw_8bit\n';
    const d = paged('file:///ws/qlora.yml', text);
    assert.equal(d.length, 1);
    assert.equal(d[0].range?.start.line, 6);
    assert.deepEqual(paged('file:///ws/qlora.yml', text.replace('paged_adamw_8bit', 'adamw_torch')), []);
  });
});
