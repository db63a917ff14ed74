/**
 * The server's analysis workers (server/analysis/pool.ts, worker.ts): a worker's analysis reaches the main thread (a
 * function cannot cross threads, so the worker sends it without its what-if and the main thread rebuilds that from the
 * facts graph). Before, every posted analysis failed to clone and each document was analysed twice, the second time
 * on the main thread the workers exist to keep free. Expected: no fallback; the same plan and figures as an analysis on
 * the main thread; a what-if that answers as the main thread's does (micro batch 2 → a plan with micro batch 2).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AnalysisPool } from '../../server/analysis/pool';
import { analyzeDocument, withWhatIf } from '../../server/analysis/analyze';
import { core, initCore } from '../../server/analysis/core';
import { createHost } from '../../server/analysis/host';
import { DEFAULT_SETTINGS, type ShardLensSettings } from '../../shared/protocol';

test('a worker\'s analysis arrives (no main-thread fallback) with what the main thread computes, its what-if rebuilt', async () => {
  await initCore();
  const path = resolve('examples/deepspeed/ds_config_zero2_offload.json');
  const uri = pathToFileURL(path).toString();
  const text = readFileSync(path, 'utf8');
  const settings: ShardLensSettings = { ...DEFAULT_SETTINGS, model: 'llama-3.1-8b' };
  const host = createHost(() => undefined, () => resolve('examples'), Date.now, () => [resolve('examples')]);
  let fallbacks = 0;
  const inThread = (input: Parameters<typeof analyzeDocument>[0]) => analyzeDocument(input, host, core());
  const pool = new AnalysisPool(1, (input) => { fallbacks++; return inThread(input); }, (a) => withWhatIf(a, host, core()));
  try {
    // The worker knows the workspace folders as the server tells it (its reads stay inside them).
    pool.broadcast({ type: 'folders', root: resolve('examples'), folders: [resolve('examples')] });
    const input = { uri, version: 1, text, settings };
    const fromWorker = await pool.analyze(input);
    const local = inThread(input);
    assert.equal(fallbacks, 0, 'the worker\'s result was not delivered');
    assert.ok(fromWorker?.plan && local.plan);
    assert.deepEqual(fromWorker.plan, local.plan);
    assert.deepEqual(fromWorker.memory, local.memory);
    assert.equal(fromWorker.stepTime?.stepSeconds, local.stepTime?.stepSeconds);
    assert.equal(typeof fromWorker.whatIf, 'function');
    const asked = { 'training.microBatch': 2 } as const;
    assert.equal(fromWorker.whatIf?.(asked)?.training.microBatch, 2);
    assert.deepEqual(fromWorker.whatIf?.(asked), local.whatIf?.(asked));
  } finally {
    pool.dispose();
  }
});
