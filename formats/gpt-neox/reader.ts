/** GPT-NeoX configs (configs/*.yml): YAML with JSON-like braces, read through keys.json. */
import gptNeox from './keys.json';
import { applyTable, found, type DialectTable } from '../common/keyTable';
import type { FactSink } from '../common/sink';
import { at, type KEntry, type KNode } from '../common/tree';

const NEOX = gptNeox as DialectTable;

/** GPT-NeoX configs (DeepSpeed engine; `-` and `_` spellings are the same key). */
export function readGptNeox(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  const byKey = new Map<string, KEntry>();
  for (const e of root.entries ?? []) byKey.set(e.key.replace(/-/g, '_'), e);
  applyTable(s, NEOX, (path) => {
    const [head, ...rest] = path.split('.');
    const e = byKey.get(head!);
    return rest.length ? found(e?.value.kind === 'map' ? at(e.value, rest.join('.')) : undefined) : found(e);
  });
  const pp = s.facts['parallel.pp'];
  if (pp?.value === 0) s.facts['parallel.pp'] = { ...pp, value: 1 };
  s.derived('engine', 'deepspeed', 'GPT-NeoX runs on DeepSpeed');
  if (!s.has('parallel.sharding.style')) s.default('parallel.sharding.style', 'deepspeed', 'GPT-NeoX runs on DeepSpeed');
  s.default('parallel.sharding.stage', 0, 'DeepSpeed default: ZeRO stage 0');
}

