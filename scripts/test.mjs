// Runs every test with Node's test runner (TypeScript through tsx).
// `npm test` builds first (end-to-end tests drive the bundled extension, server and CLI), then runs all suites.
// `--unit` runs only the fast pure suites. Extra arguments are passed on as test file filters.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const filters = args.filter((a) => !a.startsWith('--'));

/** Lists test files below a folder, skipping caches and fixtures. */
function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.') || name === 'fixtures') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) find(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

let files = find('test').sort();
if (unitOnly) files = files.filter((f) => !/test[\\/](e2e|nvim|probe|validation)[\\/]/.test(f));
if (filters.length) files = files.filter((f) => filters.some((x) => f.includes(x)));

if (!unitOnly) {
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

// The suites that run the CLI, the server and hostile workspaces run with sealed built-in prototypes: code that
// pollutes a prototype fails there (test/setup/seal-prototypes.mjs).
const SEALED = /test[\\/](cli|server|hostile)[\\/]/;
const groups = [
  { files: files.filter((f) => !SEALED.test(f)), preload: [] },
  { files: files.filter((f) => SEALED.test(f)), preload: ['--import', './test/setup/seal-prototypes.mjs'] },
];
// Each group also writes its failures alone (scripts/failure-summary-reporter.mjs); they are printed again at the end.
const summaries = mkdtempSync(join(tmpdir(), 'shardlens-failures-'));
let status = 0;
for (const [i, g] of groups.entries()) {
  if (!g.files.length) continue;
  const res = spawnSync(
    process.execPath,
    ['--import', 'tsx', ...g.preload, '--test', '--test-timeout=600000',
      '--test-reporter=spec', '--test-reporter-destination=stdout',
      '--test-reporter=./scripts/failure-summary-reporter.mjs', `--test-reporter-destination=${join(summaries, `${i}.txt`)}`,
      ...g.files],
    { stdio: 'inherit', env: { ...process.env, SHARDLENS_TEST: '1' } },
  );
  status ||= res.status ?? 1;
}
const failures = groups.map((_, i) => join(summaries, `${i}.txt`)).filter(existsSync).map((f) => readFileSync(f, 'utf8').trim()).filter(Boolean);
if (failures.length) console.log(`\nFailed tests (repeated from above):\n\n${failures.join('\n\n')}`);
rmSync(summaries, { recursive: true, force: true });
process.exit(status);
