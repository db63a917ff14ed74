/**
 * The top-level statements of each open script, as plain copies kept between edits. After an incremental parse only
 * the statements around the edit (and wherever tree-sitter reports changed syntax) are read from the tree; the rest
 * are the previous copies, moved by the edit's length. Without that information every top-level node is listed and
 * looked up by its text.
 */
import type { Node, Tree } from 'web-tree-sitter';
import { copy, isInert, type SNode, type Statement } from './plainTree';
import type { TextChange } from './treeCache';

/**
 * `err`: the statement holds a syntax error or a heredoc, whose parse can depend on context and history (error
 * recovery, an unterminated heredoc), so it is not reused by its text alone.
 */
interface Cached { readonly node: SNode; readonly inert: boolean; readonly err: boolean }
/** A top-level node: its start and its key (its text up to the next top-level node). */
interface Entry { readonly s: number; readonly key: string; readonly hit: Cached }
/** `err`: the tree had a syntax error (its changed ranges are then not trusted for the next edit). */
interface DocCache { readonly text: string; readonly list: readonly Entry[]; readonly end: number; readonly err: boolean }
const docs = new Map<string, DocCache>();
const MAX_DOCS = 16;

/**
 * The copy of top-level `node` (at `s`, with text `key`). A previous copy of the same text is reused; in a tree with
 * syntax errors only when the node is of the same kind and error-free itself (error recovery depends on context).
 */
function lookup(key: string, node: Node, s: number, known: ReadonlyMap<string, Cached>, check: boolean): Cached {
  const hit = known.get(key);
  if (hit && (!check || (!node.hasError && node.type === hit.node.type))) return hit;
  const copied = copy(node, s, 1);
  return { node: copied, inert: isInert(copied, key), err: node.hasError || holds(copied, 'heredoc_redirect') };
}

function holds(n: SNode, type: string): boolean {
  return n.type === type || n.kids.some((k) => holds(k, type));
}

/** Entries for the top-level nodes `kids` (with their starts), the last one's key ending at `end`. */
function entries(kids: readonly Node[], starts: readonly number[], end: number, text: string, known: ReadonlyMap<string, Cached>, check: boolean): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < kids.length; i++) {
    const s = starts[i]!;
    const key = text.slice(s, Math.max(s, i + 1 < kids.length ? starts[i + 1]! : end));
    out.push({ s, key, hit: lookup(key, kids[i]!, s, known, check) });
  }
  return out;
}

/** Previous copies by text; statements with syntax errors are not reused by text (only when tree-sitter kept them). */
function knownOf(list: readonly Entry[]): Map<string, Cached> {
  const m = new Map<string, Cached>();
  for (const e of list) if (!e.hit.err) m.set(e.key, e.hit);
  return m;
}

/** Every top-level node of `tree`, looked up by text among the previous copies. */
function full(tree: Tree, text: string, old: DocCache | undefined): DocCache {
  const root = tree.rootNode;
  const kids = root.children.filter((k): k is Node => !!k);
  const end = root.endIndex;
  const err = root.hasError;
  return { text, end, err, list: entries(kids, kids.map((k) => k.startIndex), end, text, knownOf(old?.list ?? []), err) };
}

/**
 * The previous list with the dirty part re-read: entries wholly before the dirty span keep their place, entries
 * wholly after the edit move by its length, the nodes in between are read from the tree. Undefined when the tree's
 * node boundaries do not line up with the kept entries (then the caller lists everything).
 */
function patch(tree: Tree, text: string, old: DocCache, ch: TextChange): DocCache | undefined {
  const delta = ch.newEnd - ch.oldEnd;
  const keyEnd = (i: number) => (i + 1 < old.list.length ? old.list[i + 1]!.s : old.end);
  let head = 0;
  while (head < old.list.length && keyEnd(head) < ch.dirtyStart) head++;
  let tail = old.list.length;
  while (tail > head && old.list[tail - 1]!.s >= ch.oldEnd && old.list[tail - 1]!.s + delta > ch.dirtyEnd) tail--;
  const from = head > 0 ? keyEnd(head - 1) : 0;
  const to = tail < old.list.length ? old.list[tail]!.s + delta : undefined;
  const root = tree.rootNode;
  const end = root.endIndex;
  const kids: Node[] = [];
  const starts: number[] = [];
  // Start at the last kept node (or the first node), so zero-width nodes at `from` are not skipped. Its own start
  // is asked for: tree-sitter can answer null for an offset in the gap before a node.
  let n = head > 0 ? root.firstChildForIndex(old.list[head - 1]!.s) : root.firstChild;
  if (!n) return undefined;
  let reached = to === undefined;
  for (; n; n = n.nextSibling) {
    const s = n.startIndex;
    if (to !== undefined && s >= to) {
      if (s !== to) return undefined;
      reached = true;
      break;
    }
    if (s >= from) {
      kids.push(n);
      starts.push(s);
    } else if (s !== old.list[head - 1]?.s || n.endIndex > from) return undefined;
  }
  if (!reached) return undefined;
  const mid = entries(kids, starts, to ?? end, text, knownOf(old.list.slice(head, tail)), false);
  const moved = old.list.slice(tail).map((e) => ({ s: e.s + delta, key: e.key, hit: e.hit }));
  return { text, end, err: false, list: [...old.list.slice(0, head), ...mid, ...moved] };
}

/**
 * The named top-level statements of `tree` (the children of its root), copied into plain objects and reused between
 * calls for `uri`. `change` says how `text` came from the previous text of `uri` (treeCache.lastChange).
 */
export function statements(uri: string, tree: Tree, text: string, change?: TextChange): Statement[] {
  const root = tree.rootNode;
  if (root.type !== 'program') return [{ node: copy(root, root.startIndex, 0), base: root.startIndex, inert: false }];
  const old = docs.get(uri);
  // Only an edit between two trees without syntax errors is patched: error recovery can restructure text that
  // tree-sitter does not report as changed.
  const patchable = old && change && !old.err && change.from === old.text && !root.hasError;
  const doc = old && old.text === text ? old : (patchable && patch(tree, text, old, change)) || full(tree, text, old);
  docs.delete(uri);
  docs.set(uri, doc);
  if (docs.size > MAX_DOCS) docs.delete(docs.keys().next().value as string);
  const out: Statement[] = [];
  for (const e of doc.list) if (e.hit.node.named) out.push({ node: e.hit.node, base: e.s, inert: e.hit.inert });
  return out;
}
