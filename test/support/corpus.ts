/**
 * The team corpus of real config files (`shared/corpus` next to the checkout; its SOURCES.md lists every file's origin,
 * commit and licence). Suites that read it run when it is there; elsewhere they are skipped with the reason, except
 * under CI=true, where a missing corpus fails the suite instead of silently shrinking it.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Where the corpus may be: $SHARDLENS_CORPUS, next to the checkout (main), next to the worktrees, the team folder. */
const CANDIDATES = [process.env.SHARDLENS_CORPUS, resolve(__dirname, '../../../shared/corpus'), resolve(__dirname, '../../../../shared/corpus'), '/work/shared/corpus'];

/** The corpus folder, or undefined when it is not on this machine. */
export const CORPUS: string | undefined = CANDIDATES.find((p): p is string => !!p && existsSync(join(p, 'SOURCES.md')));

/** `skip` option for a suite that needs the corpus: false when it is present or under CI (then `corpusPresent` fails). */
export const corpusSkip: string | false = CORPUS || process.env.CI === 'true' ? false : `corpus not found (looked in ${CANDIDATES.filter(Boolean).join(', ')}); set SHARDLENS_CORPUS`;

/** Throws (failing the test) when the corpus is missing: a CI run must have it. */
export function corpusPresent(): string {
  if (!CORPUS) throw new Error(`The corpus of real configs is missing (looked in ${CANDIDATES.filter(Boolean).join(', ')}). CI must provide it; set SHARDLENS_CORPUS.`);
  return CORPUS;
}

/** Every corpus file as [folder, name, absolute path] (SOURCES.md excluded); empty when the corpus is missing. */
export function corpusFiles(): [string, string, string][] {
  if (!CORPUS) return [];
  return readdirSync(CORPUS).filter((d) => statSync(join(CORPUS, d)).isDirectory())
    .flatMap((d) => readdirSync(join(CORPUS, d)).map((n): [string, string, string] => [d, n, join(CORPUS, d, n)]));
}
