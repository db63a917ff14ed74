/** YAML → KNode through the `yaml` package's document API (keeps ranges; tolerates broken input). */
import { isAlias, isMap, isPair, isScalar, isSeq, parseDocument, type Node as YNode } from 'yaml';
import type { KEntry, KNode, ParsedTree, SyntaxProblem } from './tree';
import type { LineIndex } from './text';

function rangeOf(n: { range?: [number, number, number] | null } | null | undefined, li: LineIndex) {
  const r = n?.range;
  return r ? li.range(r[0], r[1]) : li.range(0, 0);
}

function keyText(k: unknown): string {
  if (isScalar(k)) return String(k.value ?? '');
  if (k === null || k === undefined) return '';
  return String((k as { toString(): string }).toString());
}

function convert(n: unknown, li: LineIndex, depth: number): KNode {
  const range = rangeOf(n as YNode, li);
  if (depth > 64 || n === null || n === undefined) return { kind: 'scalar', value: null, range };
  if (isMap(n)) {
    const entries: KEntry[] = [];
    for (const p of n.items) {
      if (!isPair(p)) continue;
      const keyRange = rangeOf(p.key as YNode, li);
      const value = p.value === null || p.value === undefined
        ? { kind: 'scalar' as const, value: null, range: { start: keyRange.end, end: keyRange.end } }
        : convert(p.value, li, depth + 1);
      entries.push({ key: keyText(p.key), keyRange, value });
    }
    return { kind: 'map', range, entries };
  }
  if (isSeq(n)) return { kind: 'list', range, items: n.items.map((c) => convert(c, li, depth + 1)) };
  if (isScalar(n)) return { kind: 'scalar', value: n.value, range };
  if (isAlias(n)) return { kind: 'scalar', value: null, range };
  return { kind: 'scalar', value: null, range };
}

export function yamlTree(text: string, li: LineIndex): ParsedTree {
  try {
    const doc = parseDocument(text, { strict: false, uniqueKeys: false, prettyErrors: false });
    const errors: SyntaxProblem[] = doc.errors.slice(0, 50).map((e) => ({
      message: `YAML syntax: ${e.message.split('\n')[0]}`,
      range: li.range(e.pos[0], Math.max(e.pos[0] + 1, e.pos[1])),
    }));
    return { root: doc.contents ? convert(doc.contents, li, 0) : undefined, errors };
  } catch (e) {
    return { root: undefined, errors: [{ message: `YAML could not be read: ${String(e)}`, range: li.range(0, 0) }] };
  }
}
