/**
 * Issue 12: how many of the values real launcher configs state ShardLens reads right, on the development fixtures
 * (the readers were tuned on them), on the held-out third of the same projects, and on projects added after the
 * readers were written (test/fixtures/dialects/split.json), on which nothing was tuned.
 * Values: TP, PP, CP, ZeRO stage or FSDP strategy, micro batch, global batch, accumulation, sequence length.
 */
import { CORE_FIELDS, OTHER_FIELDS, accuracy, heldOut, heldOutProjects, loadAnswers, scoreFixture, type FixtureResult } from '../test/unit/dialects/score';
import { initFormats } from '../formats/index';

type Figures = Record<string, number | string>;

const pct = (c: number, t: number) => (t ? `${((100 * c) / t).toFixed(1)} % (${c}/${t})` : 'n/a');

export async function benchDialects(): Promise<Figures> {
  await initFormats();
  const answers = loadAnswers();
  const held = heldOut();
  const projects = heldOutProjects();
  const dev: FixtureResult[] = [];
  const hold: FixtureResult[] = [];
  const unseen: FixtureResult[] = [];
  const log = console.log;
  console.log = () => undefined;
  try {
    for (const [fixture, key] of Object.entries(answers)) {
      const r = await scoreFixture(fixture, key);
      (projects.has(fixture.split('/')[0]!) ? unseen : held.has(fixture) ? hold : dev).push(r);
    }
  } finally {
    console.log = log;
  }
  const out: Figures = {};
  for (const [name, set] of [['unseen projects', unseen], ['held-out', hold], ['development', dev]] as const) {
    const core = accuracy(set, CORE_FIELDS);
    out[`${name}: files`] = set.length;
    out[`${name}: stated values read right (goal ≥ 95 %)`] = pct(core.correct, core.total);
    for (const f of CORE_FIELDS) { const [c, t] = core.perField[f] ?? [0, 0]; out[`${name}:   ${f}`] = pct(c, t); }
    const other = accuracy(set, OTHER_FIELDS);
    out[`${name}: other stated values (cluster, model, precision)`] = pct(other.correct, other.total);
    out[`${name}: crashes (goal 0)`] = set.filter((r) => r.crashed).length;
    out[`${name}: neither estimated nor refused with a message`] = set.filter((r) => !r.crashed && !r.estimated && !r.refused).length;
  }
  if (process.env.SHARDLENS_BENCH_DETAIL) {
    for (const r of dev) for (const c of r.comparisons) if (!c.ok) console.log(`  dev miss ${r.fixture} ${c.field}: want ${c.want}, got ${c.got} (${c.source ?? 'none'})`);
  }
  return out;
}
