/** The Node file-system host the CLI gives the config loader: bounded reads inside the workspace, one index per run. */
import { resolve } from 'node:path';
import { createDiskHost, type DiskHost } from '../server/io/diskHost';
import type { CliWorkspace } from './workspace';

/** One host per workspace, so `estimate <folder>` builds the reference index once for all its files. */
const hosts = new Map<string, { host: DiskHost; named: Set<string> }>();

/** The host of a workspace; `named` is a file the user gave on the command line (read even if it is a link out). */
export function nodeHost(ws: CliWorkspace, named?: string): DiskHost {
  const key = `${ws.root}\0${ws.boundary}`;
  let h = hosts.get(key);
  if (!h) {
    const set = new Set<string>();
    h = { host: createDiskHost({ root: ws.root, roots: ws.roots, named: set }), named: set };
    hosts.set(key, h);
  }
  if (named) h.named.add(resolve(named));
  return h.host;
}
