/** The format key tables in data/formats (keys, types, defaults, docs, plan paths), for completion, hover and edits. */
import accelerate from '../../data/formats/accelerate.json';
import axolotl from '../../data/formats/axolotl.json';
import deepspeed from '../../data/formats/deepspeed.json';
import llamafactory from '../../data/formats/llamafactory.json';
import megatron from '../../data/formats/megatron.json';
import nanotron from '../../data/formats/nanotron.json';
import torchtitan from '../../data/formats/torchtitan.json';
import type { FormatId } from '../../shared/plan/facts';
import { lookupTable } from '../../shared/lookup';

/** One documented key of a format. */
export interface KeyDoc {
  readonly type?: string;
  readonly default?: unknown;
  readonly auto?: string;
  readonly plan?: string;
  readonly enum?: readonly unknown[];
  readonly aliases?: readonly string[];
  readonly deprecated?: unknown;
  readonly description?: string;
}

export interface KeyTable {
  readonly keys: Readonly<Record<string, KeyDoc>>;
}

function table(raw: unknown): KeyTable {
  const keys = (raw as { keys?: Record<string, KeyDoc> }).keys;
  return { keys: lookupTable(keys && typeof keys === 'object' ? keys : {}) };
}

const TABLES: Partial<Record<FormatId, KeyTable>> = {
  deepspeed: table(deepspeed),
  accelerate: table(accelerate),
  axolotl: table(axolotl),
  llamafactory: table(llamafactory),
  'megatron-script': table(megatron),
  nanotron: table(nanotron),
  torchtitan: table(torchtitan),
};

/** The key table of a format, if one is bundled. */
export function keyTable(format: FormatId | null): KeyTable | undefined {
  return format ? TABLES[format] : undefined;
}

/** The dotted key of a format that sets a plan path (first match), e.g. deepspeed + training.microBatch. */
export function keyForPath(format: FormatId | null, path: string): string | undefined {
  const t = keyTable(format);
  if (!t) return undefined;
  for (const [k, d] of Object.entries(t.keys)) if (d.plan === path && !d.deprecated) return k;
  return undefined;
}
