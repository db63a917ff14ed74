/**
 * Saved validation reports: JSON files in `.shardlens/validation/` next to the config (or in the workspace storage
 * folder), named after the config and the start time, so runs can be reopened and compared. Node only, no vscode,
 * so the CLI and the tests use it too. Unreadable or foreign files are skipped, never thrown.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { ValidationReport } from '../../validation/types';
import { MAX_REPORT_BYTES, readTextFile } from '../../server/io/read';
import { makeRoots, type ReadRoots } from '../../server/io/roots';
import { ensureRealFolder, writeFileAtomic } from '../../server/io/write';

/** Folder, relative to the config's folder (or the storage folder), that holds saved reports. */
export const REPORT_DIR = join('.shardlens', 'validation');

export interface StoreLocation {
  /** The config the run was for. */
  readonly configPath?: string;
  /** Workspace storage folder (context.storageUri), used when there is no config path or `prefer` is 'storage'. */
  readonly storageDir?: string;
  readonly prefer?: 'config' | 'storage';
}

/** The folder reports of this location go to, or undefined when neither place is known. */
export function reportDir(loc: StoreLocation): string | undefined {
  const base = reportBase(loc);
  return base ? join(base.base, base.rel) : undefined;
}

/** The existing folder a report folder hangs below, and the path below it ShardLens creates. */
function reportBase(loc: StoreLocation): { base: string; rel: string } | undefined {
  const nextToConfig = loc.configPath ? { base: dirname(loc.configPath), rel: REPORT_DIR } : undefined;
  const storage = loc.storageDir ? { base: loc.storageDir, rel: 'validation' } : undefined;
  return loc.prefer === 'storage' ? storage ?? nextToConfig : nextToConfig ?? storage;
}

/** File name of one report: "<config file name>.<start time, filesystem-safe>.json". */
export function reportFileName(report: Pick<ValidationReport, 'startedAt' | 'configPath'>): string {
  const stamp = (report.startedAt || new Date(0).toISOString()).replace(/[:.]/g, '-');
  return `${report.configPath ? basename(report.configPath) : 'run'}.${stamp}.json`;
}

/**
 * Writes the report atomically into the report folder and returns its path. A `.shardlens` (or `validation`) that is
 * a symlink is refused, so a repository cannot redirect reports out of the workspace; a read-only folder is said.
 */
export async function saveReport(report: ValidationReport, loc: StoreLocation): Promise<string> {
  const where = reportBase(loc);
  if (!where) throw new Error('no folder to save the validation report in');
  if (loc.storageDir && where.base === loc.storageDir) mkdirSync(loc.storageDir, { recursive: true });
  const dir = ensureRealFolder(where.base, where.rel);
  const configPath = report.configPath ?? loc.configPath;
  return writeFileAtomic(dir, reportFileName({ ...report, configPath }), `${JSON.stringify({ ...report, configPath }, null, 2)}\n`);
}

/** True when `x` has the shape of a saved runner report. */
export function isValidationReport(x: unknown): x is ValidationReport {
  if (typeof x !== 'object' || x === null) return false;
  const r = x as Partial<ValidationReport>;
  return r.kind === 'shardlens-validation' && r.version === 1 && typeof r.status === 'string' && Array.isArray(r.runs)
    && Array.isArray(r.checks) && typeof r.startedAt === 'string';
}

/** Reads one saved report (bounded, inside `roots` when given); undefined when missing, not JSON, or not a report. */
export async function loadReport(file: string, roots?: ReadRoots): Promise<ValidationReport | undefined> {
  const read = readTextFile(file, { roots, maxBytes: MAX_REPORT_BYTES });
  if (!read.ok) return undefined;
  try {
    const json = JSON.parse(read.text) as unknown;
    return isValidationReport(json) ? json : undefined;
  } catch {
    return undefined;
  }
}

export interface SavedReport {
  readonly path: string;
  readonly report: ValidationReport;
}

/** Saved reports of a location (optionally only those of `configPath`), newest first. */
export async function listReports(loc: StoreLocation): Promise<SavedReport[]> {
  const where = reportBase(loc);
  if (!where) return [];
  // Saved reports are read only from the real report folder below the config's folder (never through a link out).
  const roots = makeRoots([where.base]);
  const dir = join(where.base, where.rel);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json')).slice(0, 1000);
  } catch {
    return [];
  }
  const out: SavedReport[] = [];
  for (const name of names) {
    const report = await loadReport(join(dir, name), roots);
    if (!report) continue;
    if (loc.configPath && report.configPath && basename(report.configPath) !== basename(loc.configPath)) continue;
    out.push({ path: join(dir, name), report });
  }
  return out.sort((a, b) => b.report.startedAt.localeCompare(a.report.startedAt));
}
