/**
 * The LitGPT key table (formats/litgpt/keys.json) documents what the reader does (formats/lightning/reader.ts,
 * litgpt.ts): a key with a plan input sets that input when a config writes it, placed at the key; a key documented as
 * not read places no fact at itself. Hovers and completion rely on this table.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { keyTable } from '../../../formats/keyTables';
import { assertDocumented } from '../../support/keyTables';

/** A value LitGPT accepts for each kind of key (config_hub/finetune/*.yaml), by key where the kind is not enough. */
const SAMPLE: Readonly<Record<string, string>> = {
  checkpoint_dir: 'checkpoints/meta-llama/Meta-Llama-3.1-8B', model_name: 'pythia-160m', precision: 'bf16-true',
  quantize: 'bnb.nf4', optimizer: 'AdamW', lora_dropout: '0.1',
};
const BY_TYPE: Readonly<Record<string, string>> = { integer: '2', number: '0.5', boolean: 'true', string: 'x', object: '{}' };

/** A LoRA config writing `key` (nested under train:/eval: where dotted), and the key's line. */
function configWith(key: string, value: string): { text: string; line: number } {
  const base = ['lora_r: 8', 'train:', '  micro_batch_size: 2'];
  if (key === 'lora_r' || key === 'train.micro_batch_size') return { text: `${base.join('\n')}\n`, line: key === 'lora_r' ? 0 : 2 };
  const [head, tail] = key.split('.');
  if (!tail) return { text: `${[...base, `${key}: ${value}`].join('\n')}\n`, line: base.length };
  if (head === 'train') return { text: `${[...base, `  ${tail}: ${value}`].join('\n')}\n`, line: base.length };
  return { text: `${[...base, `${head}:`, `  ${tail}: ${value}`].join('\n')}\n`, line: base.length + 1 };
}

describe('LitGPT key table', () => {
  before(async () => { await initFormats(); });
  const keys = () => Object.entries(keyTable('litgpt')!.keys);

  test('every key documented, with a type', () => { assertDocumented('litgpt', BY_TYPE, 30); });

  test('a key with a plan input sets it, at the key; a key without one places nothing at itself', () => {
    for (const [key, d] of keys()) {
      const { text, line } = configWith(key, SAMPLE[key] ?? BY_TYPE[d.type!]!);
      const facts = parseConfig('file:///ws/lora.yaml', text, 'litgpt').facts;
      if (d.plan) {
        const f = facts[d.plan];
        assert.ok(f, `${key}: sets ${d.plan}`);
        assert.equal((f.keyRange ?? f.source.range)?.start.line, line, `${key}: ${d.plan} is placed at the key`);
      } else {
        const here = Object.entries(facts).filter(([, f]) => (f.keyRange ?? f.source.range)?.start.line === line).map(([p]) => p);
        assert.deepEqual(here, [], `${key} is documented as not read`);
      }
    }
  });
});
