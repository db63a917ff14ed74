/**
 * Completion of keys and values from the bundled format tables (formats/<name>/keys.json): JSON by jsonc-parser location, YAML
 * and TOML by the enclosing keys or section, launch scripts by `--flag` words.
 */
import { getLocation } from 'jsonc-parser';
import { CompletionItemKind, MarkupKind, type CompletionItem, type Position } from 'vscode-languageserver';
import type { FormatId } from '../../shared/plan/facts';
import { offsetAt } from './edits';
import { keyTable, type KeyDoc } from '../../formats/keyTables';

type Context = { kind: 'key'; parent: string } | { kind: 'value'; key: string } | { kind: 'flag' };

const SCRIPT: readonly FormatId[] = ['megatron-script'];
/** YAML formats whose fields mean the same at any depth (Megatron YAML: each field is a flag): completed flat. */
const FLAT: readonly FormatId[] = ['megatron-yaml'];
const TOML: readonly FormatId[] = ['torchtitan'];

function docOf(key: string, d: KeyDoc): string {
  const lines = [`**${key}**${d.type ? ` (${d.type})` : ''}`, '', d.description ?? ''];
  if (d.default !== undefined) lines.push('', `Default: \`${JSON.stringify(d.default)}\``);
  if (d.auto) lines.push('', `"auto": ${d.auto}`);
  if (d.plan) lines.push('', `ShardLens input: \`${d.plan}\``);
  if (d.deprecated) lines.push('', `Deprecated: ${typeof d.deprecated === 'string' ? d.deprecated : 'yes'}`);
  return lines.join('\n');
}

/** YAML: the dotted path of the mapping that holds the line at `line` (by indentation). */
function yamlParent(lines: readonly string[], line: number): string {
  const indentOf = (s: string) => s.length - s.trimStart().length;
  let indent = indentOf(lines[line] ?? '');
  const parts: string[] = [];
  for (let i = line - 1; i >= 0 && indent > 0; i--) {
    const l = lines[i] ?? '';
    if (!l.trim() || l.trimStart().startsWith('#')) continue;
    const ind = indentOf(l);
    const m = /^\s*([\w.-]+)\s*:\s*$/.exec(l);
    if (ind < indent && m) {
      parts.unshift(m[1]);
      indent = ind;
    }
  }
  return parts.join('.');
}

/** What is being typed at the position. */
export function completionContext(format: FormatId, text: string, pos: Position): Context {
  const offset = offsetAt(text, pos);
  const lines = text.split('\n');
  const before = (lines[pos.line] ?? '').slice(0, pos.character);
  if (SCRIPT.includes(format)) return { kind: 'flag' };
  if (text.trimStart().startsWith('{')) {
    const loc = getLocation(text, offset);
    const path = loc.path.filter((p): p is string => typeof p === 'string');
    if (loc.isAtPropertyKey) return { kind: 'key', parent: path.slice(0, -1).join('.') };
    return { kind: 'value', key: path.join('.') };
  }
  if (TOML.includes(format)) {
    let section = '';
    for (let i = pos.line; i >= 0; i--) {
      const m = /^\s*\[([\w.-]+)\]/.exec(lines[i] ?? '');
      if (m) {
        section = m[1];
        break;
      }
    }
    const kv = /^\s*([\w.-]+)\s*=\s*\S*$/.exec(before);
    if (kv) return { kind: 'value', key: section ? `${section}.${kv[1]}` : kv[1] };
    return { kind: 'key', parent: section };
  }
  const parent = yamlParent(lines, pos.line);
  const kv = /^\s*([\w.-]+)\s*:\s*\S*$/.exec(before);
  if (kv) return { kind: 'value', key: parent ? `${parent}.${kv[1]}` : kv[1] };
  return { kind: 'key', parent };
}

function valueItems(d: KeyDoc): CompletionItem[] {
  const vals: unknown[] = [...(d.enum ?? [])];
  if (d.type === 'boolean') vals.push(true, false);
  if (d.auto) vals.push('auto');
  return vals.map((v) => ({ label: typeof v === 'string' ? v : JSON.stringify(v), kind: CompletionItemKind.Value, insertText: typeof v === 'string' ? v : JSON.stringify(v) }));
}

/** Completion items at the position; empty when the format has no table. */
export function buildCompletion(format: FormatId | null, text: string, pos: Position): CompletionItem[] {
  const table = keyTable(format);
  if (!format || !table) return [];
  const ctx = completionContext(format, text, pos);
  const entries = Object.entries(table.keys);
  const flat = FLAT.includes(format);
  if (ctx.kind === 'value') {
    const d = table.keys[ctx.key] ?? (flat ? table.keys[ctx.key.split('.').pop() ?? ''] : undefined);
    return d ? valueItems(d) : [];
  }
  const items = new Map<string, CompletionItem>();
  for (const [key, d] of entries) {
    if (ctx.kind === 'flag') {
      if (key.startsWith('--')) items.set(key, { label: key, kind: CompletionItemKind.Property, documentation: { kind: MarkupKind.Markdown, value: docOf(key, d) } });
      continue;
    }
    if (flat && key.startsWith('--')) continue;
    const prefix = ctx.parent && !flat ? `${ctx.parent}.` : '';
    if (!key.startsWith(prefix)) continue;
    const rest = key.slice(prefix.length).split('.');
    const label = rest[0];
    if (!label || items.has(label)) continue;
    const leaf = rest.length === 1;
    items.set(label, {
      label, kind: leaf ? CompletionItemKind.Property : CompletionItemKind.Module,
      ...(leaf ? { documentation: { kind: MarkupKind.Markdown, value: docOf(key, d) }, detail: d.type } : { detail: 'section' }),
      ...(d.deprecated ? { tags: [1] } : {}),
    });
  }
  return [...items.values()];
}
