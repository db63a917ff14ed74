/**
 * The team reference set of published runs (`<checkout>/../shared/reference/measured-runs/cases.json`, or the folder
 * SHARDLENS_REFERENCE_RUNS names): where it is, which of its time rows the repository copy
 * (data/calibration/measured-runs.json) lacks, and those rows read through the CLI's pipeline from that folder. Rows the
 * repository copy lacks were never fitted on, so their errors are out of sample by construction. A missing or
 * malformed set gives a reason, never an exception.
 */
import { dirname, join, resolve } from 'node:path';
import { loadConfig } from '../../cli/load';
import { checkFile, readTextFile } from '../../server/io/read';
import { workspaceRoots } from '../../server/io/roots';
import type { Plan } from '../../shared/plan/types';
import type { MeasuredCase } from './runs';

/** Where the set lives below an ancestor of the checkout. */
const SUBPATH = ['shared', 'reference', 'measured-runs'];
/** The file of the set. */
export const REFERENCE_CASES = 'cases.json';

/** One time row of the set, as cases.json states it. */
export interface ReferenceRow {
  readonly id: string;
  readonly file: string;
  readonly gpus: string;
  readonly model?: string;
  readonly measured: number;
}

/**
 * The reference-set folder for a checkout: the environment's SHARDLENS_REFERENCE_RUNS when set, else the first
 * ancestor a of the checkout's parent (the checkout's own `shared/` is ShardLens's core) with a/shared/reference/
 * measured-runs/cases.json: /work/shared/… for /work/main and for worktrees below /work/wt alike.
 */
export function findReferenceSet(checkout: string, env: NodeJS.ProcessEnv = process.env): { dir?: string; looked: string[] } {
  const override = env.SHARDLENS_REFERENCE_RUNS;
  if (override) return { dir: resolve(override), looked: [resolve(override)] };
  const looked: string[] = [];
  for (let a = dirname(resolve(checkout)); ; a = dirname(a)) {
    const dir = join(a, ...SUBPATH);
    looked.push(dir);
    if (checkFile(join(dir, REFERENCE_CASES)).ok) return { dir, looked };
    if (dirname(a) === a) return { looked };
  }
}

/** Why a row of cases.json cannot be used, or undefined when it is a usable time row. */
function rowProblem(x: unknown): string | undefined {
  if (!x || typeof x !== 'object' || Array.isArray(x)) return 'not an object';
  const r = x as Record<string, unknown>;
  if (typeof r.id !== 'string' || !r.id) return 'no id';
  if (typeof r.file !== 'string' || !r.file) return 'no launch file';
  if (typeof r.gpus !== 'string' || !r.gpus) return 'no gpus';
  if (r.model !== undefined && r.model !== null && typeof r.model !== 'string') return 'model is not a string';
  if (typeof r.measured !== 'number' || !Number.isFinite(r.measured) || r.measured <= 0) return 'measured is not a positive number';
  return undefined;
}

/**
 * The time rows of the set's cases.json (kind "time"), read with the bounded reader inside the folder; `problems`
 * names rows that cannot be used, `error` a file that cannot be read or is not a JSON array.
 */
export function readReferenceRows(dir: string): { rows: ReferenceRow[]; problems: string[]; error?: string } {
  const path = join(dir, REFERENCE_CASES);
  const read = readTextFile(path, { roots: workspaceRoots([dir]) });
  if (!read.ok) return { rows: [], problems: [], error: read.detail };
  let data: unknown;
  try {
    data = JSON.parse(read.text);
  } catch (e) {
    return { rows: [], problems: [], error: `${path} is not JSON (${(e as Error).message})` };
  }
  if (!Array.isArray(data)) return { rows: [], problems: [], error: `${path} is not a JSON array of cases` };
  const rows: ReferenceRow[] = [];
  const problems: string[] = [];
  data.forEach((x, i) => {
    if (x && typeof x === 'object' && (x as { kind?: unknown }).kind !== 'time') return;
    const why = rowProblem(x);
    const r = x as Record<string, unknown>;
    if (why) problems.push(`row ${i}${typeof r?.id === 'string' ? ` (${r.id})` : ''}: ${why}`);
    else rows.push({ id: r.id as string, file: r.file as string, gpus: r.gpus as string, model: (r.model as string | null) ?? undefined, measured: r.measured as number });
  });
  return { rows, problems };
}

const base = (f: string) => f.split(/[\\/]/).pop() ?? f;

/** Whether the repository copy holds a row: the same id (the set's ids end in "-tps") or the same launch file, and the same measured value. */
export function inRepositoryCopy(row: ReferenceRow, cases: readonly MeasuredCase[]): boolean {
  const id = row.id.replace(/-tps$/, '');
  return cases.some((c) => (c.id === id || c.id === row.id || base(c.file) === base(row.file)) && c.measured === row.measured);
}

/** A reference row's plan through the CLI's pipeline, reads bounded to the set's folder, or why it has none. */
export async function loadReferenceRow(dir: string, row: ReferenceRow): Promise<{ plan?: Plan; failure?: string }> {
  const flags: Record<string, string> = { gpus: row.gpus, workspace: dir };
  if (row.model) flags.model = row.model;
  try {
    const loaded = await loadConfig(join(dir, row.file), flags);
    const plan = loaded.resolved.plan;
    return plan ? { plan } : { failure: `no plan (${loaded.resolved.problems.map((p) => p.message).join('; ')})` };
  } catch (e) {
    return { failure: (e as Error).message };
  }
}
