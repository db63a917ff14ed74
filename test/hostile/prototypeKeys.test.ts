/**
 * Keys named like Object.prototype members ("constructor", "toString", "hasOwnProperty", "__proto__") in a config
 * file are ordinary unknown keys: no lookup table answers them with an inherited member.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../formats/index';

before(async () => { await initFormats(); });

test('DeepSpeed keys named after prototype members are reported as unknown, not taken as known keys', () => {
  const facts = parseConfig('/w/ds_config.json', '{"constructor": {"x": 1}, "toString": 2, "hasOwnProperty": "auto", "__proto__": {"stage": 3}, "train_micro_batch_size_per_gpu": 2}', 'deepspeed');
  const unknown = facts.diagnostics.filter((d) => d.code === 'ds-unknown-key').map((d) => /"([^"]+)"/.exec(d.message)?.[1]);
  // DeepSpeed's own config (deepspeed/runtime/config.py) knows none of these keys: each is an ignored top-level key
  // ("__proto__" starts with "_", which the reader treats as a comment key, so it is skipped silently).
  assert.deepEqual(unknown.sort(), ['constructor', 'hasOwnProperty', 'toString']);
  assert.equal(facts.facts['training.microBatch']?.value, 2);
  assert.equal(facts.diagnostics.some((d) => d.code === 'ds-auto-unresolved'), false, '"auto" of an unknown key is not judged');
});
