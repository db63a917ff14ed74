/** The loader host: open editor buffers overlay the files on disk, so unsaved edits of a referenced file count. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { LoaderHost } from './core';

/** Files larger than this are not read (a config file is a few kB; this guards against pointing at a checkpoint). */
const MAX_BYTES = 4 * 1024 * 1024;

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

export interface CachingHost extends LoaderHost {
  /** Forgets cached disk reads of one file (and its folder listing), or of everything. */
  invalidate(pathOrUri?: string): void;
}

/**
 * Reads from `open` (URI → text of open documents) first, then from disk through a short-lived cache, so that a
 * keystroke does not re-read every file of the reference graph; `root` is the workspace folder path.
 */
export function createHost(open: (uri: string) => string | undefined, root?: () => string | undefined, now: () => number = Date.now): CachingHost {
  const files = new Map<string, { t: number; text: string | undefined }>();
  const dirs = new Map<string, { t: number; names: readonly string[] | undefined }>();
  const fresh = (t: number) => now() - t < TTL_MS;
  return {
    get root() {
      return root?.();
    },
    invalidate(pathOrUri?: string) {
      if (!pathOrUri) {
        files.clear();
        dirs.clear();
        return;
      }
      const path = toPath(toUri(pathOrUri));
      if (!path) return;
      files.delete(path);
      dirs.delete(path.replace(/[\\/][^\\/]*$/, ''));
    },
    listDir(path: string): readonly string[] | undefined {
      const hit = dirs.get(path);
      if (hit && fresh(hit.t)) return hit.names;
      let names: readonly string[] | undefined;
      try {
        names = readdirSync(path);
      } catch {
        names = undefined;
      }
      dirs.set(path, { t: now(), names });
      return names;
    },
    readFile(pathOrUri: string): string | undefined {
      const uri = toUri(pathOrUri);
      const buffer = open(uri);
      if (buffer !== undefined) return buffer;
      const path = toPath(uri);
      if (!path) return undefined;
      const hit = files.get(path);
      if (hit && fresh(hit.t)) return hit.text;
      let text: string | undefined;
      try {
        text = statSync(path).size > MAX_BYTES ? undefined : readFileSync(path, 'utf8');
      } catch {
        text = undefined;
      }
      files.set(path, { t: now(), text });
      return text;
    },
  };
}
