/**
 * The Apply Layout quick pick's text and the Layouts dashboard's view (extension/commands/layoutItems.ts,
 * extension/dashboard/layouts.ts): every axis is named in the label, the description shows step time and peak, the
 * detail the delta and notes, and the view drops non-finite figures and passes the webview guard.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { layoutDescription, layoutDetail, layoutItems, layoutLabel } from '../../../extension/commands/layoutItems';
import { toLayoutsView } from '../../../extension/dashboard/layouts';
import { isLayoutsView } from '../../../webview/protocol/guards';
import type { Layout, PlanResult } from '../../../shared/planner/types';
import type { PlanLayoutsResult, PlannedLayout } from '../../../shared/protocol';

const layout = (over: Partial<Layout> = {}): Layout => ({
  tp: 2, pp: 4, vpp: 2, cp: 1, ep: 1, dp: 8, sp: true, zero: 1, sharding: 'megatron-distopt', distributedOptimizer: true,
  microBatch: 1, gradAccum: 16, recompute: 'selective', offload: 'none', stepSeconds: 2.5, peakAllocatedBytes: 50 * 2 ** 30,
  peakReservedBytes: 55 * 2 ** 30, fits: true, estimate: 'full', ...over,
});
const planned = (l: Layout, over: Partial<PlannedLayout> = {}): PlannedLayout => ({
  layout: l, summary: 's', edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } }, newText: '2' }],
  delta: 'peak 70.0 → 55.0 GiB, step 3.0 → 2.5 s; TP 1 → 2', notes: [], ...over,
});
const search = (layouts: Layout[]): PlanResult => ({
  evaluated: 1000, pruned: {}, bounds: [], truncated: false, seconds: 0.2, gpus: 64, memoryLimitBytes: 72 * 2 ** 30,
  layouts, pareto: layouts, problems: [],
});

describe('quick-pick items', () => {
  test('the label names tp/pp/vpp/cp/ep/dp, the sharding, micro×acc, recompute and offload', () => {
    assert.equal(layoutLabel(layout()), 'tp 2 · pp 4 · vpp 2 · cp 1 · ep 1 · dp 8 · dist-opt · micro 1×16 · recompute selective · offload none');
    assert.match(layoutLabel(layout({ sharding: 'fsdp2', fsdpStrategy: 'HYBRID_SHARD', distributedOptimizer: false })), /FSDP HYBRID_SHARD/);
    assert.match(layoutLabel(layout({ sharding: 'deepspeed', zero: 3, distributedOptimizer: false })), /ZeRO-3/);
  });
  test('the description shows step time and peak (55 GiB = 55 × 2³⁰ bytes)', () => {
    assert.equal(layoutDescription(layout(), 'GiB'), 'step 2.50 s · peak 55.0 GiB');
  });
  test('the detail shows the delta and the notes; a layout without edits says so', () => {
    assert.equal(layoutDetail(planned(layout(), { notes: ['Set CP in the launcher.'] })), 'peak 70.0 → 55.0 GiB, step 3.0 → 2.5 s; TP 1 → 2 — Set CP in the launcher.');
    assert.match(layoutDetail(planned(layout(), { edits: [] })), /already has this layout/);
  });
  test('items keep the planner order and rank', () => {
    const items = layoutItems([planned(layout()), planned(layout({ tp: 4, stepSeconds: 3 }))], 'GiB');
    assert.deepEqual(items.map((i) => i.index), [0, 1]);
    assert.match(items[1]!.label, /^2\. tp 4/);
  });
});

describe('Layouts dashboard view', () => {
  const result = (layouts: PlannedLayout[], over: Partial<PlanLayoutsResult> = {}): PlanLayoutsResult => ({
    uri: 'file:///w/pretrain.sh', version: 3, format: 'megatron-script', canApply: true,
    result: search(layouts.map((p) => p.layout)), layouts, problems: [], ...over,
  });
  test('rows carry the figures and pass the webview guard', () => {
    const v = toLayoutsView(result([planned(layout())]));
    assert.equal(v.rows.length, 1);
    assert.equal(v.rows[0]!.peakBytes, 55 * 2 ** 30);
    assert.equal(v.rows[0]!.applicable, true);
    assert.equal(v.pareto.length, 1);
    assert.ok(isLayoutsView(v));
  });
  test('a layout with a non-finite step time is dropped, not drawn', () => {
    const v = toLayoutsView(result([planned(layout({ stepSeconds: Number.NaN })), planned(layout())]));
    assert.deepEqual(v.rows.map((r) => r.index), [1]);
    assert.ok(isLayoutsView(v));
  });
  test('a format without a rewriter shows the rows as not applicable, with a message', () => {
    const v = toLayoutsView(result([planned(layout(), { edits: [] })], { canApply: false, format: 'nanotron' }));
    assert.equal(v.rows[0]!.applicable, false);
    assert.match(v.message ?? '', /cannot rewrite nanotron/);
  });
  test('no search result gives a message and no rows', () => {
    const v = toLayoutsView(result([], { result: undefined, problems: [{ code: 'x', severity: 'error', message: 'No model.', paths: [] }] }));
    assert.equal(v.rows.length, 0);
    assert.match(v.message ?? '', /No model/);
    assert.ok(isLayoutsView(v));
  });
});
