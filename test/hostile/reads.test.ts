/**
 * Issue 16, high: reading what is not a config file. Each case is built in a temporary workspace and loaded the way
 * the server and the CLI load a file (loadConfigGraph over the Node host). Before the fix each of these read without
 * bound, blocked forever, or walked for minutes; now each is refused (with the reason in the problem) or skipped.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats } from '../../formats/index';
import { loadConfigGraph } from '../../server/formats/workspace';
import { readTextFile } from '../../server/io/read';
import { walkFiles } from '../../server/io/walk';
import { workspaceRoots } from '../../server/io/roots';
import { axolotl, DS_AUTO, hostOf, workspace } from './workspace';

before(async () => { await initFormats(); });

/** A case must finish well within this (the unbounded reads took 45 s to 153 s, or never ended). */
const LIMIT = { timeout: 30_000 };

describe('references to devices, pipes and files outside the workspace', () => {
  for (const target of ['/dev/zero', '/dev/urandom', '/proc/self/pagemap']) {
    test(`deepspeed: ${target} in an Axolotl YAML is refused with the reason`, LIMIT, () => {
      const ws = workspace();
      try {
        const yaml = ws.file('train.yaml', axolotl(target));
        const g = loadConfigGraph(yaml, hostOf(ws));
        const p = g.resolved.problems.find((x) => x.code === 'reference-missing');
        assert.ok(p, 'the missing DeepSpeed config is a problem');
        assert.match(p.message, /outside the workspace/);
        assert.deepEqual(g.dependencies, []);
      } finally {
        ws.cleanup();
      }
    });
  }

  test('a committed symlink to /dev/zero is neither read as a reference nor by the reverse-reference index', LIMIT, () => {
    const ws = workspace();
    try {
      const ds = ws.file('ds_config.json', DS_AUTO);
      ws.link('run_train.sh', '/dev/zero');
      ws.link('ds_link.json', '/dev/zero');
      const yaml = ws.file('train.yaml', axolotl('ds_link.json'));
      const g = loadConfigGraph(ds, hostOf(ws));
      assert.deepEqual(g.dependencies, []);
      const y = loadConfigGraph(yaml, hostOf(ws));
      assert.match(y.resolved.problems.find((x) => x.code === 'reference-missing')?.message ?? '', /outside the workspace/);
    } finally {
      ws.cleanup();
    }
  });

  test('a FIFO named *.yaml in the workspace never blocks the index or a reference', LIMIT, () => {
    const ws = workspace();
    try {
      const ds = ws.file('ds_config.json', DS_AUTO);
      ws.fifo('pipe.yaml');
      ws.fifo('configs/ds_pipe.json');
      ws.file('train.yaml', axolotl('ds_config.json'));
      const g = loadConfigGraph(ds, hostOf(ws));
      assert.equal(g.resolved.plan?.training.microBatch, 4, 'the real launcher is still found');
      const viaPipe = loadConfigGraph(ws.file('other.yaml', axolotl('configs/ds_pipe.json')), hostOf(ws));
      assert.match(viaPipe.resolved.problems.find((x) => x.code === 'reference-missing')?.message ?? '', /named pipe/);
    } finally {
      ws.cleanup();
    }
  });

  test('a file above the size cap is refused by a bounded read, not read and then checked', LIMIT, () => {
    const ws = workspace();
    try {
      const big = ws.file('big.json', `{"pad": "${'x'.repeat(3 * 1024 * 1024)}"}`);
      const r = readTextFile(big, { roots: workspaceRoots([ws.dir]) });
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.reason, 'too-large');
      const yaml = ws.file('train.yaml', axolotl('big.json'));
      assert.match(loadConfigGraph(yaml, hostOf(ws)).resolved.problems.find((x) => x.code === 'reference-missing')?.message ?? '', /not read/);
    } finally {
      ws.cleanup();
    }
  });
});

describe('directory walks', () => {
  test('a folder of self-symlinks is walked once per real folder', LIMIT, () => {
    const ws = workspace();
    try {
      ws.file('ds_config.json', DS_AUTO);
      ws.file('loop/train.yaml', axolotl('../ds_config.json'));
      for (let i = 0; i < 16; i++) ws.link(`loop/self${i}`, '.');
      ws.link('loop/up', '..');
      const w = walkFiles(ws.dir, { roots: workspaceRoots([ws.dir]) });
      // Two real folders (the root and loop/) hold the two files; every link leads back to one of them.
      assert.deepEqual(w.files.map((f) => f.slice(ws.dir.length + 1)).sort(), ['ds_config.json', 'loop/train.yaml']);
      assert.equal(w.truncated, undefined);
      const g = loadConfigGraph(`${ws.dir}/ds_config.json`, hostOf(ws));
      assert.equal(g.resolved.plan?.training.microBatch, 4);
    } finally {
      ws.cleanup();
    }
  });

  test('a symlinked folder pointing outside the workspace is not entered', LIMIT, () => {
    const ws = workspace();
    try {
      ws.link('etc', '/etc');
      ws.file('a.yaml', 'x: 1\n');
      const w = walkFiles(ws.dir, { roots: workspaceRoots([ws.dir]) });
      assert.deepEqual(w.files.map((f) => f.slice(ws.dir.length + 1)), ['a.yaml']);
    } finally {
      ws.cleanup();
    }
  });

  test('file and depth budgets stop a walk and say so', LIMIT, () => {
    const ws = workspace();
    try {
      for (let i = 0; i < 30; i++) ws.file(`f${i}.yaml`, 'x: 1\n');
      ws.file('a/b/c/d/e/deep.yaml', 'x: 1\n');
      assert.equal(walkFiles(ws.dir, { roots: workspaceRoots([ws.dir]), maxFiles: 10 }).truncated, 'files');
      assert.equal(walkFiles(ws.dir, { roots: workspaceRoots([ws.dir]), maxDepth: 2 }).truncated, 'depth');
    } finally {
      ws.cleanup();
    }
  });
});
