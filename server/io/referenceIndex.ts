/**
 * The reverse-reference index: which workspace files mention a given DeepSpeed JSON by name. Built once by one
 * bounded walk, then kept current from file events (and from edits of open documents), so an analysis looks a name
 * up instead of walking the workspace on every keystroke, and no referencing file is missed however many files
 * come before it. The index only narrows the search: callers parse each candidate and check that its reference
 * really resolves to the target.
 */
import { basename, sep } from 'node:path';
import { statSync } from 'node:fs';
import { walkFiles, defaultSkipDir, type WalkResult } from './walk';
import type { ReadRoots } from './roots';

/** Files that may reference another config: launchers, YAML/TOML configs, JSON. */
export const SCAN_EXT = /\.(ya?ml|sh|bash|json|conf|cfg|slurm|sbatch|toml)$/i;

/**
 * Names of config files a text mentions: DeepSpeed configs (`.json`, and the `.conf` / `.cfg` some projects save them
 * as) and torchtitan job TOMLs, as bare path components and quoted names (which may hold spaces).
 */
const CONFIG_NAME = /([^\s"'`=,;:(){}[\]<>|&$\\/]+\.(?:json|conf|cfg|toml))(?![\w.])/gi;
const QUOTED_CONFIG_NAME = /["']([^"'\n]*\.(?:json|conf|cfg|toml))["']/gi;
/** torchtitan's `--module a.b.c` (or a script's MODULE=a.b.c that feeds it): the Python file c.py it imports. */
const MODULE_NAME = /(?:--module[=\s]+|\bMODULE=)["']?(?:\$\{MODULE:-["']?)?([A-Za-z_][\w.]*)/g;

/** The module file (basename) a dotted Python module name imports. */
export function moduleFileName(dotted: string): string {
  return `${dotted.slice(dotted.lastIndexOf('.') + 1)}.py`;
}

/** Basenames of the config files a text mentions (the only files it can reference as a config). */
export function mentionedConfigNames(text: string): string[] {
  const out = new Set<string>();
  if (/\.(json|conf|cfg|toml)/i.test(text)) {
    for (const m of text.matchAll(CONFIG_NAME)) out.add(m[1]);
    for (const m of text.matchAll(QUOTED_CONFIG_NAME)) out.add(basename(m[1]));
  }
  if (/MODULE/i.test(text)) for (const m of text.matchAll(MODULE_NAME)) out.add(moduleFileName(m[1]));
  return [...out];
}

export interface ReferenceIndexOptions {
  /** The folders indexed (the workspace folders). */
  readonly folders: readonly string[];
  /** Real paths the walk may enter. */
  readonly roots: ReadRoots;
  /** Bounded read of a file (open buffers first where there are any). */
  readonly read: (path: string) => string | undefined;
  /** Files indexed at most (default 100,000). */
  readonly maxFiles?: number;
}

export class ReferenceIndex {
  /** Mentioned basename → files that mention it. */
  private readonly byName = new Map<string, Set<string>>();
  /** File → basenames it mentions. */
  private readonly namesOf = new Map<string, readonly string[]>();
  private built = false;
  /** Files walked, and the budget that stopped a walk early, if one did. */
  private files = 0;
  private stoppedBy: WalkResult['truncated'];

  constructor(private readonly o: ReferenceIndexOptions) {}

  /** Walks the root once (later calls do nothing). */
  build(): void {
    if (this.built) return;
    this.built = true;
    for (const folder of this.o.folders) {
      const w = walkFiles(folder, { roots: this.o.roots, include: (n) => SCAN_EXT.test(n), maxFiles: this.o.maxFiles ?? 100_000, maxEntries: 2_000_000 });
      for (const f of w.files) this.index(f, this.o.read(f));
      this.files += w.files.length;
      this.stoppedBy ??= w.truncated;
    }
  }

  /** Why the index may be incomplete (a walk budget was reached), or undefined. */
  get truncated(): string | undefined {
    const t = this.stoppedBy;
    return t ? `the workspace is larger than ShardLens indexes (stopped at the ${t} budget after ${this.files} files)` : undefined;
  }

  /** Files that mention `name` (a basename), sorted. Builds the index on first use. */
  mentioning(name: string): string[] {
    this.build();
    return [...(this.byName.get(name) ?? [])].sort();
  }

  /** A file was created or changed (on disk, or as an open buffer): re-reads it; a new folder is walked. */
  update(path: string): void {
    if (!this.built) return;
    if (SCAN_EXT.test(path)) {
      this.index(path, this.o.read(path));
      return;
    }
    let dir = false;
    try { dir = statSync(path).isDirectory(); } catch { /* Gone again. */ }
    if (!dir || defaultSkipDir(basename(path))) return;
    const w = walkFiles(path, { roots: this.o.roots, include: (n) => SCAN_EXT.test(n), maxFiles: this.o.maxFiles ?? 100_000 });
    for (const f of w.files) this.index(f, this.o.read(f));
  }

  /** A file or folder was deleted: forgets it and everything below it. */
  remove(path: string): void {
    if (!this.built) return;
    this.index(path, undefined);
    const prefix = path.endsWith(sep) ? path : path + sep;
    for (const f of [...this.namesOf.keys()]) if (f.startsWith(prefix)) this.index(f, undefined);
  }

  private index(path: string, text: string | undefined): void {
    for (const n of this.namesOf.get(path) ?? []) {
      const set = this.byName.get(n);
      set?.delete(path);
      if (set?.size === 0) this.byName.delete(n);
    }
    const names = text === undefined ? [] : mentionedConfigNames(text);
    if (names.length) this.namesOf.set(path, names);
    else this.namesOf.delete(path);
    for (const n of names) {
      let set = this.byName.get(n);
      if (!set) this.byName.set(n, (set = new Set()));
      set.add(path);
    }
  }
}
