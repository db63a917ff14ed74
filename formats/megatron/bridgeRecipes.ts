/**
 * Megatron-Bridge's recipes as ShardLens reads them: data/megatron-bridge/recipes.json, extracted from the recipe
 * functions' sources (scripts/extract-bridge-recipes.py: each recipe's base, the literal values it sets for the layout,
 * batch, sequence, recomputation, distributed optimizer, precision and PEFT, and the Hugging Face model it converts).
 * A `run_recipe.py --recipe NAME` launch then takes what its overrides leave unset from the recipe, each value's
 * source naming the recipe's file and line, instead of assuming Megatron's defaults.
 */
import table from '../../data/megatron-bridge/recipes.json';
import type { FactValue } from '../../shared/plan/facts';
import type { PlanPath } from '../../shared/plan/paths';
import { FactSink, type Loc } from '../common/sink';
import { applyMegatronArgs, type FlagArg } from './args';
import { YAML_FLAG_RENAME } from './yaml';
import { editDistance } from '../../shared/editDistance';

/** One recipe of the table. */
export interface BridgeRecipe {
  readonly name: string;
  /** File under src/megatron/bridge/recipes and the line of its `def`. */
  readonly file: string;
  readonly line: number;
  /** The Hugging Face model it converts (AutoBridge.from_hf_pretrained), when it names one. */
  readonly hf?: string;
  /** Its base (`_pretrain_common`, `_sft_common`, `_peft_common`, …). */
  readonly base: string | null;
  /** Literal field values, `section.field` (model., train., dataset., ddp.), `mixed_precision`, `peft`, `peft.dim`. */
  readonly values: Readonly<Record<string, unknown>>;
}

const RECIPES = table.recipes as unknown as Readonly<Record<string, Omit<BridgeRecipe, 'name'>>>;
const ALIASES = table.aliases as Readonly<Record<string, string>>;
/** The Megatron-Bridge commit the table was read at (short). */
export const RECIPES_COMMIT = table.source.commit.slice(0, 9);

/** A recipe by its name or a legacy alias (`llama31_8b_pretrain_config`), a dotted module path's last part too. */
export function findBridgeRecipe(written: string): BridgeRecipe | undefined {
  if (written.length > 300) return undefined;
  const name = written.trim().replace(/^["']|["']$/g, '').split('.').pop() ?? '';
  const own = Object.hasOwn(RECIPES, name) ? name : Object.hasOwn(ALIASES, name) ? ALIASES[name] : undefined;
  return own && Object.hasOwn(RECIPES, own) ? { name: own, ...RECIPES[own] } : undefined;
}

/**
 * Recipe names of the table close to one it lacks (an older or newer Bridge's name: qwen3_600m_sft_128k_config →
 * qwen3_600m_sft_yarn_128k_config): the same model words, then the fewest edits; at most three.
 */
export function nearRecipes(written: string): string[] {
  const name = written.trim().split('.').pop() ?? '';
  if (name.length > 120) return [];
  const model = /^([a-z0-9]+_[a-z0-9]+)/.exec(name)?.[1];
  if (!model) return [];
  const names = [...Object.keys(ALIASES), ...Object.keys(RECIPES)].filter((n) => n.startsWith(`${model}_`));
  return names.map((n) => [n, editDistance(n, name)] as const).sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0])).slice(0, 3).map(([n]) => n);
}

/** Where a recipe is written, for sources and messages. */
export function recipeWhere(r: BridgeRecipe): string {
  return `megatron/bridge/recipes/${r.file}:${r.line}, Megatron-Bridge ${RECIPES_COMMIT}`;
}

/** The recipe's field values as the Megatron flags of the same names (as Bridge override YAML reads them). */
function recipeFlags(r: BridgeRecipe): FlagArg[] {
  const rename = new Map(Object.entries(YAML_FLAG_RENAME).map(([from, to]) => [from, to]));
  const out: FlagArg[] = [];
  for (const [key, v] of Object.entries(r.values)) {
    const dot = key.indexOf('.');
    if (dot < 0 || key.startsWith('peft.')) continue;
    const field = key.slice(dot + 1);
    const flag0 = `--${field.replace(/_/g, '-')}`;
    const flag = rename.get(flag0) ?? flag0;
    if (typeof v === 'boolean') out.push(v ? { flag } : { flag, value: 'false' });
    else if (Array.isArray(v)) out.push({ flag, value: v.length ? v.map(String).join(' ') : '[]' });
    else if (typeof v === 'number' || typeof v === 'string') out.push({ flag, value: String(v) });
  }
  return out;
}

/**
 * Applies a recipe under a launch's overrides: every fact the recipe's values give that the overrides did not set,
 * as derived from the recipe (its file and line); its model when the launch names none; PEFT (LoRA or DoRA, with its
 * rank) when it trains adapters. Returns the flags the recipe set, which the launch's assumptions then skip.
 */
export function applyBridgeRecipe(s: FactSink, r: BridgeRecipe, at: Loc): Set<string> {
  const flags = recipeFlags(r);
  const read = new FactSink(s.format, s.uri);
  applyMegatronArgs(read, flags, { modelDefaults: false, defaults: false });
  const from = (what: string) => `the Megatron-Bridge recipe ${r.name} sets ${what} (${recipeWhere(r)})`;
  for (const [path, f] of Object.entries(read.facts)) {
    if (s.has(path as PlanPath)) continue;
    s.derived(path as PlanPath, f.value as FactValue, from(f.key ?? path), at);
  }
  if (r.hf && !s.has('model.preset')) s.derived('model.preset', r.hf, from(`the model, ${r.hf}`), at);
  const peft = r.values.peft;
  if ((peft === 'lora' || peft === 'dora') && !s.has('lora.enabled')) {
    s.derived('lora.enabled', true, from(`peft ${peft}`), at);
    if (peft === 'dora') s.derived('lora.dora', true, from('peft dora'), at);
    const dim = r.values['peft.dim'];
    if (typeof dim === 'number' && !s.has('lora.rank')) s.derived('lora.rank', dim, from(`the LoRA dim ${dim}`), at);
  }
  return new Set(flags.map((f) => f.flag));
}

/** The recipe's `mixed_precision` name, when it sets one. */
export function recipeMixedPrecision(r: BridgeRecipe): string | undefined {
  const v = r.values.mixed_precision;
  return typeof v === 'string' ? v : undefined;
}
