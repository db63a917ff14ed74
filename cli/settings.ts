/**
 * The workspace's `shardlens.*` settings for the CLI, read from `.vscode/settings.json` the way the editor would
 * send them, so the CLI and the editor show the same numbers. The file is untrusted input: it is read through the
 * bounded reader, parsed as a syntax tree (no object is built from its keys), and only keys the extension's manifest
 * declares are taken, each checked against its declared type, range and size. Values land in objects without a
 * prototype, on paths taken from the manifest, never from the file.
 */
import { parseTree, type Node } from 'jsonc-parser';
import manifest from '../package.json';
import { normalizeSettings } from '../server/settings';
import type { ShardLensSettings } from '../shared/protocol';
import { readTextFile } from '../server/io/read';
import type { ReadRoots } from '../server/io/roots';

interface SettingSchema {
  readonly type: string;
  readonly enum?: readonly string[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly items?: { readonly enum?: readonly string[] };
}

/** The declared settings (contributes.configuration of package.json), by full key. */
const SCHEMA: ReadonlyMap<string, SettingSchema> = new Map(Object.entries(manifest.contributes.configuration.properties as Record<string, SettingSchema>));

/** Largest settings file read, and the largest strings, lists and maps taken from it. */
const MAX_SETTINGS_BYTES = 256 * 1024;
const MAX_STRING = 4096;
const MAX_ITEMS = 64;
/** Keys an object setting (calibration) may not use: they would reach a prototype if spread into a plain object. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export interface WorkspaceSettings {
  readonly settings: ShardLensSettings;
  /** Where they came from, if a file was read. */
  readonly file?: string;
  /** Keys ignored and why (shown on stderr so a hostile or mistyped setting is visible). */
  readonly ignored: readonly string[];
}

/** Parses settings text against the schema into the nested shape `normalizeSettings` takes. */
export function parseSettingsText(text: string): { raw: Record<string, unknown>; ignored: string[] } {
  const ignored: string[] = [];
  const raw = Object.create(null) as Record<string, unknown>;
  const root = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  if (!root || root.type !== 'object') return { raw, ignored: root ? ['the file is not a JSON object'] : [] };
  for (const prop of root.children ?? []) {
    const [keyNode, valueNode] = prop.children ?? [];
    const key = keyNode?.value;
    if (typeof key !== 'string' || !key.startsWith('shardlens.') || !valueNode) continue;
    const schema = SCHEMA.get(key);
    if (!schema) { ignored.push(`${key.slice(0, 80)}: not a ShardLens setting`); continue; }
    const value = valueOf(valueNode, schema);
    if (value === undefined) { ignored.push(`${key}: not a valid ${schema.enum ? `one of ${schema.enum.join(', ')}` : schema.type}`); continue; }
    // The path comes from the manifest's key, so it can only name a declared setting.
    const parts = key.slice('shardlens.'.length).split('.');
    let o = raw;
    for (const part of parts.slice(0, -1)) {
      const next = (Object.hasOwn(o, part) ? o[part] : undefined) as Record<string, unknown> | undefined;
      o = next ?? (o[part] = Object.create(null) as Record<string, unknown>) as Record<string, unknown>;
    }
    o[parts[parts.length - 1]] = value;
  }
  return { raw, ignored };
}

/** A value of the declared type, range and size, or undefined. */
function valueOf(n: Node, s: SettingSchema): unknown {
  switch (s.type) {
    case 'string':
      if (n.type !== 'string' || (n.value as string).length > MAX_STRING) return undefined;
      return s.enum && !s.enum.includes(n.value as string) ? undefined : n.value;
    case 'integer':
    case 'number': {
      const v = n.value as number;
      if (n.type !== 'number' || !Number.isFinite(v) || (s.type === 'integer' && !Number.isInteger(v))) return undefined;
      return (s.minimum !== undefined && v < s.minimum) || (s.maximum !== undefined && v > s.maximum) ? undefined : v;
    }
    case 'array': {
      if (n.type !== 'array' || (n.children?.length ?? 0) > MAX_ITEMS) return undefined;
      const items = (n.children ?? []).map((c) => (c.type === 'string' ? (c.value as string) : undefined));
      return items.every((x): x is string => x !== undefined && (!s.items?.enum || s.items.enum.includes(x))) ? [...new Set(items)] : undefined;
    }
    case 'object':
      return objectOf(n, 0);
    default:
      return undefined;
  }
}

/** A small JSON object (calibration entries) copied into prototype-less objects, bounded in depth and size. */
function objectOf(n: Node, depth: number): Record<string, unknown> | undefined {
  if (n.type !== 'object' || depth > 3 || (n.children?.length ?? 0) > MAX_ITEMS) return undefined;
  const out = Object.create(null) as Record<string, unknown>;
  for (const prop of n.children ?? []) {
    const [k, v] = prop.children ?? [];
    const key = k?.value;
    if (typeof key !== 'string' || key.length > 256 || FORBIDDEN_KEYS.has(key) || !v) continue;
    if (v.type === 'object') {
      const inner = objectOf(v, depth + 1);
      if (inner) out[key] = inner;
    } else if (v.type === 'array') {
      out[key] = (v.children ?? []).slice(0, MAX_ITEMS).filter((c) => c.type === 'string').map((c) => String(c.value).slice(0, MAX_STRING));
    } else if (v.type === 'number' || v.type === 'boolean' || (v.type === 'string' && String(v.value).length <= MAX_STRING)) {
      out[key] = v.value;
    }
  }
  return out;
}

/** The settings of the workspace folder `root` (its `.vscode/settings.json`, read only inside `roots`). */
export function workspaceSettings(root: string, roots: ReadRoots): WorkspaceSettings {
  const file = `${root}/.vscode/settings.json`;
  const read = readTextFile(file, { roots, maxBytes: MAX_SETTINGS_BYTES });
  if (!read.ok) {
    // No settings file: the editor's defaults apply. Any other refusal is said, and the defaults apply too.
    return { settings: normalizeSettings(undefined), ignored: read.reason === 'missing' ? [] : [`${read.detail}; using the defaults`] };
  }
  const { raw, ignored } = parseSettingsText(read.text);
  return { settings: normalizeSettings(raw), file, ignored };
}
