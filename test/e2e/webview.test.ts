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
import { collectivesPerStep } from '../../shared/time/collectives';
import { estimateStepTime } from '../../shared/time/estimate';
import { simulateStep } from '../../shared/sim/simulate';
import { toDashboardModel } from '../../extension/dashboard/model';
import { coreEstimate } from '../../extension/dashboard/estimator';
import { contentSecurityPolicy } from '../../extension/dashboard/csp';
import { CHROMIUM, ROOT } from './harness';

const BUNDLE = join(ROOT, 'dist/webview/webview.js');
const missing = !existsSync(CHROMIUM) ? `chromium missing: ${CHROMIUM}` : !existsSync(BUNDLE) ? `bundle missing (npm run build): ${BUNDLE}` : undefined;
if (missing && process.env.CI === 'true') throw new Error(`webview e2e: ${missing} (required in CI)`);

/** A 16-GPU TP 2 × PP 4 × DP 2 Llama-3.1-8B plan: every dashboard has something to draw. */
function model() {
  const plan = makePlan({
    model: findPreset('llama-3.1-8b')!.model, training: { microBatch: 1, gradAccum: 8, globalBatch: 16, seqLen: 4096 },
    parallel: { dp: 2, tp: 2, pp: 4, sharding: { stage: 1, style: 'deepspeed', shardGroupSize: 2 } }, cluster: { gpusPerNode: 8, nodes: 2 },
  });
  const memory = estimateMemory(plan);
  const r = toDashboardModel({
    uri: 'file:///w/ds_config.json', version: 1, format: 'deepspeed', plan, memory, replicated: memory.replicated,
    collectives: collectivesPerStep(plan), stepTime: estimateStepTime(plan), simulation: { ok: true, result: simulateStep(plan) },
    assumptions: [], problems: [],
  }, 'GiB', coreEstimate);
  assert.ok('model' in r);
  return r.model;
}

describe('dashboard bundle in Chromium', { skip: missing ? `webview e2e skipped: ${missing}` : false, timeout: 120_000 }, () => {
  let browser: Browser;
  let server: Server;
  let base = '';
  const m = missing ? undefined : model();

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
</head><body data-view="${u.searchParams.get('view')}" data-initial="${u.searchParams.get('initial') ?? ''}"><main id="app"></main><script nonce="${nonce}" src="/webview.js"></script></body></html>`);
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

  async function open(view: string, width: number, initial = ''): Promise<Page> {
    const page = await browser.newPage({ viewport: { width, height: 1000 } });
    await page.goto(`${base}/?view=${view}&initial=${initial}`);
    await page.waitForFunction(() => (window as unknown as { sent: unknown[] }).sent.length > 0);
    await page.evaluate((model) => window.postMessage({ v: 1, type: 'model', model }, '*'), m);
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
    assert.ok(Math.abs((zoom.max - zoom.min) - m!.simulation!.stepSeconds / 2) < 1e-9 * m!.simulation!.stepSeconds, JSON.stringify(zoom));
    await page.keyboard.press('0');
    const reset = await page.evaluate(() => (window as unknown as { saved: { zoom: { min: number; max: number } } }).saved.zoom);
    assert.deepEqual(reset, { min: 0, max: m!.simulation!.stepSeconds });
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
    await page.evaluate(() => new Promise((r) => setTimeout(r, 50)));
    assert.equal(await page.locator('#summary').getAttribute('data-uri'), 'file:///w/ds_config.json');
    assert.equal(logs.filter((l) => l.includes('ignored a malformed message')).length, 3);
    await page.close();
  });
});
