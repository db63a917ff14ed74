/**
 * The loader host of the language server: open editor buffers overlay the files on disk (so unsaved edits of a
 * referenced file count), disk reads go through the bounded reader inside the workspace folders, are cached briefly,
 * and the reverse-reference index is kept current from file events and buffer edits.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createDiskHost, type DiskHost } from '../io/diskHost';
import { workspaceRoots, type ReadRoots } from '../io/roots';
import type { LoaderHost } from './core';

/** Normalises a path or file URI to a file URI string (other schemes are kept). */
export function toUri(pathOrUri: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(pathOrUri) && !/^[a-z]:[\\/]/i.test(pathOrUri)) return pathOrUri;
  return pathToFileURL(pathOrUri).toString();
}

/** File system path of a file URI, or undefined for other schemes. */
export function toPath(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return /^[a-z][a-z0-9+.-]*:/i.test(uri) && !/^[a-z]:[\\/]/i.test(uri) ? undefined : uri;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

/** Disk reads are reused this long (ms) unless a file-change event invalidates them first. */
const TTL_MS = 2000;
/** Disk reads kept at most (the oldest is dropped first). */
const CACHE_MAX = 512;

export type FileChange = 'created' | 'changed' | 'deleted';

export interface CachingHost extends LoaderHost {
  /** Forgets cached disk reads of one file, or of everything. */
  invalidate(pathOrUri?: string): void;
  /** A file event from the client (or an edit of an open buffer): the cache and the reference index follow it. */
  fileChanged(pathOrUri: string, change: FileChange): void;
}

/**
 * Reads from `open` (URI → text of open documents) first, then from disk through a short-lived cache. `root` is the
 * first workspace folder (relative references are tried against it); reads stay inside `folders` (default: the
 * root) and the model caches, and the reference index covers those folders.
 */
export function createHost(
  open: (uri: string) => string | undefined, root?: () => string | undefined, now: () => number = Date.now,
  folders?: () => readonly string[],
): CachingHost {
  const files = new Map<string, { t: number; text: string | undefined }>();
  const checks = new Map<string, { t: number; ok: boolean }>();
  const overlay = (p: string) => open(toUri(p));
  let disk: { key: string; host: DiskHost } | undefined;
  /** The disk host of the current root (rebuilt when the workspace folder, or the open folders, change). */
  const diskHost = (): DiskHost => {
    const r = root?.();
    const list = folders ? folders() : r ? [r] : [];
    const key = `${r ?? ''}\0${list.join('\0')}`;
    if (!disk || disk.key !== key) {
      const roots: ReadRoots = workspaceRoots(list);
      disk = { key, host: createDiskHost({ root: r, roots, overlay, indexFolders: list }) };
    }
    return disk.host;
  };
  const remember = (path: string, text: string | undefined) => {
    files.delete(path);
    files.set(path, { t: now(), text });
    if (files.size > CACHE_MAX) files.delete(files.keys().next().value as string);
  };
  return {
    get root() {
      return root?.();
    },
    invalidate(pathOrUri?: string) {
      if (!pathOrUri) {
        files.clear();
        checks.clear();
        return;
      }
      const path = toPath(toUri(pathOrUri));
      if (path) {
        files.delete(path);
        checks.delete(path);
      }
    },
    fileChanged(pathOrUri, change) {
      this.invalidate(pathOrUri);
      const path = toPath(toUri(pathOrUri));
      const index = disk?.host.index;
      if (!path || !index) return;
      if (change === 'deleted') index.remove(path);
      else index.update(path);
    },
    exists(p) {
      // Reference candidates are checked on every keystroke: the answers are cached like the reads.
      if (overlay(p) !== undefined) return true;
      const hit = checks.get(p);
      if (hit && now() - hit.t < TTL_MS) return hit.ok;
      const ok = diskHost().exists?.(p) ?? false;
      checks.delete(p);
      checks.set(p, { t: now(), ok });
      if (checks.size > CACHE_MAX) checks.delete(checks.keys().next().value as string);
      return ok;
    },
    refusal: (p) => diskHost().refusal?.(p),
    mentioning: (name) => diskHost().mentioning?.(name) ?? { files: [] },
    readFile(pathOrUri: string): string | undefined {
      const uri = toUri(pathOrUri);
      const buffer = open(uri);
      if (buffer !== undefined) return buffer;
      const path = toPath(uri);
      if (!path) return undefined;
      const hit = files.get(path);
      if (hit && now() - hit.t < TTL_MS) return hit.text;
      const text = diskHost().readFile(path);
      remember(path, text);
      return text;
    },
  };
}
