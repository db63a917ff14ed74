/**
 * Scores `shardlens estimate --json` of the real launcher configs in test/fixtures/dialects against their answer
 * keys (answers.json, written by reading each file). Used by the dialect test (development set, field by field)
 * and by `npm run bench` (development and held-out accuracy). A value counts as read when it equals the key and
 * its source is the file (explicit, referenced or derived from file values), not a default or an assumption;
 * fields listed in an entry's `trap` (a training value the file only implies, next to a look-alike key such as a
 * rollout engine's TP) count when the value is right whatever its source.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { estimateFile } from '../../../cli/commands/estimate';
import { InputError } from '../../../cli/load';

export const FIXTURES = resolve(__dirname, '../../fixtures/dialects');

/** The fields of issue 12's goal (stated TP, PP, CP, ZeRO stage or FSDP strategy, batch sizes, sequence length). */
export const CORE_FIELDS = ['tp', 'pp', 'cp', 'sharding', 'microBatch', 'globalBatch', 'gradAccum', 'seqLen'] as const;
/** Further fields the keys state (reported, not part of the goal). */
export const OTHER_FIELDS = ['ep', 'precision', 'recompute', 'nodes', 'gpusPerNode', 'worldSize', 'gpuName', 'layers', 'hidden', 'heads', 'kvHeads'] as const;
export type Field = (typeof CORE_FIELDS)[number] | (typeof OTHER_FIELDS)[number];

export type AnswerKey = Partial<Record<Exclude<Field, 'sharding'> | 'zero' | 'fsdp', number | string>> & {
  readonly dialect: string;
  readonly trap?: readonly string[];
  /** Known misses (said in `notes`): counted by the bench, not enforced by the development test. */
  readonly open?: readonly string[];
  readonly notes?: string;
};

interface Src { readonly kind: string; readonly detail: string }
interface Read<T> { readonly value: T; readonly source: Src }
/** The parts of `estimate --json` the scorer reads. */
export interface EstimateJson {
  readonly layout?: { tp: number; pp: number; cp: number; ep: number; zero: number; sharding: string; fsdpStrategy?: string };
  readonly layoutSources?: Record<string, Src | undefined>;
  readonly training?: Record<string, Read<number | string>>;
  readonly model?: Record<string, Read<number | string>>;
  readonly cluster?: Record<string, Read<number | string>>;
  readonly problems: readonly { severity: string; code: string; message: string }[];
}

export function loadAnswers(): Record<string, AnswerKey> {
  return JSON.parse(readFileSync(join(FIXTURES, 'answers.json'), 'utf8')) as Record<string, AnswerKey>;
}

interface Split { readonly heldOut: string[]; readonly heldOutProjects?: string[]; readonly tiers?: Record<string, string[]> }

function split(): Split {
  return JSON.parse(readFileSync(join(FIXTURES, 'split.json'), 'utf8')) as Split;
}

/**
 * Fresh tiers, in the order they were added: files whose keys were written and committed before ShardLens was
 * first run on them. The last one is the out-of-sample figure; earlier ones were used to fix the readers.
 */
export function freshTiers(): [string, Set<string>][] {
  return Object.entries(split().tiers ?? {}).map(([name, files]) => [name, new Set(files)]);
}

/** Fixtures the development test does not score: the held-out third, the held-out projects and every fresh tier. */
export function notDevelopment(): Set<string> {
  return new Set([...heldOut(), ...freshTiers().flatMap(([, files]) => [...files])]);
}

/** Fixtures held out of reader tuning: the drawn third and every file of the held-out projects. */
export function heldOut(): Set<string> {
  const s = split();
  const projects = new Set(s.heldOutProjects ?? []);
  return new Set([...s.heldOut, ...Object.keys(loadAnswers()).filter((f) => projects.has(f.split('/')[0]!))]);
}

/** The held-out projects (added after the readers were written). */
export function heldOutProjects(): Set<string> {
  return new Set(split().heldOutProjects ?? []);
}

/** One compared value. */
export interface Comparison {
  readonly field: Field;
  readonly want: number | string;
  readonly got: number | string | undefined;
  readonly source?: string;
  readonly ok: boolean;
}

const FROM_FILE = new Set(['explicit', 'referenced', 'derived']);
const FSDP_STAGE: Record<string, number> = { full_shard: 3, hybrid_shard: 3, shard_grad_op: 2, no_shard: 0 };

function layoutRead(j: EstimateJson, name: 'tp' | 'pp' | 'cp' | 'ep'): Read<number> | undefined {
  const v = j.layout?.[name];
  return v === undefined ? undefined : { value: v, source: j.layoutSources?.[name] ?? { kind: 'default', detail: '' } };
}

