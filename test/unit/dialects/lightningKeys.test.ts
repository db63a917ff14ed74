/**
 * The Lightning CLI key table (formats/lightning/keys.json) documents what the reader does (formats/lightning/reader.ts):
 * a key with a plan input sets that input when a config writes it, placed at the key; a key documented as not read
 * places no fact at itself.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { keyTable } from '../../../formats/keyTables';
import { assertDocumented } from '../../support/keyTables';

/** A value Lightning accepts for each kind of key, by key where the kind is not enough. */
const SAMPLE: Readonly<Record<string, string>> = {
  'trainer.precision': 'bf16-mixed', 'trainer.strategy': 'ddp', 'trainer.strategy.init_args.sharding_strategy': 'SHARD_GRAD_OP',
};
const BY_TYPE: Readonly<Record<string, string>> = { integer: '2', number: '0.5', boolean: 'true', string: 'x' };

/** YAML of dotted keys in order (nested maps by indentation), and the line of `key`. */
function yamlOf(entries: readonly (readonly [string, string])[], key: string): { text: string; line: number } {
  const lines: string[] = [];
  const open: string[] = [];
  let line = -1;
  for (const [k, v] of entries) {
    const parts = k.split('.');
    let depth = 0;
    while (depth < open.length && depth < parts.length - 1 && open[depth] === parts[depth]) depth++;
    open.length = depth;
    for (let i = depth; i < parts.length - 1; i++) { lines.push(`${'  '.repeat(i)}${parts[i]}:`); open.push(parts[i]); }
    if (k === key) line = lines.length;
    lines.push(`${'  '.repeat(parts.length - 1)}${parts[parts.length - 1]}: ${v}`);
  }
  return { text: `${lines.join('\n')}\n`, line };
}

/** A Lightning CLI config writing `key`: a model and a trainer, an FSDP strategy for its init_args. */
function configWith(key: string, value: string): { text: string; line: number } {
  const entries: [string, string][] = [['model.class_path', 'my.Module'], ['trainer.max_time', '00:01:00:00']];
  if (key.startsWith('trainer.strategy.init_args')) entries.push(['trainer.strategy.class_path', 'lightning.pytorch.strategies.FSDPStrategy']);
  entries.push([key, value]);
  return yamlOf(entries, key);
}

describe('Lightning CLI key table', () => {
  before(async () => { await initFormats(); });

  test('every key documented, with a type', () => { assertDocumented('lightning', BY_TYPE, 12); });

  test('a key with a plan input sets it, at the key; a key without one places nothing at itself', () => {
    for (const [key, d] of Object.entries(keyTable('lightning')!.keys)) {
      const { text, line } = configWith(key, SAMPLE[key] ?? BY_TYPE[d.type!]!);
      const facts = parseConfig('file:///ws/config.yaml', text, 'lightning').facts;
      if (d.plan) {
        const f = facts[d.plan];
        assert.ok(f, `${key}: sets ${d.plan}\n${text}`);
        assert.equal((f.keyRange ?? f.source.range)?.start.line, line, `${key}: ${d.plan} is placed at the key\n${text}`);
      } else {
        const here = Object.entries(facts).filter(([, f]) => (f.keyRange ?? f.source.range)?.start.line === line).map(([p]) => p);
        assert.deepEqual(here, [], `${key} is documented as not read`);
      }
    }
  });
});
