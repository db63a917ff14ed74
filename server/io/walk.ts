/**
 * A bounded walk of a folder tree: every folder is entered once by its real path (symlink loops and self-links end
 * there), the walk stays inside the allowed roots, stops at file, entry and depth budgets, and uses a queue that is
 * O(1) per step. It says when a budget stopped it, so callers can tell the user that not everything was seen.
 */
import { readdirSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { isInside, type ReadRoots } from './roots';

export interface WalkOptions {
  /** Folders the walk may enter (real paths); symlinks leading elsewhere are skipped. */
  readonly roots: ReadRoots;
  /** Files returned at most (default 50,000). */
  readonly maxFiles?: number;
  /** Folder entries examined at most, files and folders together (default 500,000). */
  readonly maxEntries?: number;
  /** Folder depth below the start (default 16). */
  readonly maxDepth?: number;
  /** Folder names not entered (default: hidden folders and node_modules). */
  readonly skipDir?: (name: string) => boolean;
  /** File names kept (default: all). */
  readonly include?: (name: string) => boolean;
}

export interface WalkResult {
  /** Paths as reached from the start (not resolved), sorted by folder then name. */
  readonly files: string[];
  /** Which budget stopped the walk early, if one did. */
  readonly truncated?: 'files' | 'entries' | 'depth';
}

/** Hidden folders (.git, .venv…) and node_modules are not configs the user writes. */
export const defaultSkipDir = (name: string): boolean => name.startsWith('.') || name === 'node_modules' || name === '__pycache__';

/** Walks `start` breadth first within the budgets. Never throws. */
export function walkFiles(start: string, o: WalkOptions): WalkResult {
  const maxFiles = o.maxFiles ?? 50_000, maxEntries = o.maxEntries ?? 500_000, maxDepth = o.maxDepth ?? 16;
  const skipDir = o.skipDir ?? defaultSkipDir;
  const files: string[] = [];
  const visited = new Set<string>();
  const queue: { dir: string; depth: number }[] = [];
  let head = 0, entries = 0;
  let truncated: WalkResult['truncated'];
  const enter = (dir: string, depth: number) => {
    const real = realOf(dir);
    if (!real || visited.has(real) || !isInside(real, o.roots)) return;
    if (depth > maxDepth) { truncated ??= 'depth'; return; }
    visited.add(real);
    queue.push({ dir, depth });
  };
  enter(start, 0);
  while (head < queue.length) {
    const { dir, depth } = queue[head++];
    let list: Dirent[];
    try {
      list = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of list) {
      if (++entries > maxEntries) return { files, truncated: 'entries' };
      const p = join(dir, d.name);
      let isDir = d.isDirectory(), isFile = d.isFile();
      if (d.isSymbolicLink()) {
        const real = realOf(p);
        if (!real || !isInside(real, o.roots)) continue;
        const st = statOf(real);
        isDir = !!st?.isDirectory();
        isFile = !!st?.isFile();
      }
      if (isDir) {
        if (!skipDir(d.name)) enter(p, depth + 1);
      } else if (isFile && (!o.include || o.include(d.name))) {
        if (files.length >= maxFiles) return { files, truncated: 'files' };
        files.push(p);
      }
    }
  }
  return truncated ? { files, truncated } : { files };
}

function realOf(p: string): string | undefined {
  try {
    return realpathSync.native(p);
  } catch {
    return undefined;
  }
}

function statOf(p: string) {
  try {
    return statSync(p);
  } catch {
    return undefined;
  }
}
