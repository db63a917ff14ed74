/**
 * Minimal edits that set one plan input in a config file, keeping its formatting: the written value is replaced in
 * place (keeping quotes and the file's spelling of booleans), a missing JSON key is inserted with jsonc-parser's
 * `modify`, and Megatron recomputation flags are added after another flag. Pure functions of the text and its facts;
 * the server turns the edits into LSP TextEdits and the what-if test applies them.
 */
import { modify } from 'jsonc-parser';
import type { ConfigFacts, Fact, FactValue, FormatId } from '../../../shared/plan/facts';
import { factEntries } from '../../../shared/plan/facts';
import type { PlanPath } from '../../../shared/plan/paths';
import { keyForPath } from '../../keyTables';
import { jsonFormatting } from '../../deepspeed/rewriter';
import { lineStarts, type TextEdit, positionAt, textOf } from './text';

/** A file as the key editor sees it: its text, format and the facts read from it. */
export interface EditableFile {
  readonly uri: string;
  readonly text: string;
  readonly format: FormatId | null;
  readonly facts?: ConfigFacts;
}

/** True when the fact was written in this file (so its ranges point into its text). */
export function isLocalFact(file: EditableFile, f: Fact): boolean {
  const k = f.source.kind;
  if (k !== 'explicit' && k !== 'derived') return false;
  if (!f.keyRange && !f.source.range) return false;
  return !f.source.uri || f.source.uri === file.uri || f.source.uri === file.facts?.uri;
}

/** The fact for a plan path written in this file, if any. */
export function localFactOf(file: EditableFile, path: PlanPath): Fact | undefined {
  const f = file.facts?.facts[path];
  return f && isLocalFact(file, f) ? f : undefined;
}

