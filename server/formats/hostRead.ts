/** Reading one file through a workspace host without throwing. */
import type { WorkspaceHost } from './workspace';

/** The text of `p` through the host; undefined when it does not exist, is refused or the host throws. */
export function read(host: WorkspaceHost, p: string): string | undefined {
  try {
    if (host.exists && !host.exists(p)) return undefined;
    return host.readFile(p);
  } catch {
    return undefined;
  }
}
