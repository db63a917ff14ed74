/**
 * Table-driven readers: a dialect's keys (YAML paths, Hydra override paths or command-line flags) and the plan facts
 * they set live in a data file (data/formats/dialects/*.json); this module applies such a table to whatever the
 * reader found. Keys that look like layout but are not (a rollout engine's TP, an evaluation-only block) are listed
 * with `"ignore"` so hovers can say why they are not read.
 */
import type { FactValue } from '../../shared/plan/facts';
import { isPlanPath } from '../../shared/plan/paths';
import type { TextRange } from '../../shared/plan/types';
import { optimizerOf, precisionOf } from './maps';
import type { FactSink, Loc } from './sink';
import { isUnresolved, readPagedOptimizer, unmodelledOptimizer } from './read';
import { toBool, toNumber } from './text';
import { at, entry, type KEntry, type KNode } from './tree';
import { own } from '../../shared/lookup';

/** How one key is read. */
export interface DialectKey {
  /** Plan path the key sets (a PlanPath; checked when the table is applied). */
  readonly plan?: string;
  /**
   * int / num: a number (int: whole, ≥ 1 unless `min`); bool: true/false (a bare flag is true), `value` when true
   * and `off` when false; precision / optimizer: a framework word; map: `map[value]`; str: the text; preset: a model
   * id or path (also a model reference); sum / product: of the keys in `of` (fallback only).
   */
  readonly type: 'int' | 'num' | 'bool' | 'precision' | 'optimizer' | 'map' | 'str' | 'preset' | 'sum' | 'product';
  readonly min?: number;
  readonly value?: FactValue;
  readonly off?: FactValue;
  readonly map?: Readonly<Record<string, FactValue>>;
  readonly of?: readonly string[];
  /** Values the framework takes for keys of `of` the file does not write (verl rollout.n 1); the first must be written. */
  readonly defaults?: Readonly<Record<string, number>>;
  /** Further facts set when this key is read (e.g. the sharding style with a ZeRO stage). */
  readonly also?: Readonly<Record<string, FactValue>>;
  /** Only set the plan path when no other key set it (derived values such as prompt + response length). */
  readonly fallback?: boolean;
  /** Why a look-alike key is not read (shown by hovers; nothing is set). */
  readonly ignore?: string;
  readonly description?: string;
}

export interface DialectTable {
  readonly keys: Readonly<Record<string, DialectKey>>;
  /** Alternative spellings: alias → key. */
  readonly aliases?: Readonly<Record<string, string>>;
}

/** A value found for a key: its text (undefined for a bare flag) and where it was written. */
export interface Found {
  readonly value?: string | number | boolean | null;
  readonly keyRange?: TextRange;
  readonly valueRange?: TextRange;
  /** The value still holds a variable or placeholder. */
  readonly unresolved?: boolean;
  /** File the value was written in, when not the document (a sourced script). */
  readonly uri?: string;
}

/** The table's canonical key for a spelling (aliases; `-` and `_` are the same in flags). */
export function canonical(table: DialectTable, key: string): string | undefined {
  // Own properties only: a key such as "constructor" in a script is unknown, not Object.prototype's member.
  if (own(table.keys, key)) return key;
  const alias = own(table.aliases, key);
  if (alias) return alias;
  if (key.startsWith('--')) {
    const u = '--' + key.slice(2).replace(/-/g, '_');
    if (own(table.keys, u)) return u;
    const a = own(table.aliases, u);
    if (a) return a;
  }
  return undefined;
}

