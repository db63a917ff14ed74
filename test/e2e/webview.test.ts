/**
 * The dashboards' browser bundle (dist/webview/webview.js) in headless Chromium under the same strict CSP as in
 * VS Code, with a stub of the webview API: every view renders a real model (built with the core), narrow side-bar
 * widths keep the charts, keyboard zoom moves the timeline window, malformed messages are ignored, and no CSP
 * violation occurs. Skipped without Chromium locally; a failure in CI.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { makePlan } from '../../shared/plan/defaults';
import { findPreset } from '../../shared/model/presets';
import { estimateMemory } from '../../shared/memory/estimate';
import { estimateStepTime } from '../../shared/time/estimate';
import { simulateStep } from '../../shared/sim/simulate';
import { toDashboardModel } from '../../extension/dashboard/model';
import { toLayoutsView } from '../../extension/dashboard/layouts';
import { planLayouts } from '../../shared/planner/plan-layouts';
import { coreEstimate } from '../../extension/dashboard/estimator';
import { contentSecurityPolicy } from '../../extension/dashboard/csp';
import { CHROMIUM, ROOT, shot, until } from './harness';

const BUNDLE = join(ROOT, 'dist/webview/webview.js');
const missing = !existsSync(CHROMIUM) ? `chromium missing: ${CHROMIUM}` : !existsSync(BUNDLE) ? `bundle missing (npm run build): ${BUNDLE}` : undefined;
if (missing && process.env.CI === 'true') throw new Error(`webview e2e: ${missing} (required in CI)`);

/** A 16-GPU TP 2 × PP 4 × DP 2 Llama-3.1-8B plan: every dashboard has something to draw. */
const llama8b = (gradAccum: number) => makePlan({
    model: findPreset('llama-3.1-8b')!.model, training: { microBatch: 1, gradAccum, globalBatch: 2 * gradAccum, seqLen: 4096 },
    parallel: { dp: 2, tp: 2, pp: 4, sharding: { stage: 1, style: 'deepspeed', shardGroupSize: 2 } }, cluster: { gpusPerNode: 8, nodes: 2 },
});
const plan = missing ? undefined : llama8b(8);

function model() {
  assert.ok(plan);
  const memory = estimateMemory(plan);
  const r = toDashboardModel({
    uri: 'file:///w/ds_config.json', version: 1, format: 'deepspeed', plan, memory, replicated: memory.replicated,
    // As the server sends them: the step-time model's collectives, with their exposure (server/analysis/analyze.ts).
    collectives: estimateStepTime(plan).collectives, stepTime: estimateStepTime(plan),
    assumptions: [{ path: 'training.microBatch', value: '8', detail: 'train_micro_batch_size_per_gpu "auto" with no referencing file' }], problems: [],
  }, 'GiB', coreEstimate);
  assert.ok('model' in r);
  return r.model;
}

