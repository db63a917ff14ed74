/**
 * Issue 16, critical: a cloned repository's `.vscode/settings.json` must not reach `Object.prototype` through the
 * CLI's settings loader. Each test reproduces one attack of the audit in a temporary workspace (a repository with
 * `"shardlens.__proto__.<option>"` keys); the CLI child runs without sealed prototypes, exactly as a user's shell
 * would run it, and with --trust: the audit showed the attacks work even in a folder the user trusts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DS_CONFIG, FAKE_PYTHON, runCli, tempTree } from './helpers';

/** A repository whose settings try to set `Object.prototype[option]` for each entry (values may use $WS). */
function hostileRepo(options: Record<string, string>, extra: Record<string, string> = {}) {
  const tree = tempTree({
    'ds.json': DS_CONFIG,
    'victim.txt': 'precious\n',
    // A script that proves it ran by leaving a marker next to itself.
    'tools/py.sh': '#!/bin/sh\necho ran > "$(dirname "$0")/pwned"\nexit 1\n',
    'tools/validation-runner.js': "require('fs').writeFileSync(require('path').join(__dirname, 'pwned'), 'ran');\n",
    'bin/python': FAKE_PYTHON,
    ...extra,
  });
  const settings = Object.fromEntries(Object.entries(options).map(([k, v]) => [`shardlens.__proto__.${k}`, v.replace('$WS', tree.dir)]));
  return { ...tree, settings };
}

function withRepo(options: Record<string, string>, body: (dir: string) => void): void {
  const repo = hostileRepo(options);
  try {
    mkdirSync(join(repo.dir, '.vscode'), { recursive: true });
    writeFileSync(join(repo.dir, '.vscode/settings.json'), JSON.stringify(repo.settings, null, 1));
    body(repo.dir);
  } finally {
    repo.cleanup();
  }
}

/** The stand-in Python (answers as torch 2.13 on CPU, logs its launch, writes a stub report to --out). */
const env = (dir: string) => ({ SHARDLENS_PYTHON: join(dir, 'bin/python') });

describe('polluted workspace settings (shardlens.__proto__.*)', () => {
  test('validate does not fork the repository\'s own validation-runner.js (distDir)', () => {
    withRepo({ distDir: '$WS/tools' }, (dir) => {
      const r = runCli(['validate', 'ds.json', '--trust', '--ranks', '1', '--steps', '1', '--modes', 'ddp', '--json'], { cwd: dir, sealed: false, timeoutMs: 300_000 });
      assert.equal(existsSync(join(dir, 'tools/pwned')), false, `the repository's runner ran (exit ${r.status}): ${r.stderr.slice(-500)}`);
    });
  });

  test('probe does not run a repository script as the Python interpreter (python)', () => {
    withRepo({ python: '$WS/tools/py.sh' }, (dir) => {
      const r = runCli(['probe', 'ds.json', '--trust', '--ranks', '1'], { cwd: dir, sealed: false, env: env(dir) });
      assert.equal(existsSync(join(dir, 'tools/pwned')), false, `the repository script ran as Python (exit ${r.status})`);
      assert.ok(existsSync(join(dir, 'bin/launched.log')), `the interpreter of the environment was used: ${r.stderr.slice(-500)}`);
    });
  });

  test('simulate without --trace does not overwrite a file named by the repository (trace)', () => {
    withRepo({ trace: '$WS/victim.txt' }, (dir) => {
      const r = runCli(['simulate', 'ds.json'], { cwd: dir, sealed: false });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(readFileSync(join(dir, 'victim.txt'), 'utf8'), 'precious\n');
    });
  });

  test('probe without --out does not replace a file named by the repository with its report (out)', () => {
    withRepo({ out: '$WS/victim.txt' }, (dir) => {
      runCli(['probe', 'ds.json', '--trust', '--ranks', '1'], { cwd: dir, sealed: false, env: env(dir) });
      assert.ok(existsSync(join(dir, 'bin/launched.log')), 'the probe was launched');
      assert.equal(readFileSync(join(dir, 'victim.txt'), 'utf8'), 'precious\n');
      assert.doesNotMatch(readFileSync(join(dir, 'bin/launched.log'), 'utf8'), /victim\.txt/, 'the report path is not the repository\'s');
    });
  });

  test('the ignored keys are named on stderr, and the declared settings of the same file still apply', () => {
    withRepo({ distDir: '$WS/tools' }, (dir) => {
      const file = join(dir, '.vscode/settings.json');
      const s = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      writeFileSync(file, JSON.stringify({ ...s, 'shardlens.cluster.gpu': 'A100-40GB', 'shardlens.worldSize': 16 }));
      const r = runCli(['estimate', 'ds.json', '--json'], { cwd: dir, sealed: false });
      assert.match(r.stderr, /ignored shardlens\.__proto__\.distDir: not a ShardLens setting/);
      const out = JSON.parse(r.stdout) as { gpu: string; worldSize: number };
      assert.equal(out.worldSize, 16);
      assert.match(out.gpu, /A100.*40/);
    });
  });
});
