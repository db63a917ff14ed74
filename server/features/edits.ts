/**
 * Minimal text edits that set one plan input in a config file, keeping its formatting: the written value is replaced
 * in place (keeping quotes), or for JSON a missing key is inserted with jsonc-parser's `modify`.
 */
import { modify, type FormattingOptions } from 'jsonc-parser';
import { TextEdit, type Range } from 'vscode-languageserver';
import type { DocumentAnalysis } from '../analysis/analyze';
import { localFact } from './facts';
import { keyForPath } from '../../formats/keyTables';
import type { PlanPath } from '../../shared/plan/paths';
import { factEntries } from '../../shared/plan/facts';

/** Offset of a position in `text` (clamped). */
export function offsetAt(text: string, pos: { line: number; character: number }): number {
  let line = 0;
  let i = 0;
  while (line < pos.line) {
    const nl = text.indexOf('\n', i);
    if (nl < 0) return text.length;
    i = nl + 1;
    line++;
  }
  const end = text.indexOf('\n', i);
  return Math.min(i + pos.character, end < 0 ? text.length : end);
}

/** Position of an offset in `text`. */
export function positionAt(text: string, offset: number): { line: number; character: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const line = before.split('\n').length - 1;
  return { line, character: before.length - (before.lastIndexOf('\n') + 1) };
}

function textOf(text: string, r: Range): string {
  return text.slice(offsetAt(text, r.start), offsetAt(text, r.end));
}

/** The literal to write in place of `written` (which spelled `oldValue`), or undefined if it does not match. */
export function literalFor(written: string, oldValue: unknown, value: number | string | boolean): string | undefined {
  const t = written.trim();
  const quote = /^(["'])(.*)\1$/.exec(t);
  const bare = quote ? quote[2] : t;
  const q = quote ? quote[1] : '';
  if (typeof oldValue === 'number' && Number(bare.replace(/_/g, '')) === oldValue) return `${q}${String(value)}${q}`;
  if (typeof oldValue === 'string' && bare.toLowerCase() === oldValue.toLowerCase()) return `${q}${String(value)}${q}`;
  if (/^(true|false)$/i.test(bare) && typeof value === 'string') {
    const on = value !== 'none';
    const word = on ? 'true' : 'false';
    return `${q}${/^[A-Z]/.test(bare) ? word[0].toUpperCase() + word.slice(1) : word}${q}`;
  }
  if (typeof oldValue === 'boolean' && /^(true|false)$/i.test(bare) && typeof value === 'boolean') return `${q}${String(value)}${q}`;
  return undefined;
}

function jsonFormatting(text: string): FormattingOptions {
  const m = /\n([ \t]+)\S/.exec(text);
  const indent = m ? m[1] : '  ';
  return { insertSpaces: !indent.includes('\t'), tabSize: indent.includes('\t') ? 1 : indent.length, eol: text.includes('\r\n') ? '\r\n' : '\n' };
}

/** Plan paths a missing key may be inserted for (JSON); others are only edited where the file already sets them. */
const INSERTABLE = new Set<PlanPath>([
  'parallel.sharding.stage', 'parallel.sharding.offloadOptimizer', 'parallel.sharding.offloadParams',
  'training.microBatch', 'training.gradAccum', 'training.globalBatch',
]);

/** True when the written value of a local fact is a boolean literal (e.g. `gradient_checkpointing: true`). */
export function writtenAsBoolean(a: DocumentAnalysis, path: PlanPath): boolean {
  const r = localFact(a, path)?.source.range;
  return !!r && /^["']?(true|false)["']?$/i.test(textOf(a.text, r).trim());
}

/** Edits that set `path` to `value`, or undefined when the file cannot be edited safely for it. */
export function editFor(a: DocumentAnalysis, path: PlanPath, value: number | string): TextEdit[] | undefined {
  const f = localFact(a, path);
  if (f?.source.range) {
    const lit = literalFor(textOf(a.text, f.source.range), f.value, value);
    if (lit !== undefined) return [TextEdit.replace(f.source.range, lit)];
  }
  const key = INSERTABLE.has(path) ? keyForPath(a.format, path) : undefined;
  if (!key || !a.text.trimStart().startsWith('{')) return undefined;
  try {
    const out = modify(a.text, key.split('.'), value, { formattingOptions: jsonFormatting(a.text) });
    return out.map((e) => TextEdit.replace({ start: positionAt(a.text, e.offset), end: positionAt(a.text, e.offset + e.length) }, e.content));
  } catch {
    return undefined;
  }
}

/** Megatron flags that switch recomputation on (megatron/training/arguments.py). */
const RECOMPUTE_FLAGS: Record<string, string> = {
  selective: '--recompute-granularity selective',
  full: '--recompute-granularity full --recompute-method uniform --recompute-num-layers 1',
};

/**
 * Inserts Megatron flags on a new line after the line of another flag the script writes (the micro batch, else any),
 * with the same indentation and line continuation.
 */
export function insertFlagEdit(a: DocumentAnalysis, path: PlanPath, value: string): TextEdit[] | undefined {
  const flags = path === 'training.recompute' ? RECOMPUTE_FLAGS[value] : undefined;
  if (a.format !== 'megatron-script' || !flags) return undefined;
  const anchors = [localFact(a, 'training.microBatch'), ...factEntries(a.facts?.facts ?? {}).map(([p]) => localFact(a, p))];
  const anchor = anchors.find((f) => f?.keyRange && f.key?.startsWith('--'));
  if (!anchor?.keyRange) return undefined;
  const line = anchor.keyRange.start.line;
  const text = a.text.split('\n')[line] ?? '';
  const indent = /^\s*/.exec(text)?.[0] ?? '';
  const cont = /\\\s*$/.test(text) ? ' \\' : '';
  return [TextEdit.insert({ line: line + 1, character: 0 }, `${indent}${flags}${cont}\n`)];
}

/** Applies edits to text (for tests and previews); edits must not overlap. */
export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  const sorted = [...edits].sort((x, y) => offsetAt(text, y.range.start) - offsetAt(text, x.range.start));
  let out = text;
  for (const e of sorted) out = out.slice(0, offsetAt(out, e.range.start)) + e.newText + out.slice(offsetAt(out, e.range.end));
  return out;
}
