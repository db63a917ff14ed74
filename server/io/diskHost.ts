/**
 * A workspace host over the disk for the CLI and the server: every read goes through the bounded reader inside the
 * allowed roots, existence checks read nothing, refusals can be explained, and the reverse-reference index is built
 * once, on first use. The server layers open buffers and a short cache on top (server/analysis/host.ts).
 */
import type { WorkspaceHost } from '../formats/workspace';
import { checkFile, readTextFile, type ReadPolicy } from './read';
import { ReferenceIndex } from './referenceIndex';
import type { ReadRoots } from './roots';

export interface DiskHostOptions {
  /** Workspace folder: relative references are tried against it and the index walks it. */
  readonly root?: string;
  /** Real paths reads may reach (workspace folders, model caches). */
  readonly roots: ReadRoots;
  /** Files the user named (the CLI's target): read wherever they are, still bounded and regular files only. */
  readonly named?: ReadonlySet<string>;
  /** Folders the reference index covers (default: the root). */
  readonly indexFolders?: readonly string[];
  /** Reads that come before the disk (open editor buffers); undefined falls through to the disk. */
  readonly overlay?: (path: string) => string | undefined;
}

export interface DiskHost extends WorkspaceHost {
  /** The index (created on first use), so file events can update it. */
  readonly index: ReferenceIndex | undefined;
}

/** The policy of one path: the roots, unless the user named the file. */
function policyOf(path: string, o: DiskHostOptions): ReadPolicy {
  return o.named?.has(path) ? {} : { roots: o.roots };
}

export function createDiskHost(o: DiskHostOptions): DiskHost {
  const readDisk = (p: string) => {
    const r = readTextFile(p, policyOf(p, o));
    return r.ok ? r.text : undefined;
  };
  const read = (p: string) => o.overlay?.(p) ?? readDisk(p);
  const folders = o.indexFolders ?? (o.root ? [o.root] : []);
  const index = folders.length ? new ReferenceIndex({ folders, roots: o.roots, read }) : undefined;
  return {
    root: o.root,
    index,
    readFile: read,
    exists: (p) => o.overlay?.(p) !== undefined || checkFile(p, policyOf(p, o)).ok,
    refusal(p) {
      const c = checkFile(p, policyOf(p, o));
      return !c.ok && c.reason !== 'missing' ? c.detail : undefined;
    },
    mentioning(name) {
      if (!index) return { files: [] };
      const files = index.mentioning(name);
      const truncated = index.truncated;
      return truncated ? { files, truncated } : { files };
    },
  };
}
