/**
 * The `shardlens.profile` setting: a cluster profile file (written by `shardlens profile` or "Profile This Cluster")
 * read through the workspace host, so the same bounds apply as to any file the user did not open (inside the
 * workspace, regular files, size cap). A profile that cannot be read or parsed leaves the catalog curves in place and
 * says so as a warning; a readable one becomes `settings.profile` and a dependency (a new sweep re-analyses).
 */
import { isAbsolute, join } from 'node:path';
import { normalizeProfile } from '../../shared/hardware/profile';
import type { ResolveSettings } from '../../shared/plan/resolve';
import type { Problem } from '../../shared/plan/types';
import type { WorkspaceHost } from './workspace';

/** The settings with `profile` read from `profileFile` (when set and no profile was given directly). */
export function withProfileFile(settings: ResolveSettings | undefined, host: WorkspaceHost, deps: string[], problems: Problem[]): ResolveSettings | undefined {
  const file = settings?.profileFile;
  if (!settings || !file || settings.profile) return settings;
  const path = isAbsolute(file) ? file : join(host.root ?? '.', file);
  const warn = (why: string) => problems.push({
    code: 'profile-unreadable', severity: 'warning', paths: ['cluster.gpu'],
    message: `The cluster profile ${file} (shardlens.profile) ${why}; step times use the catalog's published curves.`,
  });
  let text: string | undefined;
  try {
    text = host.readFile(path);
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    const why = host.refusal?.(path);
    warn(why ? `was not read: ${why}` : 'was not found');
    return settings;
  }
  deps.push(path);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    warn('is not JSON');
    return settings;
  }
  const profile = normalizeProfile(raw, file);
  if (!profile) {
    warn('is not a ShardLens cluster profile with measurements');
    return settings;
  }
  return { ...settings, profile };
}
