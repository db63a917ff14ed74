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

/** Deepest nesting read: far above any real config (DeepSpeed nests 3 levels), far below the parser's stack. */
export const MAX_JSON_NESTING = 64;

/** Offset of the first bracket that opens level MAX_JSON_NESTING + 1 (outside strings), or -1. */
function tooDeepAt(text: string): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // A backslash escapes the next character.
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) { if (++depth > MAX_JSON_NESTING) return i; }
    else if (c === 125 || c === 93) depth--;
  }
  return -1;
}

export function jsonTree(text: string, li: LineIndex): ParsedTree {
  // Refused before parsing: the recursive parser would overflow its stack and every key would silently vanish.
  const deep = tooDeepAt(text);
  if (deep >= 0) {
    return { root: undefined, errors: [{ message: `JSON nested more than ${MAX_JSON_NESTING} levels deep; ShardLens does not read it (no training config nests this deep).`, range: li.range(deep, deep + 1) }] };
  }
  const errs: ParseError[] = [];
  let root: Node | undefined;
  try {
    root = parseTree(text, errs, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true });
  } catch (e) {
    return { root: undefined, errors: [{ message: `JSON could not be read: ${String(e).slice(0, 120)}`, range: li.range(0, 0) }] };
  }
  const errors: SyntaxProblem[] = errs.slice(0, 50).map((e) => ({
    message: `JSON syntax: ${printParseErrorCode(e.error)}`,
    range: li.range(e.offset, e.offset + Math.max(1, e.length)),
  }));
  return { root: root ? convert(root, li, 0) : undefined, errors };
}
