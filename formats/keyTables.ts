/** The format key tables (formats/<name>/keys.json: keys, types, defaults, docs, plan paths), for completion, hover and edits. */
import accelerate from './accelerate/keys.json';
import axolotl from './axolotl/keys.json';
import deepspeed from './deepspeed/keys.json';
import llamafactory from './llamafactory/keys.json';
import megatron from './megatron/keys.json';
import nanotron from './nanotron/keys.json';
import torchtitan from './torchtitan/keys.json';
import type { FormatId } from '../shared/plan/facts';

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
  return { keys: keys && typeof keys === 'object' ? keys : {} };
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
