/** Key documentation of a format (its keys.json): types, defaults, descriptions and the plan paths keys set. */
import { lookupTable } from '../../shared/lookup';
import { isPlanPath, type PlanPath } from '../../shared/plan/paths';

/** One documented key of a format. */
export interface KeyDoc {
  readonly type?: string;
  readonly default?: unknown;
  readonly auto?: string;
  readonly plan?: PlanPath;
  readonly enum?: readonly unknown[];
  readonly aliases?: readonly string[];
  readonly deprecated?: unknown;
  readonly description?: string;
}

export interface KeyTable {
  readonly keys: Readonly<Record<string, KeyDoc>>;
}

export function table(raw: unknown): KeyTable {
  const keys = (raw as { keys?: Record<string, KeyDoc> }).keys;
  return { keys: lookupTable(keys && typeof keys === 'object' ? keys : {}) };
}

/**
 * A launch dialect's table (formats/<dialect>/keys.json) as key docs: a look-alike key that is not read (a rollout
 * engine's TP) documents why; `strip` drops the leading dashes for YAML spellings of flags.
 */
export function dialect(raw: unknown, strip = false): KeyTable {
  const keys = (raw as { keys?: Record<string, { type?: string; plan?: string; description?: string; ignore?: string }> }).keys ?? {};
  const out: Record<string, KeyDoc> = {};
  for (const [k, d] of Object.entries(keys)) {
    if (strip && !k.startsWith('--')) continue;
    const plan = d.plan && isPlanPath(d.plan) ? d.plan : undefined;
    out[strip ? k.slice(2) : k] = { type: d.type, ...(plan ? { plan } : {}), description: d.ignore ? `Not read as a training setting: ${d.ignore}` : d.description };
  }
  return { keys: lookupTable(out) };
}
