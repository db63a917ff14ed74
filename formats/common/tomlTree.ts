/**
 * TOML → KNode through toml-eslint-parser (ranges on every key and value). A syntax error blanks the offending
 * line (keeping offsets) and parsing is retried, so half-typed files still yield the rest.
 */
import { parseTOML, type AST } from 'toml-eslint-parser';
import type { TextRange } from '../../shared/plan/types';
import type { KNode, ParsedTree, SyntaxProblem } from './tree';
import type { LineIndex } from './text';

interface MEntry { key: string; keyRange: TextRange; value: MNode }
interface MNode { kind: 'map' | 'list' | 'scalar'; value?: unknown; range: TextRange; entries?: MEntry[]; items?: MNode[] }

function child(map: MNode, key: string, keyRange: TextRange, range: TextRange, asList = false): MNode {
  map.entries ??= [];
  const e = map.entries.find((x) => x.key === key);
  if (e && (e.value.kind === 'map' || e.value.kind === 'list')) return e.value;
  const node: MNode = asList ? { kind: 'list', range, items: [] } : { kind: 'map', range, entries: [] };
  map.entries.push({ key, keyRange, value: node });
  return node;
}

function keyName(k: AST.TOMLBare | AST.TOMLQuoted): string {
  return k.type === 'TOMLBare' ? k.name : k.value;
}

function value(v: AST.TOMLContentNode, li: LineIndex, depth: number): MNode {
  const range = li.range(v.range[0], v.range[1]);
  if (depth > 64) return { kind: 'scalar', value: null, range };
  if (v.type === 'TOMLArray') return { kind: 'list', range, items: v.elements.map((e) => value(e, li, depth + 1)) };
  if (v.type === 'TOMLInlineTable') {
    const m: MNode = { kind: 'map', range, entries: [] };
    for (const kv of v.body) put(m, kv, li, depth + 1);
    return m;
  }
  const val = v.kind === 'integer' || v.kind === 'float' || v.kind === 'boolean' || v.kind === 'string' ? v.value : String(v.value);
  return { kind: 'scalar', value: val, range };
}

function put(map: MNode, kv: AST.TOMLKeyValue, li: LineIndex, depth: number): void {
  const ks = kv.key.keys;
  let cur = map;
  for (let i = 0; i < ks.length - 1; i++) {
    const k = ks[i]!;
    cur = child(cur, keyName(k), li.range(k.range[0], k.range[1]), li.range(kv.range[0], kv.range[1]));
    if (cur.kind !== 'map') return;
  }
  const last = ks[ks.length - 1];
  if (!last) return;
  cur.entries ??= [];
  cur.entries.push({ key: keyName(last), keyRange: li.range(last.range[0], last.range[1]), value: value(kv.value, li, depth) });
}

function build(ast: AST.TOMLProgram, li: LineIndex): KNode {
  const root: MNode = { kind: 'map', range: li.range(0, li.text.length), entries: [] };
  const top = ast.body[0];
  if (!top) return root;
  for (const item of top.body) {
    if (item.type === 'TOMLKeyValue') { put(root, item, li, 0); continue; }
    const ks = item.key.keys;
    let cur = root;
    const range = li.range(item.range[0], item.range[1]);
    for (let i = 0; i < ks.length; i++) {
      const k = ks[i]!;
      const isLast = i === ks.length - 1;
      const next = child(cur, keyName(k), li.range(k.range[0], k.range[1]), range, isLast && item.kind === 'array');
      if (next.kind === 'list') {
        if (isLast) { const m: MNode = { kind: 'map', range, entries: [] }; next.items!.push(m); cur = m; }
        else cur = next.items![next.items!.length - 1] ?? cur;
      } else cur = next;
    }
    for (const kv of item.body) put(cur, kv, li, 0);
  }
  return root as KNode;
}

/** Replaces one line with spaces (keeping its length and the newline). */
function blankLine(text: string, line: number): string {
  const lines = text.split('\n');
  if (line < 0 || line >= lines.length) return text;
  lines[line] = ' '.repeat(lines[line]!.length);
  return lines.join('\n');
}

export function tomlTree(text: string, li: LineIndex): ParsedTree {
  const errors: SyntaxProblem[] = [];
  let src = text;
  for (let attempt = 0; attempt < 40; attempt++) {
    try {
      return { root: build(parseTOML(src), li), errors };
    } catch (e) {
      const err = e as { lineNumber?: number; index?: number; message?: string };
      const line = typeof err.lineNumber === 'number' ? err.lineNumber - 1 : -1;
      const off = typeof err.index === 'number' ? err.index : li.offset({ line: Math.max(0, line), character: 0 });
      if (line < 0) { errors.push({ message: `TOML syntax: ${String(err.message ?? e).split('\n')[0]}`, range: li.range(off, off + 1) }); break; }
      const lines = src.split('\n');
      const prev = (lines[line - 1] ?? '').trim();
      const target = line > 0 && (/[=[,{]$/.test(prev) || !(lines[line] ?? '').trim()) ? line - 1 : line;
      const ls = li.offset({ line: target, character: 0 });
      errors.push({ message: `TOML syntax: ${String(err.message ?? e).split('\n')[0]}`, range: li.range(ls, ls + (lines[target] ?? '').length) });
      let next = blankLine(src, target);
      if (next === src) next = blankLine(src, line);
      if (next === src) break;
      src = next;
    }
  }
  return { root: undefined, errors };
}
