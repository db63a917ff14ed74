/**
 * Saved validation reports: JSON files in `.shardlens/validation/` next to the config (or in the workspace storage
 * folder), named after the config and the start time, so runs can be reopened and compared. Node only, no vscode,
 * so the CLI and the tests use it too. Unreadable or foreign files are skipped, never thrown.
 */
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { ValidationReport } from '../../validation/types';

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
  const nextToConfig = loc.configPath ? join(dirname(loc.configPath), REPORT_DIR) : undefined;
  const storage = loc.storageDir ? join(loc.storageDir, 'validation') : undefined;
  return loc.prefer === 'storage' ? storage ?? nextToConfig : nextToConfig ?? storage;
}

/** File name of one report: "<config file name>.<start time, filesystem-safe>.json". */
export function reportFileName(report: Pick<ValidationReport, 'startedAt' | 'configPath'>): string {
  const stamp = (report.startedAt || new Date(0).toISOString()).replace(/[:.]/g, '-');
  return `${report.configPath ? basename(report.configPath) : 'run'}.${stamp}.json`;
}

/** Writes the report and returns its path. */
export async function saveReport(report: ValidationReport, loc: StoreLocation): Promise<string> {
  const dir = reportDir(loc);
  if (!dir) throw new Error('no folder to save the validation report in');
  await mkdir(dir, { recursive: true });
  const file = join(dir, reportFileName({ ...report, configPath: report.configPath ?? loc.configPath }));
  await writeFile(file, `${JSON.stringify({ ...report, configPath: report.configPath ?? loc.configPath }, null, 2)}\n`, 'utf8');
  return file;
}

/** True when `x` has the shape of a saved runner report. */
export function isValidationReport(x: unknown): x is ValidationReport {
  if (typeof x !== 'object' || x === null) return false;
  const r = x as Partial<ValidationReport>;
  return r.kind === 'shardlens-validation' && r.version === 1 && typeof r.status === 'string' && Array.isArray(r.runs)
    && Array.isArray(r.checks) && typeof r.startedAt === 'string';
}

/** Reads one saved report; undefined when the file is missing, not JSON, or not a report. */
export async function loadReport(file: string): Promise<ValidationReport | undefined> {
  try {
    const json = JSON.parse(await readFile(file, 'utf8')) as unknown;
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
  const dir = reportDir(loc);
  if (!dir) return [];
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const out: SavedReport[] = [];
  for (const name of names) {
    const report = await loadReport(join(dir, name));
    if (!report) continue;
    if (loc.configPath && report.configPath && basename(report.configPath) !== basename(loc.configPath)) continue;
    out.push({ path: join(dir, name), report });
  }
  return out.sort((a, b) => b.report.startedAt.localeCompare(a.report.startedAt));
}
