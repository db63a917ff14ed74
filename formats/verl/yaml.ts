/**
 * verl trainer YAML (verl/trainer/config/ppo_trainer.yaml, ppo_megatron_trainer.yaml, sft_trainer.yaml and recipes
 * built on them): the config tree, with the component configs its Hydra `defaults:` list names merged in
 * (formats/common/defaults.ts), read with the same key table as the `key.path=value` overrides of a launch line.
 */
import { found, type Found } from '../common/keyTable';
import type { FactSink } from '../common/sink';
import { baseName } from '../common/text';
import type { KNode } from '../common/tree';
import { applyHydra } from './hydra';
import { moduleListText } from '../megatron/recomputeModules';

/** Every scalar of the tree by its dotted path (what an override of that path would set). */
function flatten(node: KNode, prefix: string, out: Map<string, Found>, depth = 0): Map<string, Found> {
  if (depth > 32 || node.kind !== 'map') return out;
  for (const e of node.entries ?? []) {
    const key = prefix ? `${prefix}.${e.key}` : e.key;
    if (e.value.kind === 'map') flatten(e.value, key, out, depth + 1);
    else if (e.value.kind === 'list' && e.key === 'recompute_modules') {
      // Megatron's module list, read as an override writes it ([a,b]).
      out.set(key, { value: moduleListText(e.value), keyRange: e.keyRange, valueRange: e.value.range });
    } else { const f = found(e); if (f) out.set(key, f); }
  }
  return out;
}

/** verl YAML: the actor's layout, batch and sequence, as the overrides of a launch line are read. */
export function readVerlYaml(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  const name = baseName(s.uri).replace(/\.ya?ml$/i, '');
  applyHydra(s, flatten(root, '', new Map()), name, name);
  s.derived('launch.dialect', 'verl', `verl trainer config ${baseName(s.uri)}`);
}
