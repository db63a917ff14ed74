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
import { MTP_MODELLED, mtpModelledText } from './modelArgs';
import { YAML_FLAG_RENAME } from './fieldFlags';
import { own } from '../../shared/lookup';
import { editDistance } from '../../shared/editDistance';
import { precisionOf } from '../common/maps';
import { findPreset } from '../../shared/model/presets';

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
  const out: FlagArg[] = [];
  for (const [key, v] of Object.entries(r.values)) {
    const dot = key.indexOf('.');
    if (dot < 0 || key.startsWith('peft.')) continue;
    const field = key.slice(dot + 1);
    const flag0 = `--${field.replace(/_/g, '-')}`;
    const flag = own(YAML_FLAG_RENAME, flag0) ?? flag0;
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
export function applyBridgeRecipe(
  s: FactSink, r: BridgeRecipe, o: { at?: Loc; assumedBecause?: string; model?: boolean; precision?: boolean; overridden?: ReadonlySet<string> } = {},
): Set<string> {
  const flags = recipeFlags(r);
  const read = new FactSink(s.format, s.uri);
  applyMegatronArgs(read, flags, { modelDefaults: false, defaults: false });
  // Assumed values repeat one short prefix (the list shows each), stated ones name the recipe in full.
  const from = (what: string) => o.assumedBecause
    ? `${o.assumedBecause} (${r.file}:${r.line}): ${what}`
    : `the Megatron-Bridge recipe ${r.name} sets ${what} (${recipeWhere(r)})`;
  // A launch that names the recipe states it (derived); a file whose name only points to one rests on that (assumed).
  // Only the model is placed at the recipe's name (a hover there shows the model); the other values are the recipe's
  // lines, not the launch's text, and their sources say which.
  const put = (path: PlanPath, value: FactValue, detail: string) => {
    if (s.has(path)) return;
    if (o.assumedBecause) s.assumed(path, value, detail);
    else s.derived(path, value, detail, path === 'model.preset' ? o.at : undefined);
  };
  for (const [path, f] of Object.entries(read.facts)) put(path as PlanPath, f.value as FactValue, from(`${f.key ?? path} (${path.split('.').pop()} ${String(f.value)})`));
  if (r.hf && o.model !== false) put('model.preset', r.hf, from(`the model, ${r.hf}`));
  const mp = r.values.mixed_precision;
  const precision = typeof mp === 'string' && o.precision !== false ? bridgePrecision(mp) : undefined;
  if (precision) put('training.precision', precision, from(`mixed_precision ${String(mp)}`));
  const peft = r.values.peft;
  if ((peft === 'lora' || peft === 'dora') && !s.has('lora.enabled')) {
    put('lora.enabled', true, from(`peft ${peft}`));
    if (peft === 'dora') put('lora.dora', true, from('peft dora'));
    const dim = r.values['peft.dim'];
    if (typeof dim === 'number') put('lora.rank', dim, from(`the LoRA dim ${dim}`));
  }
  // Multi-token prediction modules the recipe builds (glm45.py, deepseek_v3.py: mtp_num_layers 1) and the launch keeps.
  const mtp = r.values['model.mtp_num_layers'];
  if (typeof mtp === 'number' && Number.isInteger(mtp) && mtp > 0 && !o.overridden?.has('--mtp-num-layers')) {
    s.diag(MTP_MODELLED, 'info', `The recipe ${r.name} sets mtp_num_layers ${mtp} (${recipeWhere(r)}): ${mtpModelledText(mtp)}`, o.at?.valueRange ?? o.at?.keyRange, ['model.mtpLayers']);
  } else if (mtp === undefined && r.hf && o.model !== false && !o.overridden?.has('--mtp-num-layers')) {
    // A recipe that leaves mtp_num_layers gets AutoBridge's: the config.json's num_nextn_predict_layers or
    // mtp_num_hidden_layers (megatron/bridge/models/conversion/model_bridge.py CONFIG_MAPPING; glm45_bridge.py alike).
    const n = findPreset(r.hf)?.mtpLayersInConfig;
    if (n && !s.has('model.mtpLayers')) {
      const detail = `AutoBridge builds ${r.hf} with its config.json's ${n} multi-token-prediction layer${n === 1 ? '' : 's'} as mtp_num_layers (Megatron-Bridge model_bridge.py CONFIG_MAPPING); the recipe ${r.name} does not set it (${recipeWhere(r)})`;
      put('model.mtpLayers', n, o.assumedBecause ? from(detail) : detail);
      s.diag(MTP_MODELLED, 'info', `${detail}: ${mtpModelledText(n)}`, o.at?.valueRange ?? o.at?.keyRange, ['model.mtpLayers']);
    }
  }
  return new Set([...flags.map((f) => f.flag), ...(precision ? ['--mixed-precision'] : [])]);
}

/**
 * The recipe an override file's name points to: the words before `_override` with `_config` (the example scripts
 * load it: examples/models/qwen/qwen3_next/finetune_qwen3_next_80b_a3b.py runs qwen3_next_80b_a3b_sft_config with
 * conf/qwen3_next_80b_a3b_finetune_override_example.yaml), "finetune" read as Bridge's "sft".
 */
export function recipeOfFileName(file: string): BridgeRecipe | undefined {
  const m = /^([a-z0-9_]+?)_override/i.exec(file.replace(/\.ya?ml$/i, '').toLowerCase());
  if (!m?.[1]) return undefined;
  return findBridgeRecipe(`${m[1]}_config`) ?? findBridgeRecipe(`${m[1].replace(/_finetune$/, '_sft')}_config`);
}

/**
 * How Megatron-Bridge's `mixed_precision` names read (training/mixed_precision.py): an FP8 recipe (bf16_with_fp8_…_mixed,
 * …mxfp8…) is FP8; otherwise the base before `_with_` in the shared precision words (bf16_mixed, fp16_mixed).
 */
export function bridgePrecision(name: string): string | undefined {
  const n = name.trim().toLowerCase();
  return /fp8/.test(n) ? 'fp8-mixed' : precisionOf(n.split('_with_')[0]);
}