/** The literal to write in place of `written` (which spelled `oldValue`), or undefined if it does not match. */
export function literalFor(written: string, oldValue: unknown, value: FactValue): string | undefined {
  const t = written.trim();
  const quote = /^(["'])(.*)\1$/.exec(t);
  const bare = quote ? quote[2] : t;
  const q = quote ? quote[1] : '';
  if (Array.isArray(value)) return undefined;
  // DeepSpeed's "auto" is a string; the number that replaces it is not.
  if (oldValue === 'auto' && typeof value === 'number' && bare.toLowerCase() === 'auto') return String(value);
  if (typeof oldValue === 'number' && Number(bare.replace(/_/g, '')) === oldValue) return `${q}${String(value)}${q}`;
  if (typeof oldValue === 'string' && bare.toLowerCase() === oldValue.toLowerCase()) return `${q}${String(value)}${q}`;
  if (/^(true|false)$/i.test(bare) && typeof value === 'string') return `${q}${boolWord(bare, value !== 'none')}${q}`;
  if (typeof oldValue === 'boolean' && /^(true|false)$/i.test(bare) && typeof value === 'boolean') return `${q}${boolWord(bare, value)}${q}`;
  return undefined;
}

/**
 * The literal that states an optimizer implementation where the file states it another way: a `fused` flag
 * (torchtune, Lightning; torchtitan's older `fused`) turned on for fused and off for foreach, or the Hugging Face
 * optimizer name, `adamw_torch_fused` for fused and `adamw_torch` for foreach (transformers TrainingArguments `optim`).
 */
function optimizerImplLiteral(written: string, value: FactValue): string | undefined {
  const t = written.trim();
  const quote = /^(["'])(.*)\1$/.exec(t);
  const bare = quote ? quote[2] : t;
  const q = quote ? quote[1] : '';
  if (value !== 'fused' && value !== 'foreach') return undefined;
  if (/^(true|false)$/i.test(bare)) return `${q}${boolWord(bare, value === 'fused')}${q}`;
  if (/^adamw_torch(_fused)?$/i.test(bare)) return `${q}${value === 'fused' ? 'adamw_torch_fused' : 'adamw_torch'}${q}`;
  return undefined;
}

/** `on` spelled as the file spells the boolean it replaces: true, True (torchtune, Python-style YAML) or TRUE. */
function boolWord(written: string, on: boolean): string {
  const word = on ? 'true' : 'false';
  if (/^[A-Z]+$/.test(written)) return word.toUpperCase();
  return /^[A-Z]/.test(written) ? word[0].toUpperCase() + word.slice(1) : word;
}

/** Plan paths a missing key may be inserted for (JSON); others are only edited where the file already sets them. */
const INSERTABLE = new Set<PlanPath>([
  'parallel.sharding.stage', 'parallel.sharding.offloadOptimizer', 'parallel.sharding.offloadParams',
  'training.microBatch', 'training.gradAccum', 'training.globalBatch',
]);

/**
 * Edits that set `path` to `value`, or undefined when the file cannot be edited safely for it. `value` undefined removes
 * the fact: a switch written `true` that stated it (Liger's `use_liger_kernel`) is turned off.
 */
export function keyEdits(file: EditableFile, path: PlanPath, value: FactValue | undefined): TextEdit[] | undefined {
  const f = localFactOf(file, path);
  if (value === undefined) {
    const written = f?.source.range ? textOf(file.text, f.source.range) : '';
    const off = /^\s*(["']?)true\1\s*$/i.test(written) ? literalFor(written, true, false) : undefined;
    return f?.source.range && off !== undefined ? [{ range: f.source.range, newText: off }] : undefined;
  }
  if (f?.source.range) {
    const written = textOf(file.text, f.source.range);
    const lit = (path === 'training.optimizerImpl' ? optimizerImplLiteral(written, value) : undefined) ?? literalFor(written, f.value, value);
    if (lit !== undefined) return [{ range: f.source.range, newText: lit }];
  }
  // A Megatron switch whose default the file leaves: its flag on a line of its own.
  const flag = SWITCH_FLAGS[path]?.[String(value)];
  if (flag && (!f || f.source.kind === 'default')) return insertFlag(file, flag);
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const key = INSERTABLE.has(path) ? keyForPath(file.format, path) : undefined;
  if (key && file.text.trimStart().startsWith('{')) return jsonInsert(file.text, key, value);
  const flags = path === 'training.recompute' && typeof value === 'string' ? RECOMPUTE_FLAGS[value] : undefined;
  return flags && !f ? insertFlag(file, flags) : undefined;
}

function jsonInsert(text: string, key: string, value: number | string): TextEdit[] | undefined {
  try {
    const starts = lineStarts(text);
    return modify(text, key.split('.'), value, { formattingOptions: jsonFormatting(text) })
      .map((e) => ({ range: { start: positionAt(starts, e.offset), end: positionAt(starts, e.offset + e.length) }, newText: e.content }));
  } catch {
    return undefined;
  }
}

/** Megatron flags that switch recomputation on (megatron/training/arguments.py). */
const RECOMPUTE_FLAGS: Readonly<Record<string, string>> = {
  selective: '--recompute-granularity selective',
  full: '--recompute-granularity full --recompute-method uniform --recompute-num-layers 1',
};

/** Megatron flags that set a boolean the script leaves at its default, by plan path and value (megatron/training/arguments.py). */
const SWITCH_FLAGS: Readonly<Partial<Record<PlanPath, Readonly<Record<string, string>>>>> = {
  'model.tiedEmbeddings': { false: '--untie-embeddings-and-output-weights' },
};

/**
 * Inserts Megatron flags on a new line after the line of another flag the script writes (the micro batch, else any),
 * with the same indentation and line continuation.
 */
function insertFlag(file: EditableFile, flags: string): TextEdit[] | undefined {
  if (file.format !== 'megatron-script') return undefined;
  const anchors = [localFactOf(file, 'training.microBatch'), ...factEntries(file.facts?.facts ?? {}).map(([p]) => localFactOf(file, p))];
  const anchor = anchors.find((f) => f?.keyRange && f.key?.startsWith('--'));
  if (!anchor?.keyRange) return undefined;
  const line = anchor.keyRange.start.line;
  const text = file.text.split('\n')[line] ?? '';
  const indent = /^\s*/.exec(text)?.[0] ?? '';
  const cont = /\\\s*$/.test(text) ? ' \\' : '';
  const at = { line: line + 1, character: 0 };
  return [{ range: { start: at, end: at }, newText: `${indent}${flags}${cont}\n` }];
}
