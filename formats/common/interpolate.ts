/**
 * OmegaConf interpolations inside one config tree (NeMo, NeMo-RL, NeMo-Aligner, verl, EasyR1, llm-foundry, OLMo,
 * torchtune load their YAML with OmegaConf). A value that is exactly one interpolation is replaced by the node it
 * names, as OmegaConf resolves it (omegaconf docs, "Variable interpolation"):
 * - `${a.b}` is absolute, from the root of the config;
 * - `${.b}` is relative to the node that holds the key (a sibling), and each further dot goes one level up
 *   (`${..b}` is a sibling of the parent);
 * - a list item is named by its index (`${a.0}`);
 * - `${oc.select:path,default}` is the node at `path` (absolute or relative) when it exists, else the default
 *   (verl's configs write `${oc.select:actor_rollout_ref.actor.ppo_mini_batch_size,256}`).
 * The value keeps the range where it is used, so hints point at the interpolation. Resolvers (`${oc.env:X}`,
 * `${mul:…}`), text around an interpolation and references that lead nowhere stay as written.
 */
import type { KEntry, KNode } from './tree';

const WHOLE = /^\$\{(\.*)([A-Za-z_][\w-]*(?:\.[\w-]+)*)\}$/;
const SELECT = /^\$\{oc\.select:\s*(\.*[A-Za-z_][\w.-]*)\s*(?:,\s*([^{}]*?))?\s*\}$/;

/** A default written in `${oc.select:path,default}`, as OmegaConf's grammar reads a primitive. */
function literal(text: string): unknown {
  const t = text.trim();
  if (/^(null|~)?$/i.test(t)) return null;
  if (/^true$/i.test(t)) return true;
  if (/^false$/i.test(t)) return false;
  if (/^[+-]?(\d[\d_]*\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return Number(t.replace(/_/g, ''));
  return t.replace(/^(['"])(.*)\1$/, '$2');
}
/** Longest chain of interpolations followed (a → b → c …) before giving up, against cycles. */
const MAX_CHAIN = 8;
const MAX_DEPTH = 64;

/** The child of a map (last key wins) or list (by index) named by one path segment. */
function child(node: KNode | undefined, seg: string): KNode | undefined {
  if (!node) return undefined;
  if (node.kind === 'map') {
    let hit: KEntry | undefined;
    for (const e of node.entries ?? []) if (e.key === seg) hit = e;
    return hit?.value;
  }
  if (node.kind === 'list' && /^\d+$/.test(seg)) return node.items?.[Number(seg)];
  return undefined;
}

/** Follows `path` (dot-separated segments) from `node`. */
function follow(node: KNode | undefined, path: string): KNode | undefined {
  let cur = node;
  for (const seg of path.split('.')) cur = child(cur, seg);
  return cur;
}

/**
 * The node an interpolation names, from the containers that hold the value (`chain[0]` the root, the last one the
 * map or list the value sits in); interpolations it leads to are followed in turn.
 */
function target(text: string, chain: readonly KNode[], root: KNode, hops: number): KNode | undefined {
  const m = WHOLE.exec(text.trim());
  if (!m || hops > MAX_CHAIN) return undefined;
  const dots = m[1]!.length;
  // `${.x}` starts at the container of the key, each further dot one container up; `${x}` at the root.
  const start = dots === 0 ? root : chain[chain.length - dots];
  if (!start) return undefined;
  const fullPath = m[2]!;
  const hit = follow(start, fullPath);
  if (!hit) return undefined;
  if (hit.kind === 'scalar' && typeof hit.value === 'string' && WHOLE.test(hit.value.trim())) {
    // The target is itself an interpolation: resolve it where it is written.
    const segs = fullPath.split('.');
    const holder: KNode[] = [...(dots === 0 ? [root] : chain.slice(0, chain.length - dots + 1))];
    let cur: KNode | undefined = start;
    for (const seg of segs.slice(0, -1)) { cur = child(cur, seg); if (!cur) return undefined; holder.push(cur); }
    return target(hit.value, holder, root, hops + 1);
  }
  return hit;
}

function walk(node: KNode, chain: readonly KNode[], root: KNode, depth: number): KNode {
  if (depth > MAX_DEPTH) return node;
  if (node.kind === 'scalar') {
    if (typeof node.value !== 'string' || !node.value.includes('${')) return node;
    const sel = SELECT.exec(node.value.trim());
    if (sel) {
      const hit = target(`\${${sel[1]}}`, chain, root, 0);
      if (hit) return hit.kind === 'scalar' ? { ...node, value: hit.value } : hit;
      return sel[2] === undefined ? { ...node, value: null } : { ...node, value: literal(sel[2]) };
    }
    const t = target(node.value, chain, root, 0);
    if (!t) return node;
    // A scalar takes the value where it is used; a map or list is taken whole (its own ranges, its own file).
    return t.kind === 'scalar' ? { ...node, value: t.value } : t;
  }
  const inner = [...chain, node];
  if (node.kind === 'map') return { ...node, entries: (node.entries ?? []).map((e) => ({ ...e, value: walk(e.value, inner, root, depth + 1) })) };
  return { ...node, items: (node.items ?? []).map((n) => walk(n, inner, root, depth + 1)) };
}

/** The tree with every whole-value OmegaConf interpolation replaced by what it names (see the module comment). */
export function resolveInterpolations(root: KNode | undefined): KNode | undefined {
  if (!root || (root.kind !== 'map' && root.kind !== 'list')) return root;
  return walk(root, [], root, 0);
}
