/**
 * "Apply layout" in the language server: the code actions offer the planner's best layouts with the predicted delta
 * in their titles, applying one rewrites the file so that it re-parses to that layout, and `shardlens/planLayouts`
 * returns the layouts best first within GPU memory × the safety margin setting.
 */
import { after, before, describe, test } from 'node:test';
import type { PlanPath } from '../../shared/plan/paths';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { CodeAction } from 'vscode-languageserver';
import { DEFAULT_SETTINGS, LspMethods, type PlanLayoutsResult, type PlannedLayout } from '../../shared/protocol';
import type { ConfigFacts } from '../../shared/plan/facts';
import type { Layout } from '../../shared/planner/types';
import { parseConfig } from '../../formats/index';
import type { DocumentAnalysis } from '../../server/analysis/analyze';
import { MAX_TOP_K, PlannerCache, planDocument } from '../../server/analysis/plannerCache';
import { analyzeDocument } from '../../server/analysis/analyze';
import { realCore } from '../../server/analysis/core';
import { createHost } from '../../server/analysis/host';
import { normalizeSettings } from '../../server/settings';
import { startClient, type Client } from './harness';

const fixture = (name: string) => readFileSync(`test/server/fixtures/${name}`, 'utf8');
const GIB = 2 ** 30;

/** Files whose format the rewriters handle (formats/layout.ts), one per rewriter family. */
const FILES: readonly { readonly name: string; readonly language: string }[] = [
  { name: 'pretrain_llama.sh', language: 'shellscript' },
  { name: 'ds_zero2.json', language: 'json' },
  { name: 'llama3_8b.toml', language: 'toml' },
];

let c: Client;
before(async () => {
  c = await startClient({ model: 'llama-2-7b' });
});
after(() => c.dispose());

let n = 0;
async function openFixture(name: string, language: string): Promise<{ uri: string; text: string }> {
  const uri = `file:///ws/layout${n++}/${name}`;
  const text = fixture(name);
  const d = c.diagnostics(uri);
  await c.open(uri, text, language);
  await d;
  return { uri, text };
}

const planOf = (uri: string, topK?: number) => c.rpc.sendRequest<PlanLayoutsResult | null>(LspMethods.planLayouts, { uri, topK });
const layoutActions = (actions: CodeAction[]) => actions.filter((a) => a.title.startsWith('Apply layout: '));

/** A fact's value, or the value a file means when it omits the key (no parallelism, no recomputation). */
function factValue(facts: ReturnType<typeof parseConfig>['facts'], path: PlanPath, omitted: unknown): unknown {
  return facts[path]?.value ?? omitted;
}

