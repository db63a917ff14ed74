/**
 * Writes ShardLens output files (validation and probe reports, traces) atomically and only where intended: the
 * folder must be a real folder (a symlink planted in a repository, such as `.shardlens -> /home/me/.ssh`, is
 * refused), the text goes to a new temporary file in that folder (created exclusively, never through a link) and is
 * renamed over the target, so a reader never sees half a report and a link at the target is replaced, not followed.
 * A read-only folder is reported as such.
 */
import { closeSync, constants, fsyncSync, lstatSync, mkdirSync, openSync, realpathSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';

/** An output that cannot be written, with a message for the user. */
export class WriteRefused extends Error {}

const EXCL = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

function describe(e: unknown, what: string): WriteRefused {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return new WriteRefused(`${what} is read-only (${code}); the report was not saved`);
  if (code === 'ENOSPC') return new WriteRefused(`no space left on the device of ${what}; the report was not saved`);
  return new WriteRefused(`${what}: ${code ?? (e as Error).message}`);
}

/**
 * Creates the folders of `rel` below `base` one by one, refusing any that already exists as a symlink or a file;
 * returns the real path of the last one. `base` itself must exist.
 */
export function ensureRealFolder(base: string, rel: string): string {
  let real: string;
  try {
    real = realpathSync.native(base);
  } catch (e) {
    throw describe(e, base);
  }
  let cur = base;
  for (const part of rel.split(/[\\/]/).filter(Boolean)) {
    cur = join(cur, part);
    let st;
    try {
      st = lstatSync(cur);
    } catch {
      try {
        mkdirSync(cur);
      } catch (e) {
        throw describe(e, dirname(cur));
      }
      st = lstatSync(cur);
    }
    if (st.isSymbolicLink()) throw new WriteRefused(`${cur} is a symbolic link; ShardLens writes reports only into real folders inside the workspace`);
    if (!st.isDirectory()) throw new WriteRefused(`${cur} is not a folder`);
    real = join(real, part);
  }
  return real;
}

/** Writes `text` to `folder/name` atomically (temporary file + rename in the same folder); returns the path. */
export function writeFileAtomic(folder: string, name: string, text: string): string {
  if (basename(name) !== name || name === '.' || name === '..') throw new WriteRefused(`${name} is not a file name`);
  const target = join(folder, name);
  const rel = relative(folder, target);
  if (rel.startsWith('..') || rel.includes(sep)) throw new WriteRefused(`${name} would leave ${folder}`);
  const tmp = join(folder, `.${name}.${process.pid}.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}.tmp`);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, EXCL, 0o644);
    const buf = Buffer.from(text, 'utf8');
    for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, target);
    return target;
  } catch (e) {
    if (fd !== undefined) try { closeSync(fd); } catch { /* Already closed. */ }
    try { unlinkSync(tmp); } catch { /* Never created. */ }
    throw e instanceof WriteRefused ? e : describe(e, folder);
  }
}

/** Writes a file the user named (--out, --trace) atomically in its folder. */
export function writeUserFile(path: string, text: string): string {
  return writeFileAtomic(dirname(path), basename(path), text);
}
