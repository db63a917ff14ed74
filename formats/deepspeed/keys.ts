/** The DeepSpeed key table (formats/deepspeed/keys.json) with alias and section lookups. */
import table from './keys.json';
import { lookupTable } from '../../shared/lookup';
import type { PlanPath } from '../../shared/plan/paths';

export interface DsKey {
  readonly type: string;
  readonly default?: unknown;
  readonly description: string;
  readonly aliases?: readonly string[];
  readonly auto?: string;
  readonly deprecated?: string;
  readonly plan?: PlanPath;
  readonly enum?: readonly (string | number)[];
  readonly mc?: string;
  /** Smallest value DeepSpeed accepts. */
  readonly minimum?: number;
  /** How the reader maps the value: a named mapper, or "code" for keys read by hand. */
  readonly read?: 'device' | 'optimizer' | 'fp32' | 'code';
}

export const DS_KEYS: Readonly<Record<string, DsKey>> = lookupTable(table.keys as Record<string, DsKey>);
const STRICT = new Set<string>(table.strictSections);

/** Canonical dotted key for a written one: "zero_optimization.max_live_parameters" → "zero_optimization.stage3_max_live_parameters". */
const ALIAS: ReadonlyMap<string, string> = (() => {
  const m = new Map<string, string>();
  for (const [k, v] of Object.entries(DS_KEYS)) {
    const parent = k.includes('.') ? k.slice(0, k.lastIndexOf('.') + 1) : '';
    for (const a of v.aliases ?? []) m.set(parent + a, k);
  }
  return m;
})();

export function canonicalDsKey(path: string): string {
  return ALIAS.get(path) ?? path;
}

/** Sections DeepSpeed validates with pydantic `extra="forbid"`. */
export function isStrictDsSection(path: string): boolean {
  return STRICT.has(path);
}

/** Keys known directly below a section ("" for the top level). */
export function dsChildren(section: string): string[] {
  const prefix = section ? section + '.' : '';
  return Object.keys(DS_KEYS).filter((k) => k.startsWith(prefix) && !k.slice(prefix.length).includes('.')).map((k) => k.slice(prefix.length));
}

/** The DeepSpeed source file that defines a section's defaults, for "default" details. */
export function dsSourceFile(path: string): string {
  if (path.startsWith('zero_optimization.offload')) return 'deepspeed/runtime/zero/offload_config.py';
  if (path.startsWith('zero_optimization')) return 'deepspeed/runtime/zero/config.py';
  if (path.startsWith('fp16') || path.startsWith('bf16')) return 'deepspeed/runtime/precision_config.py';
  return 'deepspeed/runtime/config.py';
}
