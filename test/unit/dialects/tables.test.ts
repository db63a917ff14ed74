/**
 * The dialect key tables (formats/<dialect>/keys.json) are data the readers trust: every plan path they name is a
 * PlanPath, every key says what it is (or why a look-alike is not read), and derived keys (sums, products) name keys.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import dsChat from '../../../formats/deepspeed-chat/keys.json';
import gptNeox from '../../../formats/gpt-neox/keys.json';
import hfTrainer from '../../../formats/hf-trainer/keys.json';
import rayActor from '../../../formats/launch/ray-actor.json';
import nemo from '../../../formats/nemo/keys.json';
import openrlhf from '../../../formats/openrlhf/keys.json';
import verl from '../../../formats/verl/keys.json';
import slurm from '../../../formats/slurm/keys.json';
import nemoRl from '../../../formats/nemo-rl/keys.json';
import roll from '../../../formats/roll/keys.json';
import easyr1 from '../../../formats/easyr1/keys.json';
import llmFoundry from '../../../formats/llm-foundry/keys.json';
import lingua from '../../../formats/lingua/keys.json';
import picotron from '../../../formats/picotron/keys.json';
import { keyTable } from '../../../formats/keyTables';
import type { DialectTable } from '../../../formats/common/keyTable';
import { isPlanPath } from '../../../shared/plan/paths';

const TABLES: Record<string, DialectTable> = {
  'deepspeed-chat': dsChat as DialectTable, 'gpt-neox': gptNeox as DialectTable, 'hf-trainer': hfTrainer as DialectTable,
  'ray-actor': rayActor as DialectTable, nemo: nemo as DialectTable, openrlhf: openrlhf as DialectTable, verl: verl as DialectTable,
  'nemo-rl': nemoRl as DialectTable, roll: roll as DialectTable, easyr1: easyr1 as DialectTable, 'llm-foundry': llmFoundry as DialectTable,
  lingua: lingua as DialectTable, picotron: picotron as DialectTable,
};

describe('dialect key tables', () => {
  for (const [name, t] of Object.entries(TABLES)) {
    test(name, () => {
      for (const [key, spec] of Object.entries(t.keys)) {
        assert.ok(spec.description || spec.ignore, `${key} documents itself`);
        if (spec.ignore) continue;
        if (spec.type === 'str' && !spec.plan) continue;
        assert.ok(spec.plan && isPlanPath(spec.plan), `${key}: plan path "${spec.plan}"`);
        for (const p of Object.keys(spec.also ?? {})) assert.ok(isPlanPath(p), `${key}: also ${p}`);
        if (spec.type === 'sum' || spec.type === 'product') assert.ok((spec.of ?? []).length >= 2, `${key} names its parts`);
        // A default stands in only for a part after the first (the first must be written for the value to count as read).
        for (const d of Object.keys(spec.defaults ?? {})) assert.ok((spec.of ?? []).indexOf(d) > 0, `${key}: default for ${d}`);
        if (spec.type === 'map') assert.ok(spec.map && Object.keys(spec.map).length > 0, `${key} maps values`);
      }
      for (const [alias, target] of Object.entries(t.aliases ?? {})) assert.ok(t.keys[target], `alias ${alias} → ${target}`);
    });
  }
});

describe('hovers find the keys as a file writes them', () => {
  test('ROLL: a `W.` row is documented under each trained worker (actor_train, sft_train, critic)', () => {
    const keys = keyTable('roll')!.keys;
    for (const w of ['actor_train', 'sft_train', 'critic']) assert.ok(keys[`${w}.strategy_args.strategy_config.tensor_model_parallel_size`], w);
    assert.equal(keys['W.strategy_args.strategy_config.tensor_model_parallel_size'], undefined);
  });
});

describe('Slurm option table', () => {
  test('every option has its SlurmOptions field, a description, and a PlanPath when it sets one', () => {
    const fields = new Set(['nodes', 'gpusPerNode', 'gpuType', 'tasksPerNode', 'gpusPerTask', 'tasks']);
    for (const [opt, spec] of Object.entries((slurm as { keys: Record<string, { field: string; plan?: string; description: string }> }).keys)) {
      assert.ok(fields.has(spec.field), `${opt}: field ${spec.field}`);
      assert.ok(spec.description.length > 10, `${opt} documents itself`);
      if (spec.plan) assert.ok(isPlanPath(spec.plan), `${opt}: plan ${spec.plan}`);
    }
  });
});
