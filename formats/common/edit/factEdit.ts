/**
 * The edit that writes a number over the value a launch script states for a plan path, where the reader found it
 * written in this script (shared by the launch-script rewriters: formats/launch/rewriter.ts, formats/launch/torchtitan.ts).
 */
import type { ConfigFacts } from '../../../shared/plan/facts';
import type { PlanPath } from '../../../shared/plan/paths';
import type { OffsetEdit } from './shellFlags';
import { lineStarts, offsetAt } from './text';

/**
 * `value` over a fact's written value (a number, or ms-swift's `zeroN` for the ZeRO stage); 'same' when it already is
 * that value; undefined when the script does not state it here as a literal (a computed value, another file's).
 */
export function replaceFactValue(text: string, facts: ConfigFacts, path: PlanPath, value: number): OffsetEdit | 'same' | undefined {
  const f = facts.facts[path];
  const r = f?.source.range;
  if (!f || !r || f.source.kind !== 'explicit' || (f.source.uri && f.source.uri !== facts.uri)) return undefined;
  if (f.value === value) return 'same';
  const starts = lineStarts(text);
  const from = offsetAt(starts, r.start);
  const to = offsetAt(starts, r.end);
  const written = text.slice(from, to);
  if (/^\d+$/.test(written)) return { from, to, text: String(value) };
  const zero = /^zero(\d)/.exec(written);
  if (zero && path === 'parallel.sharding.stage') return { from: from + 4, to: from + 5, text: String(value) };
  return undefined;
}
