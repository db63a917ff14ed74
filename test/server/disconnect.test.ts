// A client that goes away while the server still works (a window closed mid-analysis): the server has nothing to tell
// it then, and its sends must not escape as uncaught exceptions (vscode-jsonrpc throws synchronously on a closed
// connection), which would crash the server process of the editor's other windows sharing it and fail these tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startClient } from './harness';

test('a client that disconnects mid-analysis leaves no uncaught error behind', async () => {
  const errors: unknown[] = [];
  const keep = (e: unknown) => { errors.push(e); };
  process.on('uncaughtException', keep);
  process.on('unhandledRejection', keep);
  try {
    const c = await startClient();
    const text = JSON.stringify({ train_micro_batch_size_per_gpu: 1, gradient_accumulation_steps: 4, zero_optimization: { stage: 3 }, bf16: { enabled: true } }, null, 2);
    await c.open('file:///ws/ds_config.json', text, 'json');
    await c.open('file:///ws/other.json', text, 'json');
    // Gone before the debounced analyses (5 ms) finish and before the close's empty diagnostics are sent.
    c.dispose();
    await new Promise((r) => setTimeout(r, 400));
  } finally {
    process.off('uncaughtException', keep);
    process.off('unhandledRejection', keep);
  }
  assert.deepEqual(errors.map(String), []);
});
