/**
 * Fuzz (issue 16): random file-system shapes built in a temporary folder (nested folders, config files that reference
 * each other, symlinks to files, to folders, to a parent, to themselves, out of the workspace and to devices, dangling
 * links, FIFOs, files above the size cap) through the bounded walk, the reference index and the config loader.
 * Asserts: no throw, no hang (each shape well within the test's time), walks return only regular files whose real
 * path is inside the workspace, and a read never returns text for anything but such a file.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, realpathSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { initFormats } from '../../formats/index';
import { loadConfigGraph } from '../../server/formats/workspace';
import { readTextFile } from '../../server/io/read';
import { workspaceRoots } from '../../server/io/roots';
import { walkFiles } from '../../server/io/walk';
import { rng } from '../../shared/random';
import { axolotl, DS_AUTO, hostOf, workspace } from '../hostile/workspace';

const SHAPES = Number(process.env.SHARDLENS_FUZZ_SHAPES ?? 25);
const SEED = Number(process.env.SHARDLENS_FUZZ_SEED ?? 20_260_401);

before(async () => { await initFormats(); });

test(`fuzz: ${SHAPES} random file-system shapes through walk, index and loader`, { timeout: 600_000 }, () => {
  const r = rng(SEED);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)] as T;
  for (let shape = 0; shape < SHAPES; shape++) {
    const ws = workspace('shardlens-fuzzfs-');
    try {
      const folders = [''];
      const files: string[] = [];
      const entries = 5 + Math.floor(r() * 40);
      for (let i = 0; i < entries; i++) {
        const dir = pick(folders);
        const name = `${dir ? `${dir}/` : ''}e${i}`;
        const kind = Math.floor(r() * 10);
        if (kind === 0) folders.push(name);
        else if (kind === 1) files.push(ws.file(`${name}/ds_config.json`, DS_AUTO));
        else if (kind === 2) files.push(ws.file(`${name}.yaml`, axolotl(pick(['ds_config.json', '../ds_config.json', `${pick(folders) || '.'}/ds_config.json`, '/dev/zero', 'link.json', 'pipe.json']))));
        else if (kind === 3) ws.link(`${name}.json`, pick(['/dev/zero', '/etc/hostname', '/proc/self/pagemap', 'missing.json', '.', '..', ws.dir]));
        else if (kind === 4) ws.link(name, pick(['.', '..', ws.dir, '/etc', '/']));
        else if (kind === 5) ws.fifo(`${name}.yaml`);
        else if (kind === 6) ws.file(`${name}.json`, `{"pad": "${'x'.repeat(1100 * 1024)}"}`);
        else if (kind === 7) ws.link(`${name}/link.json`, pick(files.length ? files : ['/dev/zero']));
        else files.push(ws.file(`${name}.sh`, `#!/bin/bash\ndeepspeed train.py --deepspeed ${pick(['ds_config.json', 'e1/ds_config.json', '/dev/urandom'])}\n`));
      }
      const roots = workspaceRoots([ws.dir]);
      const where = `shape ${shape} (seed ${SEED})`;
      const walk = walkFiles(ws.dir, { roots });
      for (const f of walk.files) {
        const real = realpathSync(f);
        assert.ok(!relative(ws.dir, real).startsWith('..'), `${where}: ${f} → ${real} is outside`);
        assert.ok(statSync(real).isFile(), `${where}: ${f} is not a regular file`);
      }
      const host = hostOf(ws);
      for (const f of [...files, ...walk.files].slice(0, 30)) {
        const g = loadConfigGraph(f, host);
        for (const d of g.dependencies) assert.ok(statSync(d).isFile() && !relative(ws.dir, realpathSync(d)).startsWith('..'), `${where}: read ${d}`);
      }
      for (const p of ['/dev/zero', join(ws.dir, 'e0.yaml'), join(ws.dir, 'e3.json')]) {
        let st;
        try { st = lstatSync(p); } catch { continue; }
        const read = readTextFile(p, { roots });
        if (read.ok) assert.ok(statSync(p).isFile() && !st.isFIFO(), `${where}: read ${p}`);
      }
    } finally {
      ws.cleanup();
    }
  }
});
