/**
 * Incremental re-parsing of shell scripts: the last tree per document is kept, the changed span is found by
 * comparing the old and new text from both ends, and tree-sitter re-parses only what changed.
 */
import type { Parser, Point, Tree } from 'web-tree-sitter';

/** How a document's text came from its previous text: one replaced span, and where the syntax changed. */
export interface TextChange {
  /** The previous text. */
  readonly from: string;
  /** Start of the replaced span (the same in both texts). */
  readonly start: number;
  /** End of the replaced span in the previous text. */
  readonly oldEnd: number;
  /** End of the replacement in the new text. */
  readonly newEnd: number;
  /** Hull of the replacement and of every range whose syntax changed, in the new text. */
  readonly dirtyStart: number;
  readonly dirtyEnd: number;
}

interface Entry { text: string; tree: Tree; change?: TextChange }
const cache = new Map<string, Entry>();
const MAX = 16;
/**
 * Parse steps allowed per character (tree-sitter reports progress about once per 100 characters of an ordinary
 * script, measured on 1 KB to 2 MB scripts): a parse that needs several times more is cancelled. A step budget, not
 * a clock, so a script gets the same result on a busy machine as on an idle one.
 */
const STEPS_PER_CHAR = 1 / 25;
const MIN_STEPS = 1000;

/** Row and column of `index`, counting from `from` (a known point at offset `fromIndex`). */
function point(text: string, index: number, from: Point = { row: 0, column: 0 }, fromIndex = 0): Point {
  let row = from.row;
  let lineStart = fromIndex - from.column;
  for (let i = text.indexOf('\n', fromIndex); i >= 0 && i < index; i = text.indexOf('\n', i + 1)) { row++; lineStart = i + 1; }
  return { row, column: index - lineStart };
}

/** Length of the common suffix of `a` and `b` that does not reach into their first `floor` characters. */
function commonSuffix(a: string, b: string, floor: number): number {
  const max = Math.min(a.length, b.length) - floor;
  let n = 0;
  for (const step of [4096, 256, 16]) while (n + step <= max && a.slice(a.length - n - step, a.length - n) === b.slice(b.length - n - step, b.length - n)) n += step;
  while (n < max && a.charCodeAt(a.length - n - 1) === b.charCodeAt(b.length - n - 1)) n++;
  return n;
}

/** Length of the common prefix of `a` and `b`, compared in blocks first. */
function commonPrefix(a: string, b: string): number {
  const min = Math.min(a.length, b.length);
  let i = 0;
  for (const step of [4096, 256, 16]) while (i + step <= min && a.slice(i, i + step) === b.slice(i, i + step)) i += step;
  while (i < min && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Parses `text`, reusing the previous tree of `uri` when there is one. The returned tree stays owned by the cache. */
export function parseCached(parser: Parser, uri: string, text: string): Tree | null {
  const old = cache.get(uri);
  if (old && old.text === text) return old.tree;
  let prev: Tree | null = null;
  let start = 0;
  let ea = 0;
  let eb = 0;
  if (old) {
    const a = old.text;
    start = commonPrefix(a, text);
    const suffix = commonSuffix(a, text, start);
    ea = a.length - suffix;
    eb = text.length - suffix;
    const sp = point(a, start);
    prev = old.tree.copy();
    prev.edit({ startIndex: start, oldEndIndex: ea, newEndIndex: eb, startPosition: sp, oldEndPosition: point(a, ea, sp, start), newEndPosition: point(text, eb, sp, start) });
  }
  let steps = MIN_STEPS + text.length * STEPS_PER_CHAR;
  const tree = parser.parse(text, prev, { progressCallback: () => --steps < 0 });
  let change: TextChange | undefined;
  if (prev && tree && old) {
    let dirtyStart = start;
    let dirtyEnd = eb;
    for (const r of prev.getChangedRanges(tree)) { dirtyStart = Math.min(dirtyStart, r.startIndex); dirtyEnd = Math.max(dirtyEnd, r.endIndex); }
    change = { from: old.text, start, oldEnd: ea, newEnd: eb, dirtyStart, dirtyEnd };
  }
  prev?.delete();
  parser.reset();
  if (!tree) return null;
  old?.tree.delete();
  cache.delete(uri);
  cache.set(uri, { text, tree, change });
  if (cache.size > MAX) {
    const [k, e] = cache.entries().next().value as [string, Entry];
    e.tree.delete();
    cache.delete(k);
  }
  return tree;
}

/** The change that produced the cached `text` of `uri` from its previous text, when it was parsed incrementally. */
export function lastChange(uri: string, text: string): TextChange | undefined {
  const e = cache.get(uri);
  return e && e.text === text ? e.change : undefined;
}
