/**
 * Axolotl's activation offloading (src/axolotl/utils/schemas: activation_offloading true, legacy, disk or
 * hidden_states; gradient_checkpointing offload / offload_disk): true, legacy and disk send the checkpointed layer
 * inputs to CPU memory or disk (TRL's OffloadActivations, with checkpointing applied by ActivationOffloadingMixin;
 * Unsloth's offloaded checkpointer), so the plan states training.activationOffload at the key, and activation_offloading
 * alone implies full recomputation.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';

const BASE = 'base_model: NousResearch/Meta-Llama-3-8B\nsequence_len: 4096\nmicro_batch_size: 2\n';
const facts = (text: string) => parseConfig('file:///ws/lora.yml', text).facts;

describe('axolotl activation offloading', () => {
  before(async () => { await initFormats(); });

  for (const v of ['true', 'legacy', 'disk']) {
    test(`activation_offloading: ${v} offloads and checkpoints`, () => {
      const f = facts(`${BASE}activation_offloading: ${v}\n`);
      assert.equal(f['training.activationOffload']?.value, true);
      assert.equal(f['training.activationOffload']?.source.range?.start.line, 3);
      assert.equal(f['training.recompute']?.value, 'full');
    });
  }

  test('gradient_checkpointing: offload offloads; true alone and activation_offloading false do not', () => {
    assert.equal(facts(`${BASE}gradient_checkpointing: offload\n`)['training.activationOffload']?.value, true);
    assert.equal(facts(`${BASE}gradient_checkpointing: true\n`)['training.activationOffload'], undefined);
    const off = facts(`${BASE}activation_offloading: false\n`);
    assert.equal(off['training.activationOffload'], undefined);
    assert.equal(off['training.recompute']?.value, 'none');
  });

  test('an explicit gradient_checkpointing: false is kept (the file says it)', () => {
    const f = facts(`${BASE}gradient_checkpointing: false\nactivation_offloading: true\n`);
    assert.equal(f['training.recompute']?.value, 'none');
    assert.equal(f['training.activationOffload']?.value, true);
  });
});
