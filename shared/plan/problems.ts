/**
 * Merging problems from the config resolver and the estimators: the same finding can be reported twice (the
 * resolver in the file's own terms, the core's validation in the plan's), and users should see it once.
 */
import type { Problem } from './types';

/** A problem code → a code that says the same thing in the file's terms; when both are present only the latter is kept. */
const SAME_AS: Readonly<Record<string, string>> = {
  'global-batch-mismatch': 'batch-identity',
  'world-size-mismatch': 'world-not-divisible',
  'ep-without-moe': 'ep-assumed-dense-model',
};

/**
 * Codes raised by both the resolver and the core's validation about overlapping inputs in different words (the world
 * size against DP·TP·PP·CP): one finding, the first wins.
 */
const ONE_PER_CODE: ReadonlySet<string> = new Set(['world-size-mismatch']);

/** Identity of a finding: its code and the inputs it is about. */
const keyOf = (p: Problem) => (ONE_PER_CODE.has(p.code) ? p.code : `${p.code}\u0000${[...p.paths].sort().join(',')}`);

/**
 * Problems of several sources in order, each finding once: the first of the same code about the same inputs wins,
 * and a generic code is dropped when its file-specific twin is present.
 */
export function mergeProblems(...lists: readonly (readonly Problem[])[]): Problem[] {
  const all = lists.flat();
  const codes = new Set(all.map((p) => p.code));
  const seen = new Set<string>();
  const messages = new Set<string>();
  return all.filter((p) => {
    const better = SAME_AS[p.code];
    if (better && codes.has(better)) return false;
    const k = keyOf(p);
    if (seen.has(k) || messages.has(p.message)) return false;
    seen.add(k);
    messages.add(p.message);
    return true;
  });
}
