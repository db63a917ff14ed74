// Runs every test with Node's test runner (TypeScript through tsx).
// `npm test` builds first (end-to-end tests drive the bundled extension, server and CLI), then runs all suites.
// `--unit` runs only the fast pure suites; `--no-retry` runs a failed real-editor file once only. Extra arguments are
// passed on as test file filters.
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
// pollutes a prototype fails there (test/setup/seal-prototypes.mjs). The real-editor suites (test/e2e/) run one file
// at a time, each in its own editor.
const SEALED = /test[\\/](cli|server|hostile)[\\/]/;
const EDITOR = /test[\\/]e2e[\\/]/;
const groups = [
  { files: files.filter((f) => !SEALED.test(f) && !EDITOR.test(f)), preload: [] },
  { files: files.filter((f) => SEALED.test(f)), preload: ['--import', './test/setup/seal-prototypes.mjs'] },
  ...files.filter((f) => EDITOR.test(f)).map((f) => ({ files: [f], preload: [], editor: true })),
];
// A real-editor file that fails is run once more in a fresh editor: code-server in a headless browser can lose a webview
// to its service-worker race, or a step to a busy machine, without a fault of ours. A failure on the second run fails the
// run; the first run's failures are printed either way. `--no-retry` turns this off.
const retry = !args.includes('--no-retry');
// Each run also writes its failures alone (scripts/failure-summary-reporter.mjs); they are printed again at the end.
const summaries = mkdtempSync(join(tmpdir(), 'shardlens-failures-'));
let runs = 0;
/** Runs one group's files in one test process; returns its exit status and the failures it wrote. */
function runGroup(g) {
  const out = join(summaries, `${runs++}.txt`);
  const res = spawnSync(
    process.execPath,
    ['--import', 'tsx', ...g.preload, '--test', '--test-timeout=600000',
      '--test-reporter=spec', '--test-reporter-destination=stdout',
      '--test-reporter=./scripts/failure-summary-reporter.mjs', `--test-reporter-destination=${out}`,
      ...g.files],
    { stdio: 'inherit', env: { ...process.env, SHARDLENS_TEST: '1' } },
  );
  return { status: res.status ?? 1, failures: existsSync(out) ? readFileSync(out, 'utf8').trim() : '' };
}
let status = 0;
const failures = [];
const flaky = [];
for (const g of groups) {
  if (!g.files.length) continue;
  let res = runGroup(g);
  if (res.status !== 0 && g.editor && retry) {
    console.log(`\n${g.files[0]} failed; it runs once more in a fresh editor (a second failure fails the run):\n\n${res.failures}\n`);
    const first = res.failures;
    res = runGroup(g);
    if (res.status === 0) flaky.push(first);
  }
  status ||= res.status;
  if (res.failures) failures.push(res.failures);
}
if (flaky.length) console.log(`\nFailed in a first editor and passed in a second (repeated from above):\n\n${flaky.join('\n\n')}`);
if (failures.length) console.log(`\nFailed tests (repeated from above):\n\n${failures.join('\n\n')}`);
rmSync(summaries, { recursive: true, force: true });
process.exit(status);
