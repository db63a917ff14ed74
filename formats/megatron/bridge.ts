/**
 * Megatron-Bridge recipe overrides on a launch line (`python scripts/training/run_recipe.py --recipe … train.micro_batch_size=2
 * model.tensor_model_parallel_size=4 …`): each `section.field=value` of the ConfigContainer sections that hold the
 * layout and batch (model, train, dataset, ddp, dist, optimizer, mixed_precision, comm_overlap) becomes the Megatron flag of the same
 * name, as the Bridge override YAML does (megatron/yaml.ts), and is read by the Megatron flag table.
 */
import type { Found } from '../common/keyTable';
import type { Invocation, SourceMap } from '../common/shell/commandLine';
import { unresolved } from '../common/shell/sval';
import type { FactSink, Loc } from '../common/sink';
import type { FactValue } from '../../shared/plan/facts';
import type { PlanPath } from '../../shared/plan/paths';
import { applyMegatronArgs, type FlagArg } from './args';
import { YAML_FLAG_RENAME } from './fieldFlags';
import { own } from '../../shared/lookup';
import { findPreset, type ModelPreset } from '../../shared/model/presets';
import { peftArgumentDefaults } from '../common/finetune';
import { RECIPES_COMMIT, applyBridgeRecipe, bridgePrecision, findBridgeRecipe, nearRecipes, recipeWhere, type BridgeRecipe } from './bridgeRecipes';

/** ConfigContainer sections whose fields are Megatron arguments under their flag names. */
const SECTIONS = /^(model|train|dataset|ddp|dist|optimizer|mixed_precision|comm_overlap)\./;
/** Sections only Megatron-Bridge has (verl and NeMo 2 spell theirs data./trainer./actor_rollout_ref.). */
const BRIDGE_ONLY = /^(train|dataset|ddp|dist|comm_overlap|validation|checkpoint|logger|scheduler|rng)\./;
const OTHER = /^(actor_rollout_ref|critic|trainer|data|algorithm|reward_model)\./;

/** True when the overrides are Megatron-Bridge's (some Bridge-only section, none of verl's). */
export function isBridgeOverrides(found: ReadonlyMap<string, Found>, program: string): boolean {
  const keys = [...found.keys()];
  if (keys.some((k) => OTHER.test(k))) return false;
  return /run_recipe\.py|megatron[-_]bridge/i.test(program) || keys.some((k) => BRIDGE_ONLY.test(k));
}

/** run_recipe.py's short flags (scripts/training/run_recipe.py) and their Megatron names. */
const SHORT: Readonly<Record<string, string>> = {
  '-tp': '--tensor-model-parallel-size', '-pp': '--pipeline-model-parallel-size', '-cp': '--context-parallel-size',
  '-vp': '--virtual-pipeline-model-parallel-size', '-ep': '--expert-model-parallel-size', '-etp': '--expert-tensor-parallel-size',
  '-gb': '--global-batch-size', '-mb': '--micro-batch-size', '-sl': '--seq-length',
};

/**
 * A Megatron-Bridge launch: the overrides and run_recipe.py's flags (-tp/--tensor_model_parallel_size, -gb, -sl …)
 * as Megatron flags, `--mode lora|dora` as LoRA; what neither sets is the recipe's, left to the resolver's assumptions.
 */
export function applyBridge(s: FactSink, inv: Invocation, found: ReadonlyMap<string, Found>, flags: readonly FlagArg[], map: SourceMap): void {
  const named = flags.filter((a) => a.flag !== '--model');
  // Single-dash short flags (-tp 2) are not `--flag value` pairs; read them with the word after them.
  inv.args.forEach((w, i) => {
    const long = SHORT[w.t];
    const v = inv.args[i + 1];
    if (!long || !v) return;
    const k = map.of(w);
    named.push({ flag: long, value: v.t, flagRange: k.range, valueRange: map.of(v).range, unresolved: unresolved(v), uri: k.uri });
  });
  applyMegatronArgs(s, [...named, ...bridgeArgs(found)], { modelDefaults: false, defaults: false });
  // run_recipe.py --peft_scheme lora|dora (older scripts: --mode).
  const mode = flags.find((a) => a.flag === '--peft_scheme' || a.flag === '--peft-scheme' || a.flag === '--mode');
  if (mode?.value && /^(lora|dora)$/i.test(mode.value) && !mode.unresolved) {
    const loc = { key: mode.flag, keyRange: mode.flagRange, valueRange: mode.valueRange, uri: mode.uri };
    s.explicit('lora.enabled', true, loc);
    if (/^dora$/i.test(mode.value)) s.explicit('lora.dora', true, loc);
    peftArgumentDefaults(s, 'megatron-bridge');
  }
  const recipeArg = flags.find((a) => a.flag === '--recipe' || a.flag === '--model');
  const hfPath = flags.find((a) => a.flag === '--hf_path' || a.flag === '--hf-path');
  const recipe = recipeArg?.value && !recipeArg.unresolved ? findBridgeRecipe(recipeArg.value) : undefined;
  const mp = found.get('mixed_precision');
  const mentioned = new Set([...found.keys()].map((k) => `--${k.slice(k.lastIndexOf('.') + 1).replace(/_/g, '-')}`));
  if (recipe && recipeArg) {
    // What the overrides leave unset comes from ShardLens's table of the recipes (bridgeRecipes.ts), the model too
    // unless --hf_path names another.
    recipeModel(s, undefined, hfPath);
    const at: Loc = { key: recipeArg.flag, keyRange: recipeArg.flagRange, valueRange: recipeArg.valueRange, uri: recipeArg.uri };
    for (const f of applyBridgeRecipe(s, recipe, { at, precision: !mp, overridden: mentioned })) mentioned.add(f);
    if (!s.has('model.preset')) recipeModel(s, recipeArg, undefined);
  } else recipeModel(s, recipeArg, hfPath);
  bridgeRecipeValues(s, inv.program, mentioned, recipeArg?.value, mp ? { value: mp.value, loc: { key: 'mixed_precision', keyRange: mp.keyRange, valueRange: mp.valueRange, uri: mp.uri } } : undefined, recipe);
}


