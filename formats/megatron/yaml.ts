/**
 * Megatron YAML: legacy `--yaml-cfg` files (language_model / model_parallel), Megatron-Bridge override YAML
 * (model[_config] / train[_config] / ddp[_config], optionally under ConfigContainer) and functional-test
 * YAML with MODEL_ARGS keyed by flags. Every key is turned into the matching flag and read like a script.
 */
import type { FactSink, Loc } from '../common/sink';
import { applyMegatronArgs, type FlagArg } from './args';
import { YAML_FLAG_RENAME } from './fieldFlags';
import { bridgeRecipeValues, presetOfRecipe } from './bridge';
import { applyBridgeRecipe, recipeOfFileName } from './bridgeRecipes';
import { at, entry, type KEntry, type KNode } from '../common/tree';
import { locOf } from '../common/read';
import { toNumber } from '../common/text';
import { own } from '../../shared/lookup';
import { moduleListText } from './recomputeModules';

function toFlag(e: KEntry): FlagArg | undefined {
  const v = e.value;
  // A list field Megatron reads as a list of words (recompute_modules: [layernorm, moe_act]); other lists keep their
  // flags' own spellings (a layer pattern is a string) and are not read from YAML lists.
  if (v.kind === 'list' && LIST_FIELDS.has(e.key)) {
    return { flag: `--${e.key.replace(/_/g, '-')}`, value: moduleListText(v), flagRange: e.keyRange, valueRange: v.range, spelled: e.key };
  }
  if (v.kind !== 'scalar' || v.value === null || v.value === undefined) return undefined;
  const flag = e.key.startsWith('--') ? e.key : `--${e.key.replace(/_/g, '-')}`;
  const spelled = e.key.startsWith('--') ? {} : { spelled: e.key };
  const value = typeof v.value === 'boolean' ? (v.value ? undefined : 'false') : String(v.value);
  if (typeof v.value === 'boolean' && !v.value) return { flag, value: 'false', flagRange: e.keyRange, valueRange: v.range, ...spelled };
  const unres = typeof value === 'string' && /\$\{/.test(value);
  return { flag, value, flagRange: e.keyRange, valueRange: v.range, unresolved: unres, ...spelled };
}

/** YAML list fields read as a flag's list of words. */
const LIST_FIELDS: ReadonlySet<string> = new Set(['recompute_modules']);


/** Keys of Megatron-Bridge's `tokenizer:` block that decide the vocabulary size. */
const TOKENIZER_KEYS: ReadonlySet<string> = new Set(['tokenizer_type', 'tokenizer_model', 'vocab_size', 'vocab_file', 'merge_file']);

function collect(node: KNode | undefined, out: FlagArg[], depth: number): void {
  if (!node || node.kind !== 'map' || depth > 4) return;
  for (const e of node.entries ?? []) {
    if (e.value.kind === 'map') {
      // Megatron-Bridge's TokenizerConfig: only what sizes the vocabulary (formats/common/tokenizerVocab.ts).
      if (e.key === 'tokenizer' || e.key === 'tokenizer_config') { for (const t of e.value.entries ?? []) if (TOKENIZER_KEYS.has(t.key)) { const f = toFlag(t); if (f) out.push(f); } continue; }
      if (['perf_matrix', 'ENV_VARS', 'logger', 'checkpoint', 'dataset', 'scheduler', 'rng', 'profiling'].includes(e.key)) continue;
      collect(e.value, out, depth + 1);
      continue;
    }
    const f = toFlag(e);
    if (!f) continue;
    const renamed = own(YAML_FLAG_RENAME, f.flag);
    if (f.flag === '--add-bias-linear') { if (f.value === 'false') out.push({ flag: '--disable-bias-linear', flagRange: f.flagRange, spelled: f.spelled }); continue; }
    if (f.flag === '--untie-embeddings-and-output-weights' || f.flag === '--share-embeddings-and-output-weights') {
      const untie = f.flag === '--untie-embeddings-and-output-weights' ? f.value !== 'false' : f.value === 'false';
      if (untie) out.push({ flag: '--untie-embeddings-and-output-weights', flagRange: f.flagRange, spelled: f.spelled });
      continue;
    }
    out.push(renamed ? { ...f, flag: renamed } : f);
  }
}

export function readMegatronYaml(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  const args: FlagArg[] = [];
  const legacy = !!entry(root, 'language_model') || !!entry(root, 'MODEL_ARGS');
  collect(root, args, 0);
  // A config field num_query_groups (TransformerConfig, which Megatron-Bridge and --yaml-cfg files fill directly) groups
  // the KV heads by itself; only the command line needs --group-query-attention beside --num-query-groups
  // (functional-test MODEL_ARGS keyed by flag follow argparse).
  const gqa = args.find((a) => a.flag === '--num-query-groups');
  const field = gqa?.spelled !== undefined;
  if (gqa && (legacy || field) && !args.some((a) => a.flag === '--group-query-attention')) args.unshift({ flag: '--group-query-attention' });
  // A Megatron-Bridge override file (top-level model and train sections, run with --config-file) changes a recipe:
  // what it leaves out is the recipe's, not Megatron-LM's argparse defaults.
  const override = !legacy && isBridgeOverrideYaml(root);
  applyMegatronArgs(s, args, override ? { modelDefaults: false, defaults: false } : { modelDefaults: legacy && args.some((a) => a.flag === '--num-layers') });
  if (override) {
    const mentioned = new Set(args.map((a) => a.flag));
    const mp = mixedPrecisionOf(root);
    // The recipe the file's name points to, if the table has it, gives what the file leaves out (as assumptions).
    const recipe = recipeOfFileName(s.file);
    const ownModel = args.some((a) => a.flag === '--num-layers' || a.flag === '--hidden-size');
    if (recipe) {
      const o = { assumedBecause: `recipe ${recipe.name}, which the file's name points to`, model: !ownModel, precision: !mp, overridden: mentioned };
      for (const f of applyBridgeRecipe(s, recipe, o)) mentioned.add(f);
    }
    bridgeRecipeValues(s, s.file, mentioned, recipe?.name, mp, recipe, true);
    if (!ownModel && !s.has('model.preset')) modelOfFileName(s);
  }
  bridgePacking(s, root);
}

/** Top-level `model` and `train` maps (`model_config` and `train_config` in older Bridge releases), not inside a ConfigContainer dump: a Bridge override file. */
function isBridgeOverrideYaml(root: KNode): boolean {
  const map = (k: string) => entry(root, k)?.value.kind === 'map';
  return (map('model') || map('model_config')) && (map('train') || map('train_config')) && !entry(root, 'ConfigContainer');
}

/** Megatron-Bridge's mixed precision as an override writes it: a recipe name (`bf16_mixed`) or MixedPrecisionConfig's `dtype`. */
function mixedPrecisionOf(root: KNode): { value: unknown; loc: Loc } | undefined {
  const e = entry(root, 'mixed_precision');
  if (!e) return undefined;
  if (e.value.kind === 'scalar') return { value: e.value.value, loc: locOf(e, 'mixed_precision') };
  const dtype = at(root, 'mixed_precision.dtype');
  if (dtype?.value.kind === 'scalar' && typeof dtype.value.value === 'string') return { value: `${dtype.value.value}_mixed`, loc: locOf(dtype, 'mixed_precision.dtype') };
  return undefined;
}

/**
 * An override file names no model (its recipe does): the preset its file name starts with
 * (`qwen3_next_80b_a3b_finetune_override_example.yaml`), if any, is assumed and listed as such.
 */
function modelOfFileName(s: FactSink): void {
  const p = presetOfRecipe(s.file.replace(/\.ya?ml$/i, ''));
  if (p) s.assumed('model.preset', p.name, `the override file's name starts with ${p.name}'s, the model of the recipe it is written for; the file does not name one`);
}

/**
 * Megatron-Bridge's packed fine-tuning (src/megatron/bridge/data/datasets/packed_sequence.py PackedSequenceSpecs): a
 * positive `packed_sequence_size` packs samples in the THD layout, each attending only within itself (cu_seqlens);
 * -1, its default, or 0 is off. Found under `dataset` (or `dataset_config`), optionally inside ConfigContainer.
 */
function bridgePacking(s: FactSink, root: KNode): void {
  const top = entry(root, 'ConfigContainer')?.value.kind === 'map' ? entry(root, 'ConfigContainer')!.value : root;
  for (const block of ['dataset', 'dataset_config']) {
    const e = at(top, `${block}.packed_sequence_specs.packed_sequence_size`);
    const n = e?.value.kind === 'scalar' ? toNumber(e.value.value) : undefined;
    if (e && n !== undefined && n > 0) { s.explicit('training.packing', 'varlen', locOf(e, `${block}.packed_sequence_specs.packed_sequence_size`)); return; }
  }
}
