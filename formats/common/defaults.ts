/**
 * A config's `defaults:` list: the base files it is built on, merged as its loader merges them, so values the file
 * inherits are read from where they are written.
 * - NeMo-RL (`nemo_rl/utils/config.py` load_config_with_inheritance): `defaults: ../../sft.yaml` (or a list of
 *   paths) relative to the file; the bases are merged in order and the file on top.
 * - Hydra (verl, NeMo, ROLL; hydra.cc "The Defaults List"): `- name` (a config next to the file), `- group: option`
 *   (`group/option.yaml`, placed at the package `group`), `- group@pkg: option` (placed at `pkg`; `_here_` the
 *   file's own package, `_global_` the root), `optional` / `override` prefixes, `_self_` (where the file itself
 *   is merged; at the end when absent), a `# @package _global_` header in the base. Options that are null are
 *   skipped.
 * Maps merge key by key, anything else is replaced (OmegaConf.merge). Nodes from a base keep their own file
 * (`KNode.uri`), so sources and hovers name it. A base that cannot be read is reported, and only what was read counts.
 */
import type { SourceReader } from '../megatron/script';
import { LineIndex } from './text';
import type { KEntry, KNode } from './tree';
import { yamlTree } from './yamlTree';

/** Nested `defaults:` followed (a base of a base …) before giving up. */
const MAX_NESTING = 4;
/** Base files merged into one config at most (all levels). */
const MAX_BASES = 32;

export interface Merged {
  readonly root: KNode | undefined;
  /** Bases read, by the path the reader returned. */
  readonly read: string[];
  /** Bases named but not found, as written. */
  readonly missing: string[];
}

interface Base { readonly target: string; readonly pkg: string[] | 'here' }

const dirOf = (p: string) => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');
const withExt = (t: string) => (/\.ya?ml$/i.test(t) ? t : `${t}.yaml`);

/** One string item: `name`, `path.yaml`, `path@pkg` (ROLL: `../config/envs@_here_`). */
function fromString(text: string): Base | undefined {
  const t = text.trim();
  if (!t || t === '_self_') return undefined;
  const [path, pkg] = t.split('@') as [string, string | undefined];
  return { target: withExt(path.replace(/^\//, '')), pkg: pkg === undefined || pkg === '_here_' ? 'here' : pkg === '_global_' ? [] : pkg.split('.') };
}

/** One `group[@pkg]: option` item (with `optional` / `override` prefixes). */
function fromGroup(key: string, option: KNode): Base[] {
  const k = key.trim().replace(/^(optional|override)\s+/, '').replace(/^(optional|override)\s+/, '');
  const [group, pkg] = k.split('@') as [string, string | undefined];
  const names = option.kind === 'list' ? (option.items ?? []).map((n) => n.value) : [option.value];
  const place = pkg === undefined ? group.replace(/^\//, '').split('/') : pkg === '_here_' ? 'here' : pkg === '_global_' ? [] : pkg.split('.');
  return names.filter((n): n is string | number => typeof n === 'string' || typeof n === 'number').map((n) => ({ target: withExt(`${group.replace(/^\//, '')}/${n}`), pkg: place }));
}

/** The bases a `defaults` value names, and where the file itself goes among them (`_self_`). */
function listOf(v: KNode): { bases: Base[]; self: number } {
  if (v.kind === 'scalar') { const b = typeof v.value === 'string' ? fromString(v.value) : undefined; return { bases: b ? [b] : [], self: 1 }; }
  const bases: Base[] = [];
  let self = -1;
  for (const item of v.kind === 'list' ? v.items ?? [] : []) {
    if (item.kind === 'scalar' && item.value === '_self_') { self = bases.length; continue; }
    if (item.kind === 'scalar' && typeof item.value === 'string') { const b = fromString(item.value); if (b) bases.push(b); continue; }
    if (item.kind === 'map') for (const e of item.entries ?? []) if (e.value.kind !== 'scalar' || (e.value.value !== null && e.value.value !== '???')) bases.push(...fromGroup(e.key, e.value));
  }
  return { bases, self: self < 0 ? bases.length : self };
}

/** Marks every node of a base's tree with the file it came from. */
function tag(n: KNode, uri: string): KNode {
  if (n.uri) return n;
  if (n.kind === 'map') return { ...n, uri, entries: (n.entries ?? []).map((e) => ({ ...e, value: tag(e.value, uri) })) };
  if (n.kind === 'list') return { ...n, uri, items: (n.items ?? []).map((i) => tag(i, uri)) };
  return { ...n, uri };
}

/** OmegaConf.merge of two nodes: maps key by key (the later wins), anything else replaced. */
export function mergeNodes(a: KNode | undefined, b: KNode | undefined): KNode | undefined {
  if (!a) return b;
  if (!b) return a;
  if (a.kind !== 'map' || b.kind !== 'map') return b;
  const entries: KEntry[] = [...(a.entries ?? [])];
  for (const e of b.entries ?? []) {
    const i = entries.findIndex((x) => x.key === e.key);
    if (i < 0) entries.push(e);
    else entries[i] = { ...e, value: mergeNodes(entries[i]!.value, e.value)! };
  }
  return { ...b, entries };
}

/** A node placed under the package path `pkg` (maps around it, with the node's ranges). */
function placeAt(node: KNode, pkg: readonly string[]): KNode {
  return pkg.reduceRight<KNode>((inner, key) => ({ kind: 'map', range: node.range, uri: node.uri, entries: [{ key, keyRange: node.range, value: inner }] }), node);
}

/** `# @package x` in a base overrides where its items go. */
function headerPackage(text: string): string[] | undefined {
  const m = /^#\s*@package\s+(\S+)/m.exec(text.slice(0, 2000));
  if (!m) return undefined;
  return m[1] === '_global_' ? [] : m[1]!.split('.');
}

/**
 * `root` with the bases its `defaults:` names merged in (see the module comment). `dir` is the folder of the file
 * (absolute, or '' for the document itself, whose folder the reader knows).
 */
export function mergeDefaults(root: KNode | undefined, readSource: SourceReader | undefined, dir = '', depth = 0, seen = new Set<string>(), budget = { left: MAX_BASES }): Merged {
  const out: Merged = { root, read: [], missing: [] };
  const d = root?.kind === 'map' ? (root.entries ?? []).find((e) => e.key === 'defaults') : undefined;
  if (!root || !d || !readSource || depth >= MAX_NESTING) return out;
  const { bases, self } = listOf(d.value);
  if (!bases.length) return out;
  let merged: KNode | undefined;
  bases.forEach((b, i) => {
    if (i === self) merged = mergeNodes(merged, root);
    if (budget.left-- <= 0) return;
    const src = readSource(b.target, dir);
    if (!src || seen.has(src.uri)) { if (!src) out.missing.push(b.target); return; }
    const parsed = yamlTree(src.text, new LineIndex(src.text)).root;
    const inner = mergeDefaults(parsed, readSource, dirOf(src.uri), depth + 1, new Set([...seen, src.uri]), budget);
    out.read.push(src.uri, ...inner.read);
    out.missing.push(...inner.missing);
    if (!inner.root) return;
    const pkg = headerPackage(src.text) ?? (b.pkg === 'here' ? [] : b.pkg);
    merged = mergeNodes(merged, placeAt(tag(inner.root, src.uri), pkg));
  });
  if (self >= bases.length) merged = mergeNodes(merged, root);
  // The merged root is the document's own map (its range and file), whichever part was merged last.
  return { ...out, root: merged ? { ...merged, range: root.range, uri: root.uri } : root };
}
