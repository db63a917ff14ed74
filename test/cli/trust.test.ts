/**
 * Issue 16: the CLI reads settings only from the workspace it was pointed at, and launches nothing for a folder the
 * user has not trusted explicitly (--trust; the extension passes it only in a trusted workspace).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DS_CONFIG, FAKE_PYTHON, runCli, tempTree } from './helpers';

describe('trust: nothing is launched without --trust', () => {
  for (const command of ['validate', 'probe']) {
    test(`${command} without --trust exits 2 and launches nothing`, () => {
      const ws = tempTree({ 'ds.json': DS_CONFIG, 'bin/python': FAKE_PYTHON, '.git/HEAD': 'ref: refs/heads/main\n' });
      try {
        const r = runCli([command, 'ds.json', '--ranks', '1'], { cwd: ws.dir, env: { SHARDLENS_PYTHON: join(ws.dir, 'bin/python') } });
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, /--trust/);
        assert.equal(existsSync(join(ws.dir, 'bin/launched.log')), false, 'nothing was launched');
      } finally {
        ws.cleanup();
      }
    });
  }
});

describe('settings come from the workspace the CLI was pointed at, never from above it', () => {
  // A shared scratch folder holds a planted settings file; the user's checkout below it has no project markers.
  const files = {
    'scratch/.vscode/settings.json': JSON.stringify({ 'shardlens.worldSize': 64, 'shardlens.cluster.gpu': 'A100-40GB' }),
    'scratch/checkout/ds.json': DS_CONFIG,
  };

  test('run inside the checkout: the scratch folder\'s settings are not read', () => {
    const t = tempTree(files);
    try {
      const r = runCli(['estimate', 'ds.json', '--json'], { cwd: join(t.dir, 'scratch/checkout') });
      const out = JSON.parse(r.stdout) as { worldSize: number; gpu: string };
      assert.notEqual(out.worldSize, 64);
      assert.doesNotMatch(out.gpu, /A100/);
    } finally {
      t.cleanup();
    }
  });

  test('run from the scratch folder itself (the user chose it): its settings apply', () => {
    const t = tempTree(files);
    try {
      const r = runCli(['estimate', 'checkout/ds.json', '--json'], { cwd: join(t.dir, 'scratch') });
      const out = JSON.parse(r.stdout) as { worldSize: number };
      assert.equal(out.worldSize, 64);
    } finally {
      t.cleanup();
    }
  });

  test('--workspace names the workspace; a file outside it is refused', () => {
    const t = tempTree({ ...files, 'elsewhere/ds.json': DS_CONFIG });
    try {
      const ok = runCli(['estimate', join(t.dir, 'scratch/checkout/ds.json'), '--json', '--workspace', join(t.dir, 'scratch')], { cwd: t.dir });
      assert.equal((JSON.parse(ok.stdout) as { worldSize: number }).worldSize, 64);
      const outside = runCli(['estimate', join(t.dir, 'elsewhere/ds.json'), '--workspace', join(t.dir, 'scratch')], { cwd: t.dir });
      assert.equal(outside.status, 2);
      assert.match(outside.stderr, /outside the workspace/);
    } finally {
      t.cleanup();
    }
  });

  test('an unknown option is a usage error (exit 2), not silently ignored', () => {
    const t = tempTree({ 'ds.json': DS_CONFIG });
    try {
      const r = runCli(['estimate', 'ds.json', '--__proto__', 'x'], { cwd: t.dir });
      assert.equal(r.status, 2);
      assert.match(r.stderr, /unknown option --__proto__/);
    } finally {
      t.cleanup();
    }
  });
});
