/**
 * Which workspace a CLI run belongs to, and so which settings it reads and which files it may read at all. The CLI
 * never climbs above the folder it was pointed at: `--workspace <dir>` when given; else the current folder when the
 * target lies inside it; else the target's own folder. Settings come from the nearest folder between the file and
 * that boundary that looks like a project root (holds .vscode, .git or package.json), never from an ancestor above
 * it (a settings file planted in a shared scratch folder above a checkout is not read).
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { within, workspaceRoots, type ReadRoots } from '../server/io/roots';

export interface CliWorkspace {
  /** The folder the run may not climb above (reads stay inside it, or inside the model caches). */
  readonly boundary: string;
  /** The project folder: settings, relative references and the reference index start here. */
  readonly root: string;
  /** Real paths reads may reach: the boundary and the model caches. */
  readonly roots: ReadRoots;
}

const MARKERS = ['.vscode', '.git', 'package.json'];

/** The workspace of a target file or folder; `explicit` is the value of --workspace. */
export function locateWorkspace(target: string, explicit?: string, cwd: string = process.cwd()): CliWorkspace {
  const abs = resolve(cwd, target);
  const isDir = (() => { try { return statSync(abs).isDirectory(); } catch { return false; } })();
  const start = isDir ? abs : dirname(abs);
  const boundary = explicit ? resolve(cwd, explicit) : within(abs, cwd) ? cwd : start;
  let root = start;
  for (let dir = start; within(dir, boundary); dir = dirname(dir)) {
    if (MARKERS.some((m) => existsSync(resolve(dir, m)))) { root = dir; break; }
    if (dir === boundary || dirname(dir) === dir) break;
  }
  return { boundary, root, roots: workspaceRoots([boundary]) };
}