function scalar(spec: DialectKey, v: Found['value']): FactValue | undefined {
  const text = v === null || v === undefined ? undefined : String(v).trim().replace(/^['"]|['"]$/g, '');
  switch (spec.type) {
    case 'int': case 'num': {
      const n = toNumber(text);
      if (n === undefined || (spec.type === 'int' && !Number.isInteger(n)) || n < (spec.min ?? 1)) return undefined;
      return n;
    }
    case 'bool': {
      const b = v === undefined ? true : toBool(text);
      if (b === undefined) return undefined;
      return b ? (spec.value ?? true) : spec.off;
    }
    case 'precision': return text === undefined ? undefined : precisionOf(text);
    case 'optimizer': return text === undefined ? undefined : optimizerOf(text);
    case 'map': return text === undefined ? undefined : spec.map?.[text] ?? spec.map?.[text.toLowerCase()];
    case 'str': case 'preset': return text || undefined;
    default: return undefined;
  }
}

/**
 * Applies `table` to the keys `get` finds (canonical key → value), in table order. Returns the canonical keys read,
 * so callers can tell which dialect a file speaks.
 */
export function applyTable(s: FactSink, table: DialectTable, get: (key: string) => Found | undefined): string[] {
  const read: string[] = [];
  const num = (k: string): number | undefined => { const f = get(k); return f && !f.unresolved ? toNumber(f.value) : undefined; };
  for (const [key, spec] of Object.entries(table.keys)) {
    const plan = spec.plan;
    if (spec.ignore || !plan || !isPlanPath(plan)) continue;
    if (spec.type === 'sum' || spec.type === 'product') {
      const of = spec.of ?? [];
      const parts = of.map((k, i) => num(k) ?? (i > 0 ? own(spec.defaults, k) : undefined));
      if (!parts.length || parts.some((n) => n === undefined) || (spec.fallback && s.has(plan))) continue;
      const n = spec.type === 'sum' ? parts.reduce((a, b) => a! + b!, 0)! : parts.reduce((a, b) => a! * b!, 1)!;
      const where = get(of[0]!);
      const named = of.map((k, i) => (num(k) === undefined ? `${k} (default ${parts[i]})` : k));
      s.derived(plan, n, `${named.join(spec.type === 'sum' ? ' + ' : ' × ')} = ${n}`, where ? { key: of[0]!, keyRange: where.keyRange, valueRange: where.valueRange, uri: where.uri } : undefined);
      read.push(key);
      continue;
    }
    const f = get(key);
    if (!f) continue;
    if (spec.fallback && s.has(plan)) continue;
    const loc: Loc = { key, keyRange: f.keyRange, valueRange: f.valueRange ?? f.keyRange, uri: f.uri };
    if (f.unresolved) { s.unresolved('value-unresolved', key, `${key} uses a variable or placeholder ShardLens could not evaluate.`, f.uri ? undefined : f.valueRange ?? f.keyRange, [plan]); continue; }
    const v = scalar(spec, f.value);
    if (v === undefined) {
      // An optimizer ShardLens does not model (`optimizer: lomo`) is said at its value, never taken silently as the default.
      if (spec.type === 'optimizer' && typeof f.value === 'string' && f.value.trim()) unmodelledOptimizer(s, key, f.value, f.uri ? undefined : f.valueRange ?? f.keyRange);
      // Where the table states the least value a key takes, a value that is no number, a fraction or below it is said at
      // its place, not dropped silently (keys without one may use sentinels: HF's max_steps -1, a LoRA rank 0 for off).
      if ((spec.type === 'int' || spec.type === 'num') && spec.min !== undefined && String(f.value).trim()) {
        const least = spec.min;
        s.diag('invalid-value', 'warning', `${key} expects ${spec.type === 'int' ? 'a whole number' : 'a number'} of at least ${least} (got "${String(f.value)}"); not read.`, f.uri ? undefined : f.valueRange ?? f.keyRange, [plan]);
      }
      continue;
    }
    s.explicit(plan, v, loc);
    if (spec.type === 'optimizer' && typeof f.value === 'string') readPagedOptimizer(s, f.value, loc);
    if (spec.type === 'preset' && typeof v === 'string') s.ref('model', v, f.uri ? undefined : f.valueRange);
    for (const [p, x] of Object.entries(spec.also ?? {})) if (isPlanPath(p)) s.explicit(p, x, loc);
    read.push(key);
  }
  return read;
}

/** A tree entry as a found value (empty values are absent; `${…}` and `???` are unresolved). */
export function found(e: KEntry | undefined): Found | undefined {
  if (!e || e.value.kind !== 'scalar' || e.value.value === null || e.value.value === undefined || e.value.value === '') return undefined;
  const v = e.value.value;
  return { value: typeof v === 'boolean' || typeof v === 'number' ? v : String(v), keyRange: e.keyRange, valueRange: e.value.range, unresolved: isUnresolved(v), uri: e.value.uri };
}

/** Looks `path` up as nested keys, then as a literal dotted key in `flat` (a map of dotted overrides). */
export function getter(root: KNode, flat?: KNode): (path: string) => Found | undefined {
  return (path) => found(at(root, path)) ?? (flat ? found(entry(flat, path)) : undefined);
}
