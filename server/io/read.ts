/**
 * The one way ShardLens reads a file the user did not open (referenced configs, launchers found by the reference
 * index, model config.json files, `.vscode/settings.json`, saved reports): regular files only, inside the allowed
 * roots after every symlink is resolved, opened without blocking, and read with a bound (never "read all, then
 * check"). Anything else is refused with a reason the caller can show. Node only.
 */
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { isInside, type ReadRoots } from './roots';

/** Why a read was refused. */
export type ReadRefusal = 'missing' | 'not-a-file' | 'outside-roots' | 'too-large' | 'binary' | 'unreadable';

export type ReadResult =
  | { readonly ok: true; readonly text: string; readonly realPath: string }
  | { readonly ok: false; readonly reason: ReadRefusal; readonly detail: string };

/** Largest referenced config file read (a real training config is a few kB; this is 256 × that). */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** Largest probe or validation report read (a report of 1,024 ranks is a few MB). */
export const MAX_REPORT_BYTES = 64 * 1024 * 1024;

export interface ReadPolicy {
  /** Folders the file's real path must lie in; undefined: anywhere (a file the user named on the command line). */
  readonly roots?: ReadRoots;
  /** Bytes above which the file is refused (default MAX_CONFIG_BYTES). */
  readonly maxBytes?: number;
}

// O_NONBLOCK: a FIFO swapped in after the check still never blocks the open; O_NOFOLLOW: nor does a new symlink.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0) | (constants.O_NOCTTY ?? 0);

type Refused = Extract<ReadResult, { ok: false }>;

const refuse = (reason: ReadRefusal, detail: string): Refused => ({ ok: false, reason, detail });

/** The real path of `path` when it is a regular file inside the roots, or why not. Reads nothing. */
export function checkFile(path: string, policy: ReadPolicy = {}): { ok: true; realPath: string; size: number } | Refused {
  let real: string;
  try {
    real = realpathSync.native(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return refuse('missing', `${path} does not exist (or is a dangling symlink)`);
    return refuse('unreadable', `${path} cannot be resolved (${code ?? 'error'}${code === 'ELOOP' ? ': a symlink loop' : ''})`);
  }
  if (policy.roots && !isInside(real, policy.roots)) {
    return refuse('outside-roots', `${path} resolves to ${real}, outside the workspace`);
  }
  let st;
  try {
    st = statSync(real);
  } catch (e) {
    return refuse('unreadable', `${path}: ${(e as NodeJS.ErrnoException).code ?? 'cannot stat'}`);
  }
  if (!st.isFile()) return refuse('not-a-file', `${path} is ${kindOf(st)}, not a regular file`);
  const max = policy.maxBytes ?? MAX_CONFIG_BYTES;
  if (st.size > max) return refuse('too-large', `${path} is ${mib(st.size)}; config files above ${mib(max)} are not read`);
  return { ok: true, realPath: real, size: st.size };
}

/** Reads a text file under the policy; never throws, never blocks on a FIFO or device, never reads past the cap. */
export function readTextFile(path: string, policy: ReadPolicy = {}): ReadResult {
  const checked = checkFile(path, policy);
  if (!checked.ok) return checked;
  const max = policy.maxBytes ?? MAX_CONFIG_BYTES;
  let fd: number | undefined;
  try {
    fd = openSync(checked.realPath, OPEN_FLAGS);
    // The file may have been replaced between the check and the open: check the opened file itself.
    const st = fstatSync(fd);
    if (!st.isFile()) return refuse('not-a-file', `${path} is ${kindOf(st)}, not a regular file`);
    const buf = Buffer.allocUnsafe(Math.min(max, Math.max(st.size, 4096)) + 1);
    let len = 0;
    for (;;) {
      if (len === buf.length) return refuse('too-large', `${path} is larger than ${mib(max)}; config files above that are not read`);
      const n = readSync(fd, buf, len, buf.length - len, null);
      if (n === 0) break;
      len += n;
      if (len > max) return refuse('too-large', `${path} is larger than ${mib(max)}; config files above that are not read`);
    }
    const bytes = buf.subarray(0, len);
    if (bytes.subarray(0, 8192).includes(0)) return refuse('binary', `${path} holds binary data, not a text config`);
    return { ok: true, text: bytes.toString('utf8'), realPath: checked.realPath };
  } catch (e) {
    return refuse('unreadable', `${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  } finally {
    if (fd !== undefined) try { closeSync(fd); } catch { /* Already closed. */ }
  }
}

/** The text of a readable file, or undefined: for callers that only need "is there a config here". */
export function readTextOrUndefined(path: string, policy: ReadPolicy = {}): string | undefined {
  const r = readTextFile(path, policy);
  return r.ok ? r.text : undefined;
}

function kindOf(st: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string {
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a named pipe';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

function mib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}

/** Largest part of a training log read (its end: the steady state and the last peaks are there). */
export const MAX_LOG_BYTES = 32 * 1024 * 1024;

/**
 * Reads at most the last `maxBytes` of a text file (a training log can be gigabytes; its end holds the steady-state
 * steps): regular files only, the same checks as readTextFile, and when the file is longer the first partial line is
 * dropped and `truncated` says how many bytes were skipped. Never throws.
 */
export function readTextTail(path: string, maxBytes = MAX_LOG_BYTES, roots?: ReadRoots): (ReadResult & { readonly skippedBytes?: number }) {
  const checked = checkFile(path, { roots, maxBytes: Number.MAX_SAFE_INTEGER });
  if (!checked.ok) return checked;
  let fd: number | undefined;
  try {
    fd = openSync(checked.realPath, OPEN_FLAGS);
    const st = fstatSync(fd);
    if (!st.isFile()) return refuse('not-a-file', `${path} is ${kindOf(st)}, not a regular file`);
    const start = Math.max(0, st.size - maxBytes);
    const buf = Buffer.allocUnsafe(Math.min(maxBytes, st.size));
    let len = 0;
    while (len < buf.length) {
      const n = readSync(fd, buf, len, buf.length - len, start + len);
      if (n === 0) break;
      len += n;
    }
    let bytes = buf.subarray(0, len);
    if (bytes.subarray(0, 8192).includes(0)) return refuse('binary', `${path} holds binary data, not a text log`);
    let skipped = start;
    if (start > 0) {
      const nl = bytes.indexOf(10);
      skipped += nl + 1;
      bytes = bytes.subarray(nl + 1);
    }
    return { ok: true, text: bytes.toString('utf8'), realPath: checked.realPath, ...(skipped > 0 ? { skippedBytes: skipped } : {}) };
  } catch (e) {
    return refuse('unreadable', `${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  } finally {
    if (fd !== undefined) try { closeSync(fd); } catch { /* Already closed. */ }
  }
}
