/** The format key tables (formats/<name>/keys.json: keys, types, defaults, docs, plan paths), for completion, hover and edits. */
import type { FormatId } from '../shared/plan/facts';
import type { PlanPath } from '../shared/plan/paths';
import type { KeyTable } from './common/keyDocs';
import { FORMATS } from './registry';

export type { KeyDoc, KeyTable } from './common/keyDocs';

/** The key table of a format, if one is bundled. */
export function keyTable(format: FormatId | null): KeyTable | undefined {
  return format ? FORMATS[format]?.keys : undefined;
}

/** The dotted key of a format that sets a plan path (first match), e.g. deepspeed + training.microBatch. */
export function keyForPath(format: FormatId | null, path: PlanPath): string | undefined {
  const t = keyTable(format);
  if (!t) return undefined;
  for (const [k, d] of Object.entries(t.keys)) if (d.plan === path && !d.deprecated) return k;
  return undefined;
}
