/** The format key tables (formats/<name>/keys.json: keys, types, defaults, docs, plan paths), for completion, hover and edits. */
import accelerate from './accelerate/keys.json';
import axolotl from './axolotl/keys.json';
import deepspeed from './deepspeed/keys.json';
import llamafactory from './llamafactory/keys.json';
import megatron from './megatron/keys.json';
import nanotron from './nanotron/keys.json';
import torchtitan from './torchtitan/keys.json';
import dsChat from './deepspeed-chat/keys.json';
import gptNeox from './gpt-neox/keys.json';
import hfTrainer from './hf-trainer/keys.json';
import nemo from './nemo/keys.json';
import openrlhf from './openrlhf/keys.json';
import verl from './verl/keys.json';
import rayActor from './launch/ray-actor.json';
import nemoRl from './nemo-rl/keys.json';
import roll from './roll/keys.json';
import easyr1 from './easyr1/keys.json';
import llmFoundry from './llm-foundry/keys.json';
import { isPlanPath } from '../shared/plan/paths';
import type { FormatId } from '../shared/plan/facts';
import { lookupTable } from '../shared/lookup';
import type { PlanPath } from '../shared/plan/paths';

/** One documented key of a format. */
export interface KeyDoc {
  readonly type?: string;
  readonly default?: unknown;
  readonly auto?: string;
  readonly plan?: PlanPath;
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

/**
 * A launch dialect's table (formats/<dialect>/keys.json) as key docs: a look-alike key that is not read (a rollout
 * engine's TP) documents why; `strip` drops the leading dashes for YAML spellings of flags.
 */
function dialect(raw: unknown, strip = false): KeyTable {
  const keys = (raw as { keys?: Record<string, { type?: string; plan?: string; description?: string; ignore?: string }> }).keys ?? {};
  const out: Record<string, KeyDoc> = {};
  for (const [k, d] of Object.entries(keys)) {
    if (strip && !k.startsWith('--')) continue;
    const plan = d.plan && isPlanPath(d.plan) ? d.plan : undefined;
    out[strip ? k.slice(2) : k] = { type: d.type, ...(plan ? { plan } : {}), description: d.ignore ? `Not read as a training setting: ${d.ignore}` : d.description };
  }
  return { keys: out };
}

/** Megatron flags and the launch dialects a shell script may speak, for hovers and completion in scripts. */
const LAUNCH: KeyTable = {
  keys: [dialect(hfTrainer), dialect(dsChat), dialect(openrlhf), dialect(rayActor), dialect(verl)].reduce<Record<string, KeyDoc>>(
    (all, t) => { for (const [k, d] of Object.entries(t.keys)) all[k] ??= d; return all; }, { ...table(megatron).keys }),
};

const TABLES: Partial<Record<FormatId, KeyTable>> = {
  deepspeed: table(deepspeed),
  accelerate: table(accelerate),
  axolotl: table(axolotl),
  llamafactory: table(llamafactory),
  'megatron-script': LAUNCH,
  nemo: dialect(nemo),
  'gpt-neox': dialect(gptNeox),
  'hf-trainer': dialect(hfTrainer, true),
  nanotron: table(nanotron),
  torchtitan: table(torchtitan),
  'nemo-rl': dialect(nemoRl),
  roll: dialect(roll),
  easyr1: dialect(easyr1),
  'llm-foundry': dialect(llmFoundry),
};

/** The key table of a format, if one is bundled. */
export function keyTable(format: FormatId | null): KeyTable | undefined {
  return format ? TABLES[format] : undefined;
}

/** The dotted key of a format that sets a plan path (first match), e.g. deepspeed + training.microBatch. */
export function keyForPath(format: FormatId | null, path: PlanPath): string | undefined {
  const t = keyTable(format);
  if (!t) return undefined;
  for (const [k, d] of Object.entries(t.keys)) if (d.plan === path && !d.deprecated) return k;
  return undefined;
}
