/** JSON (with comments and trailing commas tolerated) → KNode, through jsonc-parser's error-tolerant tree. */
import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import type { KEntry, KNode, ParsedTree, SyntaxProblem } from './tree';
import type { LineIndex } from './text';

function convert(n: Node, li: LineIndex, depth: number): KNode {
  const range = li.range(n.offset, n.offset + n.length);
  if (depth > 64) return { kind: 'scalar', value: null, range };
  if (n.type === 'object') {
    const entries: KEntry[] = [];
    for (const p of n.children ?? []) {
      const k = p.children?.[0];
      const v = p.children?.[1];
      if (!k || typeof k.value !== 'string') continue;
      const keyRange = li.range(k.offset, k.offset + k.length);
      entries.push({ key: k.value, keyRange, value: v ? convert(v, li, depth + 1) : { kind: 'scalar', value: undefined, range: keyRange } });
    }
    return { kind: 'map', range, entries };
  }
  if (n.type === 'array') return { kind: 'list', range, items: (n.children ?? []).map((c) => convert(c, li, depth + 1)) };
  return { kind: 'scalar', value: n.value ?? null, range };
}

export function jsonTree(text: string, li: LineIndex): ParsedTree {
  const errs: ParseError[] = [];
  let root: Node | undefined;
  try {
    root = parseTree(text, errs, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true });
  } catch {
    root = undefined;
  }
  const errors: SyntaxProblem[] = errs.slice(0, 50).map((e) => ({
    message: `JSON syntax: ${printParseErrorCode(e.error)}`,
    range: li.range(e.offset, e.offset + Math.max(1, e.length)),
  }));
  return { root: root ? convert(root, li, 0) : undefined, errors };
}
