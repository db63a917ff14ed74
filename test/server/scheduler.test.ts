/** The analysis scheduler: edits are debounced, stale work is dropped, results are cached per document version. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AnalyzeInput, DocumentAnalysis } from '../../server/analysis/analyze';
import { AnalysisScheduler } from '../../server/analysis/scheduler';
import { normalizeSettings } from '../../server/settings';

function setup(delayMs = 20) {
  const docs = new Map<string, { text: string; version: number }>();
  const analysed: AnalyzeInput[] = [];
  const results: DocumentAnalysis[] = [];
  const s = new AnalysisScheduler({
    delayMs,
    document: (uri) => docs.get(uri),
    settings: async () => normalizeSettings({}),
    analyze: (input) => {
      analysed.push(input);
      return { ...input, format: null, graph: [], referenced: input.text.startsWith('ref:') ? [input.text.slice(4)] : [], collectives: [], assumptions: [], fileDiagnostics: [], problems: [] };
    },
    onResult: (a) => results.push(a),
  });
  return { s, docs, analysed, results };
}

/** Lets promise callbacks run (setImmediate is not mocked, so it runs after the pending microtasks). */
const flush = async () => { for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r)); };

// The debounce runs on mocked timers: each test moves the clock itself, so nothing depends on how fast the machine is.
test('five quick edits give one debounced analysis of the last version', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { s, docs, analysed, results } = setup();
  for (let v = 1; v <= 5; v++) {
    docs.set('file:///a', { text: `v${v}`, version: v });
    s.schedule('file:///a');
  }
  t.mock.timers.tick(19);
  await flush();
  assert.equal(analysed.length, 0, 'nothing runs before the debounce delay');
  t.mock.timers.tick(1);
  await flush();
  assert.equal(analysed.length, 1);
  assert.deepEqual(results.map((r) => r.version), [5]);
  t.mock.timers.tick(10_000);
  await flush();
  assert.equal(analysed.length, 1, 'no timer is left to run again');
});

test('a request is answered from the cache for the same version and recomputed for a new one', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { s, docs, analysed } = setup();
  docs.set('file:///a', { text: 'x', version: 1 });
  const a1 = await s.get('file:///a');
  const a2 = await s.get('file:///a');
  assert.equal(a1, a2);
  assert.equal(analysed.length, 1);
  docs.set('file:///a', { text: 'y', version: 2 });
  s.schedule('file:///a');
  const a3 = await s.get('file:///a');
  assert.equal(a3?.version, 2);
  assert.equal(analysed.length, 2);
  t.mock.timers.tick(20);
  await flush();
  // The debounced run finds the version already analysed and does not compute it again.
  assert.equal(analysed.length, 2);
});

test('closed documents are forgotten and their pending work is dropped', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { s, docs, analysed, results } = setup();
  docs.set('file:///a', { text: 'x', version: 1 });
  s.schedule('file:///a');
  docs.delete('file:///a');
  s.close('file:///a');
  t.mock.timers.tick(20);
  await flush();
  assert.equal(analysed.length, 0);
  assert.equal(results.length, 0);
  assert.equal(await s.get('file:///a'), undefined);
});

test('dependents follow references transitively', async () => {
  const { s, docs } = setup();
  docs.set('file:///yaml', { text: 'ref:file:///ds.json', version: 1 });
  docs.set('file:///ds.json', { text: 'ref:file:///model.json', version: 1 });
  await s.get('file:///yaml');
  await s.get('file:///ds.json');
  assert.deepEqual(s.dependents('file:///model.json').sort(), ['file:///ds.json', 'file:///yaml']);
  assert.deepEqual(s.dependents('file:///ds.json'), ['file:///yaml']);
  assert.deepEqual(s.dependents('file:///yaml'), []);
});
