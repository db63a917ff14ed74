/**
 * `npm run bench`: prints ShardLens's speed and size figures (medians and ratios; nothing is asserted).
 * Each suite lives in its own file and exports one async function returning its figures.
 */
type Figures = Record<string, number | string>;
type Suite = { title: string; file: string; fn: string };

const suites: Suite[] = [
  { title: 'Memory model (issue 2)', file: './memory.ts', fn: 'benchMemory' },
  { title: 'Peak memory against published runs (issue 13)', file: './measuredMemory.ts', fn: 'benchMeasuredMemory' },
  { title: 'Memory against the fake-tensor oracle, per category (issue 13)', file: './oracleGrid.ts', fn: 'benchOracleGrid' },
  { title: 'Communication, time and simulation (issue 3)', file: './sim.ts', fn: 'benchSim' },
  { title: 'Step time against published runs, leave-one-source-out (issue 14)', file: './measured.ts', fn: 'benchMeasured' },
  { title: 'Language server (issue 4)', file: './server.ts', fn: 'benchServer' },
  { title: 'Validation runs (issue 6)', file: './validation.ts', fn: 'benchValidation' },
  { title: 'Layout planner (issue 8)', file: './planner.ts', fn: 'benchPlanner' },
  { title: 'Launcher dialects: stated values read right (issue 12)', file: './dialects.ts', fn: 'benchDialects' },
];

/** Formats a figure for the console: large numbers with thousands separators, small ones with 3 significant digits. */
function show(v: number | string): string {
  if (typeof v === 'string') return v;
  if (!Number.isFinite(v)) return String(v);
  return Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : Number(v.toPrecision(3)).toString();
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  let failed = 0;
  for (const s of suites) {
    if (only.length && !only.some((o) => s.file.includes(o))) continue;
    console.log(`\n== ${s.title} ==`);
    try {
      const mod = (await import(s.file)) as Record<string, () => Promise<Figures>>;
      const figures = await mod[s.fn]();
      for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(58)} ${show(v)}`);
    } catch (err) {
      failed++;
      console.log(`  could not run: ${(err as Error).message}`);
    }
  }
  process.exitCode = failed ? 1 : 0;
}

void main();
