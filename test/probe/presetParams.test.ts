// Every bundled preset's parameter count (shared/model/params.ts countParams of the preset as modelFromHfConfig reads
// it) against the model transformers builds from the same config.json on the meta device
// (probe/oracle/preset_params.py: AutoModelForCausalLM.from_config, nn.Module.parameters). Exact, except the families
// listed in KNOWN, whose gap is what ShardLens does not count yet, each by its amount from the modelling code.
// Skipped with a message when no Python with torch and transformers exists; fails instead when CI=true.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ci, oracleMissing, oraclePython, runOracle } from './fixtures/python';
import { modelFromHfConfig } from '../../shared/model/hfConfig';
import { countParams } from '../../shared/model/params';

const python = oraclePython;
if (!python && !ci) console.log(`# preset parameter counts skipped: ${oracleMissing}`);

type Cfg = { hidden_size: number; num_hidden_layers: number };

/**
 * transformers' count minus ShardLens's, where they differ, from the modelling code (transformers 5.24):
 * Falcon-7B's parallel block has one input_layernorm (weight and bias, 2h), ShardLens counts two LayerNorms.
 */
const KNOWN: Record<string, (c: Cfg) => number> = {
  'falcon-7b': (c) => -2 * c.hidden_size * c.num_hidden_layers,
};
/** Presets transformers 5.24 cannot build: Qwen (1) needs its remote code. */
const NOT_BUILT = new Set(['qwen-7b']);

describe('bundled presets: parameters as transformers builds them (torch, transformers 5.24)', { skip: ci ? false : !python }, () => {
  const files = readdirSync('data/models').filter((f) => f.endsWith('.json')).sort();
  let counts: Record<string, number | { error: string }> | undefined;
  const oracle = () => (counts ??= runOracle<Record<string, number | { error: string }>>(python!, 'preset_params', files.map((f) => resolve('data/models', f))));

  for (const f of files) {
    const id = f.replace(/\.json$/, '');
    if (NOT_BUILT.has(id)) continue;
    test(id, () => {
      if (!python) assert.fail(`CI=true but ${oracleMissing}`);
      const cfg = JSON.parse(readFileSync(`data/models/${f}`, 'utf8')) as Cfg;
      const want = oracle()[resolve('data/models', f)];
      assert.equal(typeof want, 'number', JSON.stringify(want));
      const model = modelFromHfConfig(cfg).model;
      assert.ok(model, `${id} does not read`);
      assert.equal((want as number) - countParams(model).parameters, KNOWN[id]?.(cfg) ?? 0);
    });
  }
});
