/**
 * The Layouts dashboard's messages (shared/protocol.ts webview section): the `layouts` message from the extension and
 * the `planLayouts` / `applyLayout` messages from the webview pass their guards only when well-formed. Expected
 * verdicts follow from the protocol types (a figure is finite and non-negative; a parallel degree is a whole number ≥ 1).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isHostToWebviewMessage, isWebviewToHostMessage } from '../../../webview/protocol/guards';
import type { LayoutsMessage } from '../../../shared/protocol';

const row = {
  index: 0, tp: 2, pp: 1, vpp: 1, cp: 1, ep: 1, dp: 4, sharding: 'ZeRO-1', microBatch: 2, gradAccum: 8,
  recompute: 'selective', offload: 'none', stepSeconds: 1.5, peakBytes: 60e9, delta: 'peak 70.0 → 55.9 GiB', notes: [], applicable: true,
};
const ok: LayoutsMessage = {
  v: 1, type: 'layouts',
  layouts: {
    uri: 'file:///w/ds_config.json', gpus: 8, memoryLimitBytes: 72e9, evaluated: 1423, seconds: 0.3, rows: [row],
    pareto: [{ label: 'tp 2 · dp 4', stepSeconds: 1.5, peakBytes: 60e9 }],
  },
};

/** A deep copy of the layouts message with one change applied. */
function broken(edit: (m: Record<string, any>) => void): unknown { // eslint-disable-line @typescript-eslint/no-explicit-any
  const c = structuredClone(ok) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  edit(c);
  return c;
}

describe('layouts message guard (extension → webview)', () => {
  const cases: [string, unknown, boolean][] = [
    ['a well-formed message', ok, true],
    ['with a message and no rows', broken((m) => { m.layouts.rows = []; m.layouts.pareto = []; m.layouts.message = 'No layout fits.'; }), true],
    ['NaN step time', broken((m) => { m.layouts.rows[0].stepSeconds = NaN; }), false],
    ['negative peak', broken((m) => { m.layouts.rows[0].peakBytes = -1; }), false],
    ['a zero TP degree', broken((m) => { m.layouts.rows[0].tp = 0; }), false],
    ['a fractional micro batch', broken((m) => { m.layouts.rows[0].microBatch = 1.5; }), false],
    ['a string degree', broken((m) => { m.layouts.rows[0].dp = '4'; }), false],
    ['notes that are not strings', broken((m) => { m.layouts.rows[0].notes = [1]; }), false],
    ['a missing applicable flag', broken((m) => { delete m.layouts.rows[0].applicable; }), false],
    ['an infinite Pareto point', broken((m) => { m.layouts.pareto[0].stepSeconds = Infinity; }), false],
    ['a missing uri', broken((m) => { delete m.layouts.uri; }), false],
    ['a non-string message', broken((m) => { m.layouts.message = 42; }), false],
    ['another protocol version', broken((m) => { m.v = 2; }), false],
  ];
  for (const [name, msg, want] of cases) test(`${want ? 'accepts' : 'rejects'} ${name}`, () => assert.equal(isHostToWebviewMessage(msg), want));
});

describe('layout messages from the webview', () => {
  const cases: [string, unknown, boolean][] = [
    ['planLayouts', { v: 1, type: 'planLayouts' }, true],
    ['applyLayout', { v: 1, type: 'applyLayout', uri: 'file:///w/ds_config.json', index: 2 }, true],
    ['planLayouts without version', { type: 'planLayouts' }, false],
    ['applyLayout without uri', { v: 1, type: 'applyLayout', index: 0 }, false],
    ['applyLayout with an empty uri', { v: 1, type: 'applyLayout', uri: '', index: 0 }, false],
    ['applyLayout with a negative index', { v: 1, type: 'applyLayout', uri: 'file:///a', index: -1 }, false],
    ['applyLayout with a fractional index', { v: 1, type: 'applyLayout', uri: 'file:///a', index: 0.5 }, false],
    ['applyLayout with a string index', { v: 1, type: 'applyLayout', uri: 'file:///a', index: '0' }, false],
    ['applyLayout with a huge index', { v: 1, type: 'applyLayout', uri: 'file:///a', index: 1e6 }, false],
  ];
  for (const [name, msg, want] of cases) test(`${want ? 'accepts' : 'rejects'} ${name}`, () => assert.equal(isWebviewToHostMessage(msg), want));
});