/**
 * What every Megatron-Bridge override says: the dialect, the engine, and that the rest is the recipe's. The values that
 * decide memory most and that a recipe always sets are assumed as the recipes set them, each listed: bf16 mixed
 * precision and the distributed optimizer (recipes/utils/optimizer_utils.py distributed_fused_adam_with_cosine_annealing:
 * precision "bf16-mixed", use_distributed_optimizer=True), and TP, PP and CP of 1 where the recipe may set more.
 * `mentioned` holds the flags the overrides write (set false too), which the recipe then does not decide.
 */
export function bridgeRecipeValues(s: FactSink, where: string, mentioned: ReadonlySet<string>, recipe?: string, mixedPrecision?: { value: unknown; loc: Loc }, known?: BridgeRecipe, byFileName = false): void {
  s.derived('launch.dialect', 'megatron-bridge', `recipe overrides of ${where}`);
  s.derived('engine', 'megatron', 'Megatron-Bridge trains with Megatron-core');
  s.diag('recipe-values', 'info', known && byFileName
    ? `Values these overrides do not set come from the recipe they are run with; the file's name points to the Megatron-Bridge recipe ${known.name} (${recipeWhere(known)}), so its values, as ShardLens's table of the recipes reads them, are assumed and listed.`
    : known
    ? `Values these overrides do not set come from the Megatron-Bridge recipe ${known.name} (${recipeWhere(known)}), as ShardLens's table of the recipes reads it; what the recipe leaves to code ShardLens does not run is assumed and listed.`
    : `Values these overrides do not set come from the Megatron-Bridge recipe${recipe ? ` "${recipe}"` : ''}, which ${recipe ? `is not in ShardLens's table of the recipes (Megatron-Bridge ${RECIPES_COMMIT})${nearNote(recipe)}` : 'ShardLens does not read'}; they are listed as assumptions.`, undefined);
  const precision = typeof mixedPrecision?.value === 'string' ? bridgePrecision(mixedPrecision.value) : undefined;
  if (precision && mixedPrecision && !s.has('training.precision')) s.explicit('training.precision', precision, mixedPrecision.loc);
  const from = `the Megatron-Bridge recipe${recipe ? ` ${recipe}` : ''} sets it`;
  const assume = (path: PlanPath, value: FactValue, field: string, flags: readonly string[]) => {
    if (!flags.some((f) => mentioned.has(f))) s.assumed(path, value, `${from}: assumed ${String(value)} as the recipes set it (write ${field}=… to state it)`);
  };
  assume('training.precision', 'bf16-mixed', 'mixed_precision', ['--bf16', '--fp16', '--fp8-format', '--mixed-precision']);
  assume('parallel.sharding.style', 'megatron-distopt', 'ddp.use_distributed_optimizer', ['--use-distributed-optimizer']);
  if (s.facts['parallel.sharding.style']?.source.kind === 'assumed' && !s.has('parallel.sharding.stage')) {
    s.derived('parallel.sharding.stage', 1, 'the distributed optimizer shards the optimizer states over data parallelism (ZeRO-1)');
  }
  assume('parallel.tp', 1, 'model.tensor_model_parallel_size', ['--tensor-model-parallel-size']);
  assume('parallel.pp', 1, 'model.pipeline_model_parallel_size', ['--pipeline-model-parallel-size']);
  assume('parallel.cp', 1, 'model.context_parallel_size', ['--context-parallel-size']);
}

/** The table's nearest recipe names, as a clause (none: empty). */
function nearNote(recipe: string): string {
  const near = nearRecipes(recipe);
  return near.length ? ` (near it: ${near.join(', ')})` : '';
}

/**
 * Megatron-Bridge recipe families whose names drop a version's dot (megatron/bridge/recipes: llama31_8b_pretrain_config,
 * llama32_1b_…, qwen25_7b_…), name a family's MoE models after it (qwen3_moe_30b_a3b_… in the example overrides) or write a size in millions or with p for its point (qwen3_600m_…, qwen3_1p7b_…); other
 * families are named as their models are (qwen3_30b_a3b_…, gemma3_1b_…, deepseek_v3_…).
 */
const RECIPE_FAMILIES: readonly (readonly [RegExp, string | ((m: string, ...g: string[]) => string)])[] = [
  [/^llama3([123])_/, 'llama-3.$1_'], [/^qwen25_/, 'qwen2.5_'], [/^qwen3_moe_/, 'qwen3_'], [/_(\d)p(\d+)b_/, '_$1.$2b_'],
  [/_(\d+)m_/, (_m, n: string) => `_${Number(n) / 1000}b_`],
];

/**
 * The bundled preset a Megatron-Bridge recipe or override file is named after: the words before its mode
 * (`llama31_8b_pretrain_config` → Llama-3.1-8B, `qwen3_next_80b_a3b_finetune_override_example` → Qwen3-Next-80B-A3B).
 */
export function presetOfRecipe(name: string): ModelPreset | undefined {
  // Recipe and file names are short; a longer word is not one (and is not scanned).
  if (name.length > 200) return undefined;
  const m = /^([a-z0-9_.]+?)_(?:pretrain|finetune|sft|peft|lora|dora|distill|override|config)(?:_|$)/i.exec(name.trim().toLowerCase());
  if (!m?.[1]) return undefined;
  const model = RECIPE_FAMILIES.reduce((n, [re, to]) => n.replace(re, to as string), `${m[1]}_`).replace(/_$/, '');
  // A recipe names a size (8b, 0.6b, 8x7b) or a version (deepseek_v3); a bare family (`mixtral_config`) names no model.
  if (!/(^|_)(\d+x)?\d+(\.\d+)?b(_|$)|_v\d+$/.test(model)) return undefined;
  return findPreset(model);
}

/**
 * The model of a Bridge launch: `--hf_path` (a Hub id or a local checkpoint, run_recipe.py) as written, else the preset
 * the `--recipe` is named after (each recipe builds one model); neither leaves the resolver's assumption.
 */
function recipeModel(s: FactSink, recipe: FlagArg | undefined, hfPath: FlagArg | undefined): void {
  if (hfPath?.value && !hfPath.unresolved) {
    s.explicit('model.preset', hfPath.value, { key: hfPath.flag, keyRange: hfPath.flagRange, valueRange: hfPath.valueRange, uri: hfPath.uri });
    s.ref('model', hfPath.value, hfPath.uri ? undefined : hfPath.valueRange);
    return;
  }
  const p = recipe?.value && !recipe.unresolved ? presetOfRecipe(recipe.value) : undefined;
  if (!p || !recipe) return;
  s.derived('model.preset', p.name, `the Megatron-Bridge recipe ${recipe.value} builds ${p.name} (megatron.bridge.recipes)`, { key: recipe.flag, keyRange: recipe.flagRange, valueRange: recipe.valueRange, uri: recipe.uri });
}

/** The overrides as Megatron flags (`train.micro_batch_size=2` → `--micro-batch-size 2`). */
export function bridgeArgs(found: ReadonlyMap<string, Found>): FlagArg[] {
  const args: FlagArg[] = [];
  for (const [key, f] of found) {
    if (!SECTIONS.test(key)) continue;
    const field = key.slice(key.lastIndexOf('.') + 1);
    // dataset.* holds only the sequence length the model also states; its other fields are not Megatron flags.
    if (key.startsWith('dataset.') && field !== 'seq_length') continue;
    if (key.split('.').length > 2 && !key.startsWith('model.')) continue;
    const value = f.value === undefined || f.value === null ? undefined : String(f.value);
    // TransformerConfig fields whose flags are spelled otherwise (num_moe_experts is --num-experts).
    const flag0 = `--${field.replace(/_/g, '-')}`;
    const flag = own(YAML_FLAG_RENAME, flag0) ?? flag0;
    const base = { flagRange: f.keyRange, valueRange: f.valueRange, unresolved: f.unresolved, uri: f.uri };
    if (value !== undefined && /^(true|false)$/i.test(value)) {
      if (value.toLowerCase() === 'true') args.push({ flag, ...base });
      continue;
    }
    args.push({ flag, value, ...base });
  }
  return args;
}
