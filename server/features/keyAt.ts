/** The documented key under the cursor (from formats/<name>/keys.json), for hovers on keys ShardLens does not turn into facts. */
import { getLocation } from 'jsonc-parser';
import type { Hover, Position } from 'vscode-languageserver';
import { MarkupKind } from 'vscode-languageserver';
import type { FormatId } from '../../shared/plan/facts';
import { offsetAt } from './edits';
import { keyTable, type KeyDoc } from '../../formats/keyTables';
import { assumedSentence, inlineCode } from './markdown';

/** Dotted path of the YAML mapping keys enclosing `line` (by indentation). */
function yamlPath(lines: readonly string[], line: number): string[] {
  const own = /^(\s*)([\w.-]+)\s*:/.exec(lines[line] ?? '');
  if (!own) return [];
  const parts = [own[2]];
  let indent = own[1].length;
  for (let i = line - 1; i >= 0 && indent > 0; i--) {
    const m = /^(\s*)([\w.-]+)\s*:/.exec(lines[i] ?? '');
    if (m && m[1].length < indent) {
      parts.unshift(m[2]);
      indent = m[1].length;
    }
  }
  return parts;
}

/** Dotted key of a TOML line, prefixed with its [section]. */
function tomlPath(lines: readonly string[], line: number): string[] {
  const own = /^\s*([\w.-]+)\s*=/.exec(lines[line] ?? '');
  if (!own) return [];
  for (let i = line; i >= 0; i--) {
    const m = /^\s*\[([\w.-]+)\]/.exec(lines[i] ?? '');
    if (m) return [...m[1].split('.'), own[1]];
  }
  return [own[1]];
}

/** The `--flag` word at the position. */
function flagAt(lineText: string, ch: number): string | undefined {
  for (const m of lineText.matchAll(/--[\w-]+/g)) {
    if (m.index !== undefined && ch >= m.index && ch <= m.index + m[0].length) return m[0];
  }
  return undefined;
}

/** The key at the position and its documentation, if the format's table has it. */
export function keyDocAt(format: FormatId | null, text: string, pos: Position): [string, KeyDoc] | undefined {
  const table = keyTable(format);
  if (!table || !format) return undefined;
  const lines = text.split('\n');
  let key: string | undefined;
  if (format === 'megatron-script') key = flagAt(lines[pos.line] ?? '', pos.character);
  else if (text.trimStart().startsWith('{')) {
    const loc = getLocation(text, offsetAt(text, pos));
    key = loc.path.filter((p): p is string => typeof p === 'string').join('.');
  } else if (format === 'torchtitan') key = tomlPath(lines, pos.line).join('.');
  else key = yamlPath(lines, pos.line).join('.');
  if (!key) return undefined;
  const doc = table.keys[key] ?? table.keys[key.split('.').slice(-1)[0] ?? ''];
  return doc ? [key, doc] : undefined;
}

/**
 * A documentation hover for a table key. `assumed` is what the estimate stands in for the key's value when the file
 * writes it with a value only the run gives (`--micro-batch-size $MBS`): said first, as the assumption it is.
 */
export function keyDocHover(key: string, d: KeyDoc, assumed?: { readonly value: string; readonly detail: string }): Hover {
  const md = [`**ShardLens** · ${inlineCode(key)}${d.type ? ` (${d.type})` : ''}`, ''];
  if (assumed) md.push(assumedSentence(assumed.value, assumed.detail), '');
  md.push(d.description ?? '');
  if (d.default !== undefined && d.default !== null) md.push('', `Default: \`${JSON.stringify(d.default)}\``);
  if (d.auto) md.push('', `"auto": ${d.auto}`);
  if (d.deprecated) md.push('', `Deprecated${typeof d.deprecated === 'string' ? `: use \`${d.deprecated}\`` : ''}.`);
  if (d.plan) md.push('', `ShardLens input: \`${d.plan}\``);
  else md.push('', 'ShardLens does not use this key in its estimates.');
  return { contents: { kind: MarkupKind.Markdown, value: md.join('\n') } };
}
