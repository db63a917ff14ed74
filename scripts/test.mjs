// Runs every test with Node's test runner (TypeScript through tsx).
// `npm test` builds first (end-to-end tests drive the bundled extension, server and CLI), then runs all suites.
// `--unit` runs only the fast pure suites. Extra arguments are passed on as test file filters.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
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
let status = 0;
for (const g of groups) {
  if (!g.files.length) continue;
  const res = spawnSync(
    process.execPath,
    ['--import', 'tsx', ...g.preload, '--test', '--test-reporter=spec', '--test-timeout=600000', ...g.files],
    { stdio: 'inherit', env: { ...process.env, SHARDLENS_TEST: '1' } },
  );
  status ||= res.status ?? 1;
}
process.exit(status);