/** The value ShardLens reported for a key field, with its source. */
function reported(j: EstimateJson, key: AnswerKey, field: Field): Read<number | string> | undefined {
  switch (field) {
    case 'tp': case 'pp': case 'cp': case 'ep': return layoutRead(j, field);
    case 'sharding': {
      if (!j.layout) return undefined;
      const source = j.layoutSources?.['sharding.stage'] ?? { kind: 'default', detail: '' };
      if (key.fsdp !== undefined) {
        const fsdp = j.layout.sharding === 'fsdp' || j.layout.sharding === 'fsdp2';
        const hybrid = j.layout.fsdpStrategy?.startsWith('HYBRID') || j.layout.fsdpStrategy?.startsWith('_HYBRID');
        const name = !fsdp ? `${j.layout.sharding} stage ${j.layout.zero}` : hybrid ? 'hybrid_shard' : ({ 3: 'full_shard', 2: 'shard_grad_op', 0: 'no_shard' } as Record<number, string>)[j.layout.zero] ?? 'fsdp';
        return { value: name, source };
      }
      return { value: j.layout.zero, source };
    }
    case 'microBatch': case 'globalBatch': case 'gradAccum': case 'seqLen': case 'precision': case 'recompute': return j.training?.[field];
    case 'nodes': case 'gpusPerNode': case 'worldSize': return j.cluster?.[field];
    case 'gpuName': return j.cluster?.gpu;
    case 'layers': return j.model?.layers;
    case 'hidden': return j.model?.hiddenSize;
    case 'heads': return j.model?.heads;
    case 'kvHeads': return j.model?.kvHeads;
  }
}

function wanted(key: AnswerKey, field: Field): number | string | undefined {
  if (field === 'sharding') return key.fsdp ?? key.zero;
  return key[field];
}

function matches(field: Field, want: number | string, got: number | string): boolean {
  if (field === 'precision') return String(got).startsWith(String(want));
  if (field === 'gpuName') return String(got).toLowerCase().includes(String(want).toLowerCase());
  if (field === 'sharding' && typeof want === 'string') return got === want || (FSDP_STAGE[want] !== undefined && got === want);
  return got === want;
}

/** Compares one estimate with its key, field by field (only the fields the key states). */
export function compare(j: EstimateJson, key: AnswerKey): Comparison[] {
  const out: Comparison[] = [];
  for (const field of [...CORE_FIELDS, ...OTHER_FIELDS] as Field[]) {
    const want = wanted(key, field);
    if (want === undefined) continue;
    const r = reported(j, key, field);
    const trap = key.trap?.includes(field) ?? false;
    const ok = !!r && matches(field, want, r.value) && (trap || FROM_FILE.has(r.source.kind));
    out.push({ field, want, got: r?.value, source: r ? `${r.source.kind}: ${r.source.detail}` : undefined, ok });
  }
  return out;
}

/** The outcome of one fixture: its comparisons, or the crash. */
export interface FixtureResult {
  readonly fixture: string;
  readonly comparisons: Comparison[];
  readonly crashed?: string;
  /** An estimate was made (a plan exists). */
  readonly estimated: boolean;
  /** No estimate, but a problem says why. */
  readonly refused: boolean;
}

/** Runs `estimate --json` in process on one fixture and scores it. */
export async function scoreFixture(fixture: string, key: AnswerKey): Promise<FixtureResult> {
  try {
    const { json } = await estimateFile(join(FIXTURES, fixture), { json: true });
    const j = json as EstimateJson;
    return { fixture, comparisons: compare(j, key), estimated: !!j.layout, refused: !j.layout && j.problems.some((p) => p.message.length > 0) };
  } catch (e) {
    // The CLI refuses a file that is not a training config with an InputError (exit 2 and its message): a refusal.
    if (e instanceof InputError && e.message.length > 0) return { fixture, comparisons: compare({ problems: [] } as unknown as EstimateJson, key), estimated: false, refused: true };
    return { fixture, comparisons: [], crashed: e instanceof Error ? e.message : String(e), estimated: false, refused: false };
  }
}

/** Fraction of compared values read correctly, per field and over a field set. */
export function accuracy(results: readonly FixtureResult[], fields: readonly Field[]): { correct: number; total: number; perField: Record<string, [number, number]> } {
  const perField: Record<string, [number, number]> = {};
  let correct = 0;
  let total = 0;
  for (const r of results) {
    for (const c of r.comparisons) {
      if (!fields.includes(c.field)) continue;
      const f = (perField[c.field] ??= [0, 0]);
      f[1]++;
      total++;
      if (c.ok) { f[0]++; correct++; }
    }
  }
  return { correct, total, perField };
}
