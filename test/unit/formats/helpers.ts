/** Test helpers: fixture loading and the expected range of a substring, computed from the text itself. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TextRange } from '../../../shared/plan/types';

export const FIXTURES = resolve(__dirname, '../../fixtures/formats');

export function fixture(rel: string): { path: string; text: string } {
  const path = join(FIXTURES, rel);
  return { path, text: readFileSync(path, 'utf8') };
}

/** Range of the n-th occurrence of `needle` (zero-based lines and characters). */
export function rangeOf(text: string, needle: string, nth = 0): TextRange {
  let at = -1;
  for (let i = 0; i <= nth; i++) at = text.indexOf(needle, at + 1);
  if (at < 0) throw new Error(`"${needle}" not in text`);
  const pos = (o: number) => {
    const before = text.slice(0, o).split('\n');
    return { line: before.length - 1, character: before[before.length - 1]!.length };
  };
  return { start: pos(at), end: pos(at + needle.length) };
}

/** An in-memory workspace host for loadConfigGraph. */
export function memoryHost(files: Record<string, string>, root = '/ws') {
  return {
    root,
    readFile: (p: string) => files[p],
    exists: (p: string) => p in files,
    listDir: (p: string) => {
      const prefix = p.endsWith('/') ? p : p + '/';
      const names = new Set<string>();
      for (const f of Object.keys(files)) if (f.startsWith(prefix)) names.add(f.slice(prefix.length).split('/')[0]!);
      return names.size ? [...names] : undefined;
    },
  };
}

/** Config-like files (json, yaml, toml, sh) below a folder, skipping dot-folders. */
export function configFiles(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    if (n.startsWith('.')) continue;
    const p = join(dir, n);
    if (statSync(p).isDirectory()) configFiles(p, out);
    else if (/\.(json|ya?ml|toml|sh)$/.test(n)) out.push(p);
  }
  return out;
}
