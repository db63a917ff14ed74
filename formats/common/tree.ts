/**
 * A small format-neutral tree of keys and values with source ranges. JSON, YAML and TOML are converted into it,
 * so each format's reader walks the same shape.
 */
import type { TextRange } from '../../shared/plan/types';

export interface KEntry {
  readonly key: string;
  readonly keyRange: TextRange;
  readonly value: KNode;
}

export interface KNode {
  readonly kind: 'map' | 'list' | 'scalar';
  /** Scalar value (string, number, boolean or null); undefined for maps and lists. */
  readonly value?: unknown;
  readonly range: TextRange;
  readonly entries?: readonly KEntry[];
  readonly items?: readonly KNode[];
  /** File the node was written in when it is not the document (a base config merged through `defaults:`). */
  readonly uri?: string;
}

/** A syntax error with its range, from any of the converters. */
export interface SyntaxProblem {
  readonly message: string;
  readonly range: TextRange;
}

export interface ParsedTree {
  readonly root: KNode | undefined;
  readonly errors: readonly SyntaxProblem[];
}

/** The entry for a key in a map node (last one wins, as in every loader here). */
export function entry(node: KNode | undefined, key: string): KEntry | undefined {
  if (!node || node.kind !== 'map' || !node.entries) return undefined;
  let found: KEntry | undefined;
  for (const e of node.entries) if (e.key === key) found = e;
  return found;
}

/** Follows a dotted path of map keys ("a.b.c"). */
export function at(node: KNode | undefined, path: string): KEntry | undefined {
  const parts = path.split('.');
  let cur: KNode | undefined = node;
  let e: KEntry | undefined;
  for (const p of parts) {
    e = entry(cur, p);
    if (!e) return undefined;
    cur = e.value;
  }
  return e;
}

/** Plain JavaScript value of a node (maps become objects, lists arrays). */
export function plain(node: KNode | undefined, depth = 0): unknown {
  if (!node || depth > 64) return undefined;
  if (node.kind === 'scalar') return node.value;
  if (node.kind === 'list') return (node.items ?? []).map((n) => plain(n, depth + 1));
  // No prototype: a "__proto__" key is an ordinary key here, not a prototype swap.
  const o = Object.create(null) as Record<string, unknown>;
  for (const e of node.entries ?? []) o[e.key] = plain(e.value, depth + 1);
  return o;
}

/** Keys of a map node, in order. */
export function keys(node: KNode | undefined): string[] {
  return node?.kind === 'map' ? (node.entries ?? []).map((e) => e.key) : [];
}
