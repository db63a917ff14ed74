/**
 * Bundled model presets (data/models/*.json, Hugging Face config.json style) with forgiving lookup:
 * "llama3-8b", "meta-llama/Meta-Llama-3-8B", "Llama-3.1-8B" all resolve.
 */
import type { ModelSpec, Problem } from '../plan/types';
import { MODEL_NOTE_CODES, modelFromHfConfig } from './hfConfig';
import { PRESET_CONFIGS } from './presetData';
import { editDistance } from '../editDistance';

/** One bundled model preset. */
export interface ModelPreset {
  readonly id: string;
  readonly name: string;
  readonly aliases: readonly string[];
  /** URL or paper the configuration comes from. */
  readonly source: string;
  readonly model: ModelSpec;
  /** What reading its config says to every plan that uses it: its sliding window, layers read as attention. */
  readonly notes: readonly Problem[];
  /** Multi-token-prediction layers its config.json declares, which only AutoBridge-built Megatron models train (hfConfig.ts). */
  readonly mtpLayersInConfig?: number;
}

interface PresetMeta { id: string; name: string; aliases?: string[]; source: string }

/** Loads every preset through the one config.json reader. */
function load(): ModelPreset[] {
  const out: ModelPreset[] = [];
  for (const raw of PRESET_CONFIGS) {
    const meta = (raw as { _shardlens?: PresetMeta })._shardlens;
    if (!meta) continue;
    const { model, problems, mtpLayersInConfig } = modelFromHfConfig(raw, meta.name);
    // A note names the preset's own config.json, not a file of the user's.
    const notes = problems.filter((p) => MODEL_NOTE_CODES.has(p.code)).map((p) => ({ ...p, message: p.message.replace(/^config\.json /, `${meta.name}'s config.json `) }));
    if (model) out.push({ id: meta.id, name: meta.name, aliases: meta.aliases ?? [], source: meta.source, model, notes, ...(mtpLayersInConfig ? { mtpLayersInConfig } : {}) });
  }
  return out;
}

const PRESETS: readonly ModelPreset[] = load();

/** Normalises a model name: lowercase, no org prefix, no "meta-" / "-hf" decorations, no punctuation. */
export function presetKey(name: string): string {
  return name
    .toLowerCase()
    .replace(/^.*\//, '')
    .replace(/^meta-/, '')
    .replace(/-(hf|base)$/, '')
    .replace(/[^a-z0-9.]+/g, '')
    .replace(/\.(?=\D)|\.$/g, '');
}

const INDEX: ReadonlyMap<string, ModelPreset> = (() => {
  const m = new Map<string, ModelPreset>();
  for (const p of PRESETS) {
    for (const k of [p.id, p.name, ...p.aliases]) {
      const key = presetKey(k);
      if (!m.has(key)) m.set(key, p);
    }
  }
  return m;
})();

/** Lists the bundled presets. */
export function listPresets(): readonly ModelPreset[] {
  return PRESETS;
}

/** Finds a preset by id, name, alias or Hub repo id, forgivingly; "-Instruct" variants map to their base model. */
export function findPreset(name: unknown): ModelPreset | undefined {
  if (typeof name !== 'string' || !name.trim()) return undefined;
  const key = presetKey(name);
  return INDEX.get(key) ?? INDEX.get(stemOf(name));
}

/**
 * The parameter count a model name carries, read before punctuation is dropped ("Qwen2.5-Coder-7B" → "7b",
 * "Mixtral-8x22B" → "8x22b", "gemma-3-4b" → "4b", "Qwen3-30B-A3B" → "30b"), if any.
 */
function sizeOf(name: string): string | undefined {
  return /(?<![\w.])(\d+x)?\d+(?:\.\d+)?b(?![a-z])/.exec(name.toLowerCase().replace(/^.*\//, ''))?.[0];
}

/** Release decorations: words after the model's name that do not change its shape (a tuned or quantized checkpoint). */
const DECORATION = /^(?:instruct|chat|it|base|hf|fp8|fp16|bf16|awq|gptq|int[48]|bnb|nf4|[248]bit|gguf)$/;

/**
 * The normalised name without its release decorations, read word by word from the name as written
 * ("gemma-3-4b-it-bnb-4bit" → "gemma34b": the "4bit" word goes, the "4b" size stays; "Mixtral-8x7B-Instruct-v0.1" →
 * "mixtral8x7bv0.1"). A version ("v0.3") is not a decoration: Mistral 7B v0.3 has another vocabulary than v0.1.
 */
function stemOf(name: string): string {
  const words = name.toLowerCase().replace(/^.*\//, '').split(/[-_\s]+/).filter(Boolean);
  return presetKey(words.filter((w, i) => i === 0 || !DECORATION.test(w)).join('-'));
}

/**
 * Up to `max` bundled preset ids whose names are closest to a name that is not bundled, for "did you mean …?": the same
 * parameter count ranks first ("Qwen/Qwen2.5-Coder-7B" → qwen2.5-7b), then the edit distance of the normalised names.
 * A suggestion is only a name that looks alike: the user decides whether the shapes are the same.
 */
export function suggestPresets(name: string, max = 3): string[] {
  const memo = SUGGESTED.get(`${max} ${name}`);
  if (memo) return [...memo];
  const out = rankPresets(name, max);
  // Resolving an unknown model runs on every edit of its file: the ranking is kept for the few names in play.
  if (SUGGESTED.size >= 64) SUGGESTED.clear();
  SUGGESTED.set(`${max} ${name}`, out);
  return [...out];
}

const SUGGESTED = new Map<string, readonly string[]>();

function rankPresets(name: string, max: number): string[] {
  const key = presetKey(name);
  if (!key) return [];
  const size = sizeOf(name);
  const stem = stemOf(name);
  const scored = PRESETS.map((p) => {
    const names = [p.id, p.name, ...p.aliases];
    const d = Math.min(...names.map((k) => editDistance(stem, stemOf(k)))) - (size && names.some((k) => sizeOf(k) === size) ? 4 : 0);
    return { id: p.id, d };
  });
  return scored
    .filter((s) => s.d <= Math.max(3, Math.floor(key.length / 2)))
    .sort((a, b) => a.d - b.d || a.id.localeCompare(b.id))
    .slice(0, max)
    .map((s) => s.id);
}
