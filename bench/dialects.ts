/**
 * Issue 12: how many of the values real launcher configs state ShardLens reads right, per tier of
 * test/fixtures/dialects/split.json: the fresh tiers (keys committed before ShardLens was first run on them), the
 * projects added after the first readers, the held-out third of the first projects and the development set the
 * readers were tuned on. The out-of-sample figure is the first, untouched run of the newest fresh tier
 * (test/fixtures/dialects/first-runs.json): once a tier has been used to fix the readers, its current figure is seen.
 * Values: TP, PP, CP, ZeRO stage or FSDP strategy, micro batch, global batch, accumulation, sequence length.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CORE_FIELDS, FIXTURES, OTHER_FIELDS, accuracy, freshTiers, heldOut, heldOutProjects, loadAnswers, scoreFixture, type AnswerKey, type FixtureResult } from '../test/unit/dialects/score';
import { initFormats } from '../formats/index';

type Figures = Record<string, number | string>;

const pct = (c: number, t: number) => (t ? `${((100 * c) / t).toFixed(1)} % (${c}/${t})` : 'n/a');

/** The figures of one tier: files, stated values per field, other values, crashes, files neither estimated nor refused. */
function tierFigures(out: Figures, name: string, set: readonly FixtureResult[]): void {
  const core = accuracy(set, CORE_FIELDS);
  out[`${name}: files`] = set.length;
  out[`${name}: stated values read right (goal ≥ 95 %)`] = pct(core.correct, core.total);
  for (const f of CORE_FIELDS) { const [c, t] = core.perField[f] ?? [0, 0]; out[`${name}:   ${f}`] = pct(c, t); }
  const other = accuracy(set, OTHER_FIELDS);
  out[`${name}: other stated values (cluster, model, precision)`] = pct(other.correct, other.total);
  out[`${name}: crashes (goal 0)`] = set.filter((r) => r.crashed).length;
  out[`${name}: neither estimated nor refused with a message`] = set.filter((r) => !r.crashed && !r.estimated && !r.refused).length;
}

/** Stated values read right per dialect of a tier, as "dialect c/t" in one line. */
function byDialect(set: readonly FixtureResult[], answers: Record<string, AnswerKey>): string {
  const groups = new Map<string, FixtureResult[]>();
  for (const r of set) { const d = answers[r.fixture]!.dialect; groups.set(d, [...(groups.get(d) ?? []), r]); }
  return [...groups].sort(([a], [b]) => a.localeCompare(b)).map(([d, rs]) => { const a = accuracy(rs, CORE_FIELDS); return `${d} ${a.correct}/${a.total}`; }).join(', ');
}

interface FirstRun { readonly commit: string; readonly correct: number; readonly total: number; readonly perField?: Record<string, [number, number]>; readonly other?: [number, number]; readonly byDialect?: string; readonly tunedSince?: boolean }

/** The recorded first run of the newest fresh tier that has one: the out-of-sample figure. */
function outOfSample(out: Figures, tiers: readonly string[]): void {
  const runs = JSON.parse(readFileSync(join(FIXTURES, 'first-runs.json'), 'utf8')) as Record<string, FirstRun>;
  const name = [...tiers].reverse().find((t) => runs[t]);
  const r = name ? runs[name] : undefined;
  if (!name || !r) return;
  const label = `out-of-sample: ${name} first run (untouched, ${r.commit})`;
  out[`${label}: stated values read right (goal ≥ 95 %)`] = pct(r.correct, r.total);
  for (const f of CORE_FIELDS) { const v = r.perField?.[f]; if (v) out[`${label}:   ${f}`] = pct(v[0], v[1]); }
  if (r.other) out[`${label}: other stated values`] = pct(r.other[0], r.other[1]);
  if (r.byDialect) out[`${label}: by dialect`] = r.byDialect;
  for (const [t, e] of Object.entries(runs).reverse()) {
    if (t === name || t.startsWith('$')) continue;
    out[`earlier first run: ${t} (untouched, ${e.commit})`] = pct(e.correct, e.total);
  }
  for (const [t, e] of Object.entries(runs)) if (e.tunedSince) out[`${t}: note`] = 'used to fix the readers after its first run: its current figure is seen, not out of sample';
}

export async function benchDialects(): Promise<Figures> {
  await initFormats();
  const answers = loadAnswers();
  const held = heldOut();
  const projects = heldOutProjects();
  const tiers = freshTiers();
  const sets = new Map<string, FixtureResult[]>([...tiers.map(([n]) => [n, []] as [string, FixtureResult[]]), ['unseen projects', []], ['held-out', []], ['development', []]]);
  const log = console.log;
  console.log = () => undefined;
  try {
    for (const [fixture, key] of Object.entries(answers)) {
      const tier = tiers.find(([, files]) => files.has(fixture))?.[0];
      const set = tier ?? (projects.has(fixture.split('/')[0]!) ? 'unseen projects' : held.has(fixture) ? 'held-out' : 'development');
      sets.get(set)!.push(await scoreFixture(fixture, key));
    }
  } finally {
    console.log = log;
  }
  const out: Figures = {};
  outOfSample(out, tiers.map(([n]) => n));
  const order = [...tiers.map(([n]) => n).reverse(), 'unseen projects', 'held-out', 'development'];
  for (const name of order) {
    const set = sets.get(name)!;
    tierFigures(out, name, set);
    if (tiers.some(([n]) => n === name)) out[`${name}: by dialect`] = byDialect(set, answers);
  }
  if (process.env.SHARDLENS_BENCH_DETAIL) {
    const only = process.env.SHARDLENS_BENCH_DETAIL;
    for (const [name, set] of sets) {
      if (only !== '1' && only !== name) continue;
      for (const r of set) {
        if (r.crashed) console.log(`  ${name} crash ${r.fixture}: ${r.crashed}`);
        for (const c of r.comparisons) if (!c.ok) console.log(`  ${name} miss ${r.fixture} ${c.field}: want ${c.want}, got ${c.got} (${c.source ?? 'none'})`);
      }
    }
  }
  return out;
}
