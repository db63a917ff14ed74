/**
 * Issue 16, high: analysis of one document never blocks requests for another. File A is a large launch script (just
 * under the size cap, so it is analysed in full); the hovers on file B are sent once A's analysis is under way (the
 * server has fetched A's settings, the last step before it analyses), and are answered from B's analysis while a
 * worker analyses A. On the server's own thread they would wait for A. The assertion is on order, not on a clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { startClient } from '../server/harness';
import { DS_AUTO, workspace } from './workspace';

/** A Megatron launch script of about `chars` characters: the real command line after many padding statements. */
function bigScript(chars: number): string {
  const lines = ['#!/bin/bash'];
  for (let i = 0; lines.join('\n').length < chars; i++) lines.push(`export SETTING_${i}="\${SETTING_${i}:-value ${i}}"; if [ -n "$DEBUG" ]; then echo "$SETTING_${i}"; fi`);
  lines.push('torchrun pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --micro-batch-size 1 --global-batch-size 64');
  return lines.join('\n');
}

test('hovers on a small file are answered while a large file is analysed in a worker', { timeout: 120_000 }, async () => {
  const ws = workspace();
  const c = await startClient({}, { folder: ws.dir, workers: 2 });
  try {
    const b = pathToFileURL(ws.file('ds_config.json', DS_AUTO)).toString();
    const a = pathToFileURL(ws.file('pretrain_big.sh', '')).toString();
    const dB = c.diagnostics(b);
    await c.open(b, DS_AUTO, 'json');
    await dB;
    await c.hover(b, { line: 0, character: 3 });
    const order: string[] = [];
    let hoversB: Promise<void> | undefined;
    c.onConfiguration = (scope) => {
      if (scope !== a || hoversB) return;
      // Sent just after the settings answer, so the server has everything it needs to start on A.
      hoversB = new Promise((r) => setTimeout(r, 0))
        .then(() => Promise.all([1, 2, 3].map(() => c.hover(b, { line: 0, character: 3 }))))
        .then(() => { order.push('B hovers'); });
    };
    await c.open(a, bigScript(250 * 1024), 'shellscript');
    await c.hints(a).then(() => { order.push('A hints'); });
    await hoversB;
    assert.deepEqual(order, ['B hovers', 'A hints']);
  } finally {
    c.dispose();
    ws.cleanup();
  }
});
