/**
 * Where reads may go: the workspace folders (real paths, symlinks resolved) and a few explicitly allowed roots such
 * as the Hugging Face cache. A path is inside a root when its real path equals the root or lies below it.
 */
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, relative, sep } from 'node:path';

/** Real paths of the folders reads may reach. */
export type ReadRoots = readonly string[];

/** Real paths of the given folders; folders that do not exist are dropped. */
export function makeRoots(folders: readonly (string | undefined)[]): ReadRoots {
  const out: string[] = [];
  for (const f of folders) {
    if (!f) continue;
    try {
      const real = realpathSync.native(f);
      if (!out.includes(real)) out.push(real);
    } catch {
      // A folder that does not exist holds nothing to read.
    }
  }
  return out;
}

/** True when `p` is `dir` or lies below it (lexically: no link is followed). */
export function within(p: string, dir: string): boolean {
  const rel = relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** True when the real path `real` is one of the roots or lies below one. */
export function isInside(real: string, roots: ReadRoots): boolean {
  return roots.some((r) => real === r || real.startsWith(r.endsWith(sep) ? r : r + sep));
}

/** The Hugging Face cache folders (model config.json files are read from there), from the variables HF honours. */
export function modelCacheFolders(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = homedir();
  const cache = env.XDG_CACHE_HOME || join(home, '.cache');
  const hfHome = env.HF_HOME || join(cache, 'huggingface');
  return [env.HF_HUB_CACHE, env.HUGGINGFACE_HUB_CACHE, join(hfHome, 'hub')].filter((x): x is string => !!x);
}

/** The roots of a workspace: its folders plus the model caches. */
export function workspaceRoots(folders: readonly (string | undefined)[], env: NodeJS.ProcessEnv = process.env): ReadRoots {
  return makeRoots([...folders, ...modelCacheFolders(env)]);
}
