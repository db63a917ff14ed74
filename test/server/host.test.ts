/** The loader host: open buffers win over disk, disk reads are cached briefly and dropped on a file-change event. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createHost } from '../../server/analysis/host';

test('open buffers overlay disk; cached disk reads expire or are invalidated', () => {
  const dir = mkdtempSync(join(tmpdir(), 'shardlens-host-'));
  try {
    const file = join(dir, 'ds.json');
    const uri = pathToFileURL(file).toString();
    writeFileSync(file, 'disk 1');
    let clock = 0;
    const open = new Map<string, string>();
    const host = createHost((u) => open.get(u), () => dir, () => clock);
    assert.equal(host.readFile(file), 'disk 1');
    open.set(uri, 'buffer');
    assert.equal(host.readFile(file), 'buffer');
    assert.equal(host.readFile(uri), 'buffer');
    open.delete(uri);
    writeFileSync(file, 'disk 2');
    assert.equal(host.readFile(file), 'disk 1', 'a read within the cache time is reused');
    host.invalidate(uri);
    assert.equal(host.readFile(file), 'disk 2');
    writeFileSync(file, 'disk 3');
    clock += 5000;
    assert.equal(host.readFile(file), 'disk 3', 'the cache expires');
    assert.equal(host.readFile(join(dir, 'missing.json')), undefined);
    assert.equal(host.root, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