describe('dashboard bundle in Chromium', { skip: missing ? `webview e2e skipped: ${missing}` : false, timeout: 120_000 }, () => {
  let browser: Browser;
  let server: Server;
  let base = '';
  const m = missing ? undefined : model();
  const sim = plan ? simulateStep(plan) : undefined;

  before(async () => {
    const js = readFileSync(BUNDLE, 'utf8');
    server = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname === '/webview.js') { res.setHeader('content-type', 'text/javascript'); res.end(js); return; }
      const nonce = `n${Math.random().toString(36).slice(2)}`;
      res.setHeader('content-type', 'text/html');
      res.end(`<!DOCTYPE html><html><head>
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy("'self'", nonce)}">
<meta property="csp-nonce" content="${nonce}">
<script nonce="${nonce}">window.sent=[];window.saved=undefined;window.acquireVsCodeApi=()=>({postMessage:(m)=>sent.push(m),getState:()=>saved,setState:(s)=>{saved=s}});
window.violations=[];document.addEventListener('securitypolicyviolation',(e)=>violations.push(e.violatedDirective+' '+e.lineNumber));</script>
</head><body data-view="${u.searchParams.get('view')}" data-initial="${u.searchParams.get('initial') ?? ''}" data-initial-id="${nonce}"><main id="app"></main><script nonce="${nonce}" src="/webview.js"></script></body></html>`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const a = server.address();
    base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  });
  after(async () => {
    await browser?.close();
    server?.close();
  });

  async function open(view: string, width: number, initial = '', simulation = sim): Promise<Page> {
    const page = await browser.newPage({ viewport: { width, height: 1000 } });
    await page.goto(`${base}/?view=${view}&initial=${initial}`);
    await page.waitForFunction(() => (window as unknown as { sent: unknown[] }).sent.length > 0);
    await page.evaluate(([model, simulation]) => {
      window.postMessage({ v: 1, type: 'environment', trusted: true }, '*');
      window.postMessage({ v: 1, type: 'model', model }, '*');
      window.postMessage({ v: 1, type: 'simulation', uri: 'file:///w/ds_config.json', simulation: { ok: true, result: simulation } }, '*');
    }, [m, simulation] as const);
    await page.locator('#summary').waitFor();
    return page;
  }

  it('each side view renders its charts at a 260 px side-bar width', async () => {
    const expect: Record<string, string[]> = {
      memory: ['#chart-memory-variants', '#chart-memory-stages', '#chart-memory-sweep'],
      communication: ['#chart-comm-time', '#chart-comm-bytes'],
      simulation: ['#chart-timeline', '#chart-sim-memory'],
    };
    for (const [view, ids] of Object.entries(expect)) {
      const page = await open(view, 260);
      for (const id of ids) {
        const box = await page.locator(id).boundingBox();
        assert.ok(box && box.width > 150 && box.height > 100, `${view} ${id} ${JSON.stringify(box)}`);
      }
      assert.deepEqual(await page.evaluate(() => (window as unknown as { violations: string[] }).violations), [], `${view}: CSP`);
      await page.close();
    }
  });

  it('the panel starts on the requested dashboard and tells the extension it is ready', async () => {
    const page = await open('all', 900, 'simulation');
    await page.locator('#tab-simulation[aria-selected="true"]').waitFor();
    assert.deepEqual(await page.evaluate(() => (window as unknown as { sent: unknown[] }).sent[0]), { v: 1, type: 'ready', view: 'all' });
    await page.close();
  });

  it('the memory figures carry the exact bytes of every stage', async () => {
    const page = await open('memory', 400);
    const v = await page.locator('#memory-figures').getAttribute('data-current-peak-allocated');
    assert.deepEqual(v?.split(',').map(Number), m!.variants[0].stages.map((s) => s.peakAllocatedBytes));
    await page.close();
  });

  it('keyboard zoom narrows the timeline window and is saved in the page state', async () => {
    const page = await open('simulation', 600);
    await page.locator('#chart-timeline').focus();
    await page.keyboard.press('+');
    const zoom = await page.evaluate(() => (window as unknown as { saved: { zoom?: { min: number; max: number } } }).saved.zoom);
    assert.ok(zoom);
    // One "+" halves the visible window around its centre (webview/views/simulation.ts zoomBy(0.5)).
    assert.ok(Math.abs((zoom.max - zoom.min) - sim!.stepSeconds / 2) < 1e-9 * sim!.stepSeconds, JSON.stringify(zoom));
    await page.keyboard.press('0');
    const reset = await page.evaluate(() => (window as unknown as { saved: { zoom: { min: number; max: number } } }).saved.zoom);
    assert.deepEqual(reset, { min: 0, max: sim!.stepSeconds });
    await page.close();
  });

  it('ignores malformed messages and keeps the last good model', async () => {
    const page = await open('memory', 400);
    const logs: string[] = [];
    page.on('console', (c) => logs.push(c.text()));
    await page.evaluate(() => {
      window.postMessage({ v: 1, type: 'model', model: { uri: 'x' } }, '*');
      window.postMessage({ v: 1, type: 'empty' }, '*');
      window.postMessage('<img src=x onerror=alert(1)>', '*');
    });
    await until('three rejections in the console', () => logs.filter((l) => l.includes('ignored a malformed message')).length === 3, 5000);
    assert.equal(await page.locator('#summary').getAttribute('data-uri'), 'file:///w/ds_config.json');
    await page.close();
  });

  it('the Layouts table fits a 600 px panel: every Apply button is visible without scrolling sideways', async () => {
    const page = await open('all', 600, 'layouts');
    await page.evaluate((layouts) => window.postMessage({ v: 1, type: 'layouts', layouts }, '*'), layoutsView());
    await page.locator('#layouts-table tbody tr').first().waitFor();
    const width = await page.evaluate(() => document.documentElement.clientWidth);
    const buttons = page.locator('#layouts-table vscode-button');
    assert.ok(await buttons.count() >= 3);
    for (const b of await buttons.all()) {
      const box = await b.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= width, `Apply at ${JSON.stringify(box)} in a ${width} px page`);
    }
    // Nothing is wider than the page (the long change texts wrap).
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1));
    await shot(page, 'webview-layouts-600');
    await page.close();
  });

  it('the timeline shows, stage by stage, the exposed communication in the passes (TP, DeepSpeed\'s blocking pipeline transfers) the Communication tab lists', async () => {
    const page = await open('all', 900, 'simulation');
    await page.locator('#sim-table tbody tr').first().waitFor({ state: 'attached' });
    const timeline = await page.locator('#sim-table tbody tr').evaluateAll((trs) => trs.map((t) => Number((t as HTMLElement).dataset.exposedComm)));
    // This plan has TP 2 and ZeRO-1 (no ZeRO-3 gathers, no offload) on DeepSpeed's pipeline engine: the communication
    // inside the passes is TP's and the engine's blocking pipeline transfers (shared/time/stageComm.ts).
    // The step-time model lists a stage once when later stages repeat it, so compare the stages it lists.
    const inPasses = (g: string) => g === 'tp' || g === 'pp';
    const listed = [...new Set(m!.communication.filter((c) => c.group === 'tp').map((c) => c.stage))];
    assert.ok(listed.length >= 2, `TP 2 exposes communication on the listed stages ${listed.join(', ')}`);
    assert.equal(timeline.length, sim!.stages.length);
    for (const st of listed) {
      const tab = m!.communication.filter((c) => c.stage === st && inPasses(c.group)).reduce((a, c) => a + c.exposedSeconds, 0);
      assert.ok(tab > 0 && Math.abs(timeline[st] - tab) <= 1e-9 * tab, `stage ${st}: timeline ${timeline[st]} s vs Communication tab ${tab} s`);
    }
    await page.locator('#tab-communication').click();
    const line = page.locator('#comm-exposed');
    const shown = Number(await line.getAttribute('data-exposed-tp')) + Number(await line.getAttribute('data-exposed-pp') ?? 0);
    const stage = Number(await line.getAttribute('data-stage'));
    assert.ok(Math.abs(shown - timeline[stage]) <= 1e-9 * shown, `${shown} vs ${timeline[stage]}`);
    await page.close();
  });

  it('a step of 4,000 micro-batches draws each stage\'s ends, says how many passes it did not draw, and keeps every total', async () => {
    // The same model with a long accumulation: 4 stages × 4,000 micro-batches × 2 passes, more than the simulator draws
    // (shared/sim/simulate.ts DRAWN_PASSES); the figures are totals over every pass (StageTimeline.computeSeconds).
    const longSim = simulateStep(llama8b(4000));
    assert.ok(longSim.ok && longSim.stages.every((st) => st.elided));
    const page = await open('all', 900, 'simulation', longSim);
    await page.locator('#sim-elided').waitFor();
    const passes = longSim.stages.reduce((a, st) => a + (st.elided?.passes ?? 0), 0);
    assert.ok((await page.locator('#sim-elided').innerText()).includes(passes.toLocaleString('en-US')));
    const exposed = await page.locator('#sim-table tbody tr').evaluateAll((trs) => trs.map((t) => Number((t as HTMLElement).dataset.exposedComm)));
    assert.deepEqual(exposed, longSim.stages.map((st) => st.computeSeconds.comm));
    const box = await page.locator('#chart-timeline').boundingBox();
    assert.ok(box && box.width > 150 && box.height > 100);
    assert.deepEqual(await page.evaluate(() => (window as unknown as { violations: string[] }).violations), []);
    await shot(page, 'webview-simulation-long-step');
    await page.close();
  });

  it('the Simulate Step view lists every operator term of the busiest stage with its seconds, formula, source and rates (issue 14 §1)', async () => {
    const page = await open('all', 900, 'simulation');
    await page.locator('#sim-terms tbody tr').first().waitFor({ state: 'attached' });
    const rows = await page.locator('#sim-terms tbody tr').evaluateAll((trs) => trs.map((t) => ({
      term: (t as HTMLElement).dataset.term, seconds: Number((t as HTMLElement).dataset.stepSeconds), cells: Array.from(t.querySelectorAll('td'), (c) => c.textContent ?? ''),
    })));
    const terms = sim!.operatorTerms;
    assert.equal(rows.length, terms.length);
    for (const t of terms) {
      const r = rows.find((x) => x.term === t.name);
      assert.ok(r, `row for ${t.name}`);
      assert.equal(r.seconds, t.stepSeconds);
      // The formula, the citation and where the rates come from are shown as text, never as markup.
      assert.ok(r.cells.includes(t.formula) && r.cells.includes(t.citation) && r.cells.includes(t.provenance), `${t.name}: ${r.cells.join(' | ')}`);
    }
    const summary = await page.locator('#sim-terms-summary').innerText();
    for (const t of terms.filter((x) => x.stepSeconds > 0)) assert.ok(summary.includes(t.label), `${t.label} in ${summary}`);
    assert.ok((await page.locator('#sim-provenance li').count()) >= 3);
    await page.close();
  });

  it('prints why there is no model once, and turns a request without an answer into a message with Retry', async () => {
    const page = await browser.newPage({ viewport: { width: 600, height: 600 } });
    await page.clock.install();
    await page.goto(`${base}/?view=all&initial=memory`);
    await page.waitForFunction(() => (window as unknown as { sent: unknown[] }).sent.length > 0);
    await page.evaluate(() => window.postMessage({ v: 1, type: 'empty', reason: 'Open a training config to see its estimate.' }, '*'));
    await page.locator('#status-line').waitFor();
    assert.equal((await page.locator('body').innerText()).split('Open a training config to see its estimate.').length - 1, 1);
    await page.reload();
    await page.waitForFunction(() => (window as unknown as { sent: unknown[] }).sent.length > 0);
    // No answer at all: after the page's deadline (webview/state.ts WAIT_MS.model) it says so and offers Retry.
    await page.clock.fastForward(26_000);
    await page.locator('#retry-model').waitFor();
    assert.match(await page.locator('#status-line').innerText(), /No answer from the ShardLens extension/);
    await page.locator('#retry-model').click();
    assert.deepEqual(await page.evaluate(() => (window as unknown as { sent: { type: string }[] }).sent.map((x) => x.type)), ['ready', 'ready']);
    await page.close();
  });

  it('validation says what the scaled run checked, keeps results with their file, and mentions trust only when untrusted', async () => {
    const page = await open('all', 900, 'validation');
    const empty = await page.locator('#validation-empty').innerText();
    assert.doesNotMatch(empty, /untrusted/);
    await page.evaluate(() => window.postMessage({ v: 1, type: 'environment', trusted: false }, '*'));
    await until('the untrusted note', async () => /Runs are disabled in untrusted workspaces/.test(await page.locator('#validation-empty').innerText()));
    const checks = Array.from({ length: 91 }, (_, i) => ({ label: `check ${i}`, passed: true, detail: 'exact' }));
    const result = { source: 'tfjs', backend: 'wasm', parameters: 5e5, scaledLayers: 2, checks, runs: [{ mode: 'ddp', ranks: [{ rank: 0, measured: { parameters: 4 }, estimated: { parameters: 4 } }] }] };
    await page.evaluate((r) => window.postMessage({ v: 1, type: 'validationResult', result: { ...r, configUri: 'file:///w/other.json' } }, '*'), result);
    await until('the note that the results belong to another file', async () => /last results are for other\.json/.test(await page.locator('#validation-empty').innerText()));
    await page.evaluate((r) => window.postMessage({ v: 1, type: 'validationResult', result: { ...r, configUri: 'file:///w/ds_config.json' } }, '*'), result);
    const head = await page.locator('#validation-headline').innerText();
    assert.match(head, /Sharding arithmetic verified on a 2-layer scaled model: 91\/91/);
    assert.match(await page.locator('#validation-scope').innerText(), /does not measure the full model/);
    await page.close();
  });
});

/** The Layouts view of a real planner search on the test plan, with long change texts (as a DeepSpeed file gives). */
function layoutsView() {
  assert.ok(plan);
  const result = planLayouts(plan, { topK: 5, format: 'deepspeed' });
  return toLayoutsView({
    uri: 'file:///w/ds_config.json', version: 1, format: 'deepspeed', canApply: true, result, problems: [],
    layouts: result.layouts.map((layout) => ({
      layout, summary: '', edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: '' }],
      delta: 'peak 71.2 → 54.3 GiB, step 9.8 → 7.1 s; TP 2 → 1, PP 4 → 2, micro batch 1 → 2, accumulation 8 → 4',
      notes: ['Pipeline parallelism (PP 2) is set in code (PipelineModule(num_stages=2)), not in the DeepSpeed JSON.'],
    })),
  });
}
