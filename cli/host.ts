/** The Node file-system host the CLI gives the config loader (the server gives one that overlays open editors). */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { WorkspaceHost } from '../server/formats/workspace';

/** Largest config file the CLI reads (bigger files are not training configs). */
const MAX_BYTES = 8 * 1024 * 1024;

/** Reads files from disk, relative references also tried against `root`. */
export function nodeHost(root: string): WorkspaceHost {
  return {
    root,
    readFile(p: string) {
      try {
        if (!statSync(p).isFile() || statSync(p).size > MAX_BYTES) return undefined;
        return readFileSync(p, 'utf8');
      } catch {
        return undefined;
      }
    },
    exists: (p: string) => existsSync(p),
    listDir(p: string) {
      try {
        return statSync(p).isDirectory() ? readdirSync(p) : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
