/**
 * The Hugging Face config.json key table (formats/hf-config/keys.json) documents what the reader does: a key with a
 * plan input sets that input when a config writes it, placed at the key; a key documented as not read sets nothing.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { keyTable } from '../../../formats/keyTables';
import { assertDocumented } from '../../support/keyTables';

/** A value transformers accepts for each kind of key (configuration_*.py). */
const SAMPLE: Readonly<Record<string, unknown>> = {
  architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_act: 'silu', torch_dtype: 'bfloat16',
  rope_scaling: { rope_type: 'llama3', factor: 8 }, eos_token_id: [1, 2],
};
const BY_TYPE: Readonly<Record<string, unknown>> = { integer: 8, number: 0.5, boolean: true, string: 'x', list: [], object: {} };

/** A config.json with `key` first (its line is 1), read as a config.json whatever else it lacks. */
function configWith(key: string, value: unknown): string {
  // Latent-attention keys in DeepSeek-V3's family (which derives the head width from them), the rest in Llama's.
  const family = /lora_rank|_head_dim$/.test(key) && key !== 'head_dim' ? 'deepseek_v3' : 'llama';
  return JSON.stringify(key === 'model_type' ? { [key]: value } : { [key]: value, model_type: family }, null, 2);
}

describe('Hugging Face config.json key table', () => {
  before(async () => { await initFormats(); });
  const keys = () => Object.entries(keyTable('hf-config')!.keys);

  test('every key documented, with a type', () => { assertDocumented('hf-config', BY_TYPE, 40); });

  test('a key with a plan input sets it, at the key; a key without one sets nothing', () => {
    const bareOf = (key: string) => parseConfig('file:///ws/config.json', configWith(key, null), 'hf-config');
    for (const [key, d] of keys()) {
      const text = configWith(key, SAMPLE[key] ?? BY_TYPE[d.type!]);
      const facts = parseConfig('file:///ws/config.json', text, 'hf-config');
      if (d.plan) {
        const f = facts.facts[d.plan];
        assert.ok(f, `${key}: sets ${d.plan}`);
        assert.equal((f.keyRange ?? f.source.range)?.start.line, 1, `${key}: ${d.plan} is placed at the key`);
      } else {
        const bare = bareOf(key);
        const added = Object.keys(facts.facts).filter((p) => !(p in bare.facts) && !/^model\.slidingWindow/.test(p));
        assert.deepEqual(added, [], `${key} is documented as not read`);
      }
    }
  });
});
