/**
 * Key tables per format (data/formats/*.json) for completion, hover text and the bundled DeepSpeed schema.
 * Keys are dotted paths; Megatron flags are keyed by the flag itself.
 */
import accelerate from '../../data/formats/accelerate.json';
import axolotl from '../../data/formats/axolotl.json';
import deepspeed from '../../data/formats/deepspeed.json';
import llamafactory from '../../data/formats/llamafactory.json';
import megatron from '../../data/formats/megatron.json';
import nanotron from '../../data/formats/nanotron.json';
import torchtitan from '../../data/formats/torchtitan.json';
import type { FormatId } from '../../shared/plan/facts';
import { lookupTable } from '../../shared/lookup';

export interface KeySpec {
  readonly type: string;
  readonly default?: unknown;
  readonly description: string;
  /** Plan path the key sets, when it drives an estimate. */
  readonly plan?: string;
  readonly enum?: readonly (string | number)[];
  readonly aliases?: readonly string[];
  /** Who fills DeepSpeed "auto" for this key. */
  readonly auto?: string;
  /** Replacement of a deprecated key. */
  readonly deprecated?: string;
}

const TABLES: Partial<Record<FormatId, Readonly<Record<string, KeySpec>>>> = {
  deepspeed: lookupTable(deepspeed.keys as Record<string, KeySpec>),
  'megatron-script': lookupTable(megatron.keys as Record<string, KeySpec>),
  'megatron-yaml': lookupTable(megatron.keys as Record<string, KeySpec>),
  accelerate: lookupTable(accelerate.keys as Record<string, KeySpec>),
  axolotl: lookupTable(axolotl.keys as Record<string, KeySpec>),
  llamafactory: lookupTable(llamafactory.keys as Record<string, KeySpec>),
  torchtitan: lookupTable(torchtitan.keys as Record<string, KeySpec>),
  nanotron: lookupTable(nanotron.keys as Record<string, KeySpec>),
};

/** The key table of a format (empty for formats without one). */
export function keyTable(format: FormatId): Readonly<Record<string, KeySpec>> {
  return TABLES[format] ?? {};
}

/** Keys directly below `section` ("" = top level) with their specs, for completion. */
export function keysBelow(format: FormatId, section: string): [string, KeySpec][] {
  const prefix = section ? section + '.' : '';
  return Object.entries(keyTable(format)).filter(([k]) => k.startsWith(prefix) && !k.slice(prefix.length).includes('.')).map(([k, v]) => [k.slice(prefix.length), v]);
}
