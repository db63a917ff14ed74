/**
 * The torchtune key table (formats/torchtune/keys.json) documents what the reader does: every key it gives a plan
 * input sets that input when a recipe writes it, at that key; every key it calls "not read" sets nothing. Hovers,
 * completion and the what-ifs' edits rely on this table.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { keyTable } from '../../../formats/keyTables';
import { assertDocumented } from '../../support/keyTables';
import type { ConfigFacts } from '../../../shared/plan/facts';

/** A value torchtune accepts for each kind of key (recipes/configs/*.yaml), by key where the kind is not enough. */
const SAMPLE: Readonly<Record<string, string>> = {
  'model._component_': 'torchtune.models.llama3_1.lora_llama3_1_8b',
  'model.lora_attn_modules': "['q_proj', 'v_proj']",
  'loss._component_': 'torchtune.modules.loss.LinearCrossEntropyLoss',
  'optimizer._component_': 'torch.optim.AdamW',
  'tensor_parallel_plan._component_': 'torchtune.models.llama3.base_llama_tp_plan',
  dtype: 'bf16',
  data_parallel_shard_dim: '4',
  fp8_recipe_name: 'tensorwise',
  custom_sharded_layers: "['tok_embeddings', 'output']",
};
const BY_TYPE: Readonly<Record<string, string>> = { integer: '2', number: '0.5', boolean: 'True', string: 'x', list: '[]' };

/** A recipe writing `key` (dotted: nested under its section) after a LoRA builder, and its line. */
function recipeWith(key: string, value: string): { text: string; line: number } {
  const lines = ['model:', '  _component_: torchtune.models.llama3_1.lora_llama3_1_8b', 'enable_activation_checkpointing: True'];
  if (key === 'model._component_' || key === 'enable_activation_checkpointing') {
    const line = lines.findIndex((l) => l.includes(key.split('.').pop()!));
    return { text: `${lines.join('\n')}\n`, line };
  }
  const parts = key.split('.');
  if (parts.length === 1) return { text: `${[...lines, `${key}: ${value}`].join('\n')}\n`, line: lines.length };
  if (parts[0] === 'model') return { text: `${[...lines.slice(0, 2), `  ${parts[1]}: ${value}`, ...lines.slice(2)].join('\n')}\n`, line: 2 };
  return { text: `${[...lines, `${parts[0]}:`, `  ${parts.slice(1).join('.')}: ${value}`].join('\n')}\n`, line: lines.length + 1 };
}

const without = (f: ConfigFacts, g: ConfigFacts) => Object.keys(f.facts).filter((p) => !(p in g.facts));

describe('torchtune key table', () => {
  before(async () => { await initFormats(); });
  const keys = () => Object.entries(keyTable('torchtune')!.keys);

  test('every key documented, with a type', () => { assertDocumented('torchtune', BY_TYPE, 30); });

  test('a key with a plan input sets it, at the key; a key without one sets nothing', () => {
    const bare = parseConfig('file:///ws/lora_single_device.yaml', recipeWith('seed', '1').text, 'torchtune');
    for (const [key, d] of keys()) {
      const value = SAMPLE[key] ?? BY_TYPE[d.type!]!;
      const { text, line } = recipeWith(key, value);
      const facts = parseConfig('file:///ws/lora_single_device.yaml', text, 'torchtune');
      if (d.plan) {
        const f = facts.facts[d.plan];
        assert.ok(f, `${key}: sets ${d.plan}`);
        const at = f.keyRange ?? f.source.range;
        assert.equal(at?.start.line, line, `${key}: ${d.plan} is placed at the key`);
      } else {
        assert.deepEqual(without(facts, bare), [], `${key} is documented as not read`);
      }
    }
  });
});
