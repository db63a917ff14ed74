/**
 * Incremental re-parsing of shell scripts: the last tree per document is kept, the changed span is found by
 * comparing the old and new text from both ends, and tree-sitter re-parses only what changed.
 */
import type { Parser, Point, Tree } from 'web-tree-sitter';

interface Entry { text: string; tree: Tree }
const cache = new Map<string, Entry>();
const MAX = 16;
/** A parse that runs longer than this is cancelled (never hang on pathological input). */
const PARSE_LIMIT_MS = 1000;

function point(text: string, index: number): Point {
  let row = 0;
  let col = 0;
  for (let i = 0; i < index; i++) {
    if (text.charCodeAt(i) === 10) { row++; col = 0; } else col++;
  }
  return { row, column: col };
}

/** Parses `text`, reusing the previous tree of `uri` when there is one. The returned tree stays owned by the cache. */
export function parseCached(parser: Parser, uri: string, text: string): Tree | null {
  const old = cache.get(uri);
  if (old && old.text === text) return old.tree;
  let prev: Tree | null = null;
  if (old) {
    const a = old.text;
    let start = 0;
    const min = Math.min(a.length, text.length);
    while (start < min && a.charCodeAt(start) === text.charCodeAt(start)) start++;
    let ea = a.length;
    let eb = text.length;
    while (ea > start && eb > start && a.charCodeAt(ea - 1) === text.charCodeAt(eb - 1)) { ea--; eb--; }
    prev = old.tree.copy();
    prev.edit({ startIndex: start, oldEndIndex: ea, newEndIndex: eb, startPosition: point(a, start), oldEndPosition: point(a, ea), newEndPosition: point(text, eb) });
  }
  const t0 = Date.now();
  const tree = parser.parse(text, prev, { progressCallback: () => Date.now() - t0 > PARSE_LIMIT_MS });
  prev?.delete();
  parser.reset();
  if (!tree) return null;
  old?.tree.delete();
  cache.delete(uri);
  cache.set(uri, { text, tree });
  if (cache.size > MAX) {
    const [k, e] = cache.entries().next().value as [string, Entry];
    e.tree.delete();
    cache.delete(k);
  }
  return tree;
}
