/**
 * Issue 12: how many of the values real launcher configs state ShardLens reads right, per tier of
 * test/fixtures/dialects/split.json: the fresh tiers (keys committed before ShardLens was first run on them; the
 * newest is the out-of-sample figure, older ones were then used to fix the readers), the projects added after the
 * first readers, the held-out third of the first projects and the development set the readers were tuned on.
 * Values: TP, PP, CP, ZeRO stage or FSDP strategy, micro batch, global batch, accumulation, sequence length.
 */
import { CORE_FIELDS, OTHER_FIELDS, accuracy, freshTiers, heldOut, heldOutProjects, loadAnswers, scoreFixture, type AnswerKey, type FixtureResult } from '../test/unit/dialects/score';
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
  const newest = tiers.at(-1)?.[0];
  if (newest) out['out-of-sample tier (newest fresh set)'] = newest;
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
