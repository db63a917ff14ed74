/**
 * Issue 16, high: the language server in a hostile workspace (in process, as an editor drives it). Opening a DeepSpeed
 * JSON makes the server look for the launchers that reference it; a symlink to /dev/zero, a FIFO named *.yaml and a
 * folder of self-links used to make that look-up read 12 GB, block forever or walk for minutes on every keystroke.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { startClient } from '../server/harness';
import { axolotl, DS_AUTO, workspace } from './workspace';

test('a DeepSpeed JSON in a workspace of device links, FIFOs and self-links gets its diagnostics and the launcher\'s batch', { timeout: 60_000 }, async () => {
  const ws = workspace();
  const c = await startClient({}, { folder: ws.dir });
  try {
    const ds = ws.file('ds_config.json', DS_AUTO);
    ws.link('run_train.sh', '/dev/zero');
    ws.link('zero.yaml', '/dev/urandom');
    ws.fifo('pipe.yaml');
    ws.fifo('deep/er/pipe.sh');
    for (let i = 0; i < 12; i++) ws.link(`loops/l${i}`, '.');
    ws.file('launch/train.yaml', axolotl('../ds_config.json'));
    const uri = pathToFileURL(ds).toString();
    const d = c.diagnostics(uri);
    await c.open(uri, DS_AUTO, 'json');
    await d;
    const a = await c.analysis(uri);
    // bf16, micro 4 and sequence 4096 come from launch/train.yaml, not from Hugging Face defaults.
    assert.equal(a?.plan?.training.microBatch, 4);
    assert.equal(a?.plan?.training.seqLen, 4096);
    assert.equal(a?.plan?.training.precision, 'bf16-mixed');
    // Edits stay answered (the index is not rebuilt per keystroke).
    const d2 = c.diagnostics(uri);
    await c.change(uri, DS_AUTO.replace('"stage":2', '"stage":3'));
    await d2;
    assert.equal((await c.analysis(uri))?.plan?.parallel.sharding.stage, 3);
  } finally {
    c.dispose();
    ws.cleanup();
  }
});