describe('Apply layout code actions', () => {
  for (const f of FILES) {
    test(`${f.name}: titles state the delta and the edit re-parses to the layout`, async () => {
      const { uri, text } = await openFixture(f.name, f.language);
      const plan = await planOf(uri);
      assert.ok(plan?.canApply && plan.layouts.length > 0, JSON.stringify(plan?.problems));
      const actions = layoutActions(await c.actions(uri, []));
      assert.ok(actions.length > 0 && actions.length <= 3, `expected 1–3 layout actions, got ${actions.length}`);
      for (const action of actions) {
        // The title shows the predicted peak and step time before and after (formats/common/edit/delta.ts costDelta).
        const m = /\(peak ([\d.]+) → ([\d.]+) GiB, step [\d.]+ → ([\d.]+) s/.exec(action.title);
        assert.ok(m, action.title);
        const planned: PlannedLayout | undefined = plan.layouts.find((p) => action.title.startsWith(`Apply layout: ${p.summary} (`));
        assert.ok(planned, `no planned layout for ${action.title}`);
        const l: Layout = planned.layout;
        // The "after" figures are the layout's own estimate, rounded to 0.1 GiB.
        assert.equal(Number(m[2]), Number((l.peakReservedBytes / GIB).toFixed(1)));
        const after = c.applied(uri, action);
        assert.notEqual(after, text);
        const facts: ConfigFacts['facts'] = parseConfig(uri, after, plan.format ?? undefined).facts;
        const before = parseConfig(uri, text, plan.format ?? undefined).facts;
        const where: string = `${f.name} → ${planned.summary}`;
        if (before['parallel.tp'] || l.tp !== 1) assert.equal(factValue(facts, 'parallel.tp', 1), l.tp, where);
        if (before['parallel.pp'] || l.pp !== 1) assert.equal(factValue(facts, 'parallel.pp', 1), l.pp, where);
        if (before['parallel.cp'] || l.cp !== 1) assert.equal(factValue(facts, 'parallel.cp', 1), l.cp, where);
        assert.equal(factValue(facts, 'training.microBatch', undefined), l.microBatch, where);
        // Accumulation is written where the format has a key for it; else it follows from the global batch.
        if (facts['training.gradAccum']) assert.equal(facts['training.gradAccum'].value, l.gradAccum, where);
        if (before['training.recompute'] || l.recompute !== 'none') assert.equal(factValue(facts, 'training.recompute', 'none'), l.recompute, where);
      }
    });
  }

  test('a DeepSpeed JSON full of "auto": a layout whose micro batch the file cannot hold is refused with the reason, never half-written', async () => {
    const { uri, text } = await openFixture('ds_z2_auto.json', 'json');
    const plan = await planOf(uri, 5);
    assert.ok(plan && plan.layouts.length > 0);
    for (const p of plan.layouts) {
      if (p.refusal) {
        assert.equal(p.edits.length, 0, p.summary);
        assert.match(p.refusal, /"auto"|cannot/, p.refusal);
        continue;
      }
      // A layout that is offered writes every key its figures rest on: the edited file reads back as the layout.
      const facts = parseConfig(uri, c.applied(uri, { title: '', edit: { changes: { [uri]: p.edits.map((e) => ({ range: e.range, newText: e.newText })) } } }), 'deepspeed').facts;
      assert.equal(facts['training.microBatch']?.value, p.layout.microBatch, p.summary);
    }
    // Micro batch and accumulation are "auto" here (the trainer fills them), so no layout that changes them is offered.
    assert.ok(plan.layouts.filter((p) => p.layout.microBatch !== 8 || p.layout.gradAccum !== 1).every((p) => p.refusal), text.slice(0, 80));
    assert.equal(layoutActions(await c.actions(uri, [])).filter((a) => /micro batch/.test(a.title)).length, 0);
  });

  test('only the rewrite kind is computed: a quick-fix-only request gets no layout actions', async () => {
    const { uri } = await openFixture('ds_zero2.json', 'json');
    const actions: CodeAction[] = await c.rpc.sendRequest('textDocument/codeAction', {
      textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, context: { diagnostics: [], only: ['quickfix'] },
    });
    assert.equal(layoutActions(actions).length, 0);
  });
});

describe('shardlens/planLayouts', () => {
  test('returns fitting layouts best first, each within GPU memory × 0.9 (the default margin)', async () => {
    const { uri } = await openFixture('pretrain_llama.sh', 'shellscript');
    const plan = await planOf(uri, 4);
    assert.ok(plan?.result);
    assert.ok(plan.layouts.length > 0 && plan.layouts.length <= 4);
    const steps = plan.layouts.map((p) => p.layout.stepSeconds);
    assert.deepEqual(steps, [...steps].sort((a, b) => a - b), 'fastest first');
    const a = await c.analysis(uri);
    const gpu = a?.memory?.gpuMemoryBytes ?? 0;
    assert.ok(gpu > 0);
    // A layout fits when its peak is at most GPU memory × margin (issue 8; shared/planner/types.ts).
    assert.ok(Math.abs(plan.result.memoryLimitBytes - 0.9 * gpu) <= 1, `${plan.result.memoryLimitBytes} vs 0.9 × ${gpu}`);
    for (const p of plan.layouts) assert.ok(p.layout.fits && p.layout.peakReservedBytes <= plan.result.memoryLimitBytes);
  });

  test('the shardlens.planner.safetyMargin setting sets the memory limit', async () => {
    const c2 = await startClient({ model: 'llama-2-7b', planner: { safetyMargin: 0.6 } });
    try {
      const uri = 'file:///ws/margin/ds_zero2.json';
      const d = c2.diagnostics(uri);
      await c2.open(uri, fixture('ds_zero2.json'), 'json');
      await d;
      const plan = await c2.rpc.sendRequest<PlanLayoutsResult | null>(LspMethods.planLayouts, { uri });
      const gpu = (await c2.analysis(uri))?.memory?.gpuMemoryBytes ?? 0;
      assert.ok(plan?.result && gpu > 0);
      assert.ok(Math.abs(plan.result.memoryLimitBytes - 0.6 * gpu) <= 1);
      for (const p of plan.layouts) assert.ok(p.layout.peakReservedBytes <= 0.6 * gpu);
    } finally {
      c2.dispose();
    }
  });

  test('a format ShardLens cannot rewrite (nanotron) gets layouts with a note but no code actions', async () => {
    const { uri } = await openFixture('nanotron.yaml', 'yaml');
    const plan = await planOf(uri);
    assert.ok(plan);
    assert.equal(plan.canApply, false);
    assert.ok(plan.layouts.every((p) => p.edits.length === 0 && p.notes.length > 0));
    assert.equal(layoutActions(await c.actions(uri, [])).length, 0);
  });

  test('an analysis without a plan gives problems, not an exception', () => {
    const a: DocumentAnalysis = {
      uri: 'file:///ws/none.json', version: 1, text: '{', settings: DEFAULT_SETTINGS, format: 'deepspeed', graph: [], referenced: [],
      collectives: [], assumptions: [], fileDiagnostics: [], problems: [],
    };
    const plan = planDocument(a);
    assert.equal(plan.layouts.length, 0);
    assert.equal(plan.result, undefined);
    assert.ok(plan.problems.length > 0);
  });

  test('an unknown document gives null', async () => {
    assert.equal(await planOf('file:///ws/nowhere/missing.json'), null);
  });
});

describe('shardlens.planner.safetyMargin', () => {
  const CASES: readonly [string, unknown, number][] = [
    ['absent gives the default 0.9', undefined, 0.9],
    ['0.8 is kept', 0.8, 0.8],
    ['1 (no headroom) is kept', 1, 1],
    ['above 1 falls back', 1.5, 0.9],
    ['below the declared minimum 0.5 falls back', 0.2, 0.9],
    ['a string falls back', '0.8', 0.9],
    ['NaN falls back', Number.NaN, 0.9],
  ];
  for (const [name, raw, want] of CASES) {
    test(name, () => assert.equal(normalizeSettings({ planner: { safetyMargin: raw } }).planner.safetyMargin, want));
  }
});

describe('planner cache', () => {
  const analysisOf = (text: string, version: number): DocumentAnalysis => analyzeDocument(
    { uri: 'file:///ws/cache/ds_config.json', version, text, settings: normalizeSettings({ model: 'llama-2-7b' }) },
    createHost(() => undefined, () => undefined), realCore,
  );

  test('one search per document version; a new version or a larger topK searches again', () => {
    const cache = new PlannerCache();
    const a = analysisOf(fixture('ds_zero2.json'), 1);
    const first = cache.get(a, 3);
    assert.equal(cache.runs, 1);
    assert.deepEqual(cache.get(a, 3), first);
    assert.equal(cache.peek(a, 2)?.layouts.length, Math.min(2, first.layouts.length));
    assert.equal(cache.runs, 1, 'served from the cache');
    cache.get(analysisOf(fixture('ds_zero2.json').replace('"stage": 2', '"stage": 3'), 2), 3);
    assert.equal(cache.runs, 2, 'a new version searches again');
    cache.get(analysisOf(fixture('ds_zero2.json').replace('"stage": 2', '"stage": 3'), 2), MAX_TOP_K);
    assert.equal(cache.runs, 3, 'more layouts than cached search again');
    cache.clear();
    assert.equal(cache.peek(a, 3), undefined);
  });
});
