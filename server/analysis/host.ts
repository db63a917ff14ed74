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

/** Reads from `open` (URI → text of open documents) first, then from disk; `root` is the workspace folder path. */
export function createHost(open: (uri: string) => string | undefined, root?: () => string | undefined): LoaderHost {
  return {
    get root() {
      return root?.();
    },
    listDir(path: string): readonly string[] | undefined {
      try {
        return readdirSync(path);
      } catch {
        return undefined;
      }
    },
    readFile(pathOrUri: string): string | undefined {
      const uri = toUri(pathOrUri);
      const buffer = open(uri);
      if (buffer !== undefined) return buffer;
      const path = toPath(uri);
      if (!path) return undefined;
      try {
        if (statSync(path).size > MAX_BYTES) return undefined;
        return readFileSync(path, 'utf8');
      } catch {
        return undefined;
      }
    },
  };
}
