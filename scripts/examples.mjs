// The main job on the bundled example workspace: build, estimate every config in examples/, then package the .vsix.
// Exit status is non-zero only when something breaks (a file that does not fit is a result, not a failure).
import { spawnSync } from 'node:child_process';

const run = (cmd, args) => spawnSync(cmd, args, { stdio: 'inherit' }).status ?? 1;

if (run(process.execPath, ['scripts/build.mjs']) !== 0) process.exit(1);
const code = run(process.execPath, ['dist/cli.js', 'estimate', 'examples']);
if (code > 1) {
  console.error(`\nshardlens estimate examples exited with ${code}: some example could not be estimated.`);
  process.exit(code);
}
if (!process.argv.includes('--no-package') && run('npm', ['run', '--silent', 'package']) !== 0) process.exit(1);
