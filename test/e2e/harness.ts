/**
 * The e2e harness: one fresh code-server 4.100.3 (VS Code 1.100.3) per run with the packaged .vsix installed into a
 * fresh extensions folder, driven by Debian's Chromium through playwright-core (recipe: shared/reference/e2e-recipe.md).
 * The server is started in its own session (detached = setsid) and killed by process group. Waits are conditions.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Frame, type Page } from 'playwright-core';

export const ROOT = resolve(__dirname, '..', '..');
export const CODE_SERVER = join(ROOT, 'test/e2e/.cache/code-server/node_modules/.bin/code-server');
export const CHROMIUM = process.env.SHARDLENS_CHROMIUM ?? '/usr/bin/chromium';
export const SHOTS = join(ROOT, 'test/e2e/shots');
export const VSIX = join(ROOT, 'dist/shardlens.vsix');

/** Why the e2e suite cannot run here, or undefined when it can. In CI a missing tool is a failure, not a skip. */
export function missingTools(): string | undefined {
  if (!existsSync(CODE_SERVER)) return `code-server is not installed (run test/e2e/setup.sh): ${CODE_SERVER}`;
  if (!existsSync(CHROMIUM)) return `chromium is not installed (apt-get install chromium): ${CHROMIUM}`;
  return undefined;
}

/** Polls `check` until it returns a truthy value or the deadline passes (a condition wait, not a sleep). */
export async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) { last = e; }
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Builds the production bundle and packages dist/shardlens.vsix. */
export function packageVsix(): void {
  const r = spawnSync('npm', ['run', 'package'], { cwd: ROOT, encoding: 'utf8', timeout: 180_000 });
  if (r.status !== 0 || !existsSync(VSIX)) throw new Error(`npm run package failed:\n${r.stdout}\n${r.stderr}`);
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => res(port));
    });
    s.on('error', rej);
  });
}

export interface Session {
  readonly run: string;
  readonly ws: string;
  readonly page: Page;
  /** Console errors and uncaught exceptions of the workbench and its webviews (dashboards log rejected messages here). */
  readonly consoleErrors: string[];
  stop(): Promise<void>;
}

/** User settings of the test profile (recipe: no telemetry, no updates, hints on, quick hovers). */
const USER_SETTINGS = {
  'telemetry.telemetryLevel': 'off', 'update.mode': 'none', 'extensions.autoCheckUpdates': false, 'extensions.autoUpdate': false,
  'workbench.startupEditor': 'none', 'security.workspace.trust.enabled': false, 'editor.inlayHints.enabled': 'on',
  'editor.hover.delay': 100, 'json.schemaDownload.enable': false, 'git.enabled': false, 'workbench.tips.enabled': false,
  'editor.codeLens': true, 'workbench.editor.enablePreview': false,
};

/** The window the suites use: the 1280 × 800 laptop screen issue 15 names (dashboards must fit it). */
export const VIEWPORT = { width: 1280, height: 800 } as const;

/** Copies `workspace` to a fresh run folder, installs the .vsix, starts code-server and opens the folder in Chromium. */
export async function startSession(workspace: string, extraFiles: Readonly<Record<string, string>> = {}): Promise<Session> {
  const run = mkdtempSync(join(tmpdir(), 'shardlens-e2e-'));
  const ws = join(run, 'ws');
  cpSync(workspace, ws, { recursive: true });
  for (const [name, from] of Object.entries(extraFiles)) cpSync(from, join(ws, name));
  mkdirSync(join(run, 'ud/User'), { recursive: true });
  writeFileSync(join(run, 'ud/User/settings.json'), JSON.stringify(USER_SETTINGS, null, 2));
  const port = await freePort();
  writeFileSync(join(run, 'cs-config.yaml'), [
    `bind-addr: 127.0.0.1:${port}`, 'auth: none', 'cert: false', 'disable-telemetry: true', 'disable-update-check: true',
    'disable-workspace-trust: true', 'disable-getting-started-override: true', '',
  ].join('\n'));
  const env = { ...process.env, XDG_CONFIG_HOME: join(run, 'xdg'), XDG_DATA_HOME: join(run, 'xdgd') };
  const common = ['--config', join(run, 'cs-config.yaml'), '--user-data-dir', join(run, 'ud'), '--extensions-dir', join(run, 'exts')];
  const inst = spawnSync(CODE_SERVER, [...common, '--install-extension', VSIX], { env, encoding: 'utf8', timeout: 60_000 });
  if (inst.status !== 0) throw new Error(`installing the vsix failed:\n${inst.stdout}\n${inst.stderr}`);
  const server: ChildProcess = spawn(CODE_SERVER, [...common, '--bind-addr', `127.0.0.1:${port}`, '--ignore-last-opened', ws], {
    env, detached: true, stdio: ['ignore', 'ignore', 'pipe'],
  });
  let serverErr = '';
  server.stderr?.setEncoding('utf8').on('data', (d: string) => { serverErr = (serverErr + d).slice(-4000); });
  const base = `http://127.0.0.1:${port}`;
  let context: BrowserContext | undefined;
  const stop = async () => {
    await context?.close().catch(() => undefined);
    if (server.pid && server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      try { process.kill(-server.pid, 'SIGTERM'); } catch { /* Already gone. */ }
      const killed = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 5000))]);
      if (!killed) try { process.kill(-server.pid, 'SIGKILL'); } catch { /* Already gone. */ }
    }
    rmSync(run, { recursive: true, force: true });
  };
  try {
    await until('code-server /healthz', async () => {
      if (server.exitCode !== null) throw new Error(`code-server exited: ${serverErr}`);
      const r = await fetch(`${base}/healthz`).catch(() => undefined);
      return r?.ok;
    }, 30_000);
    context = await chromium.launchPersistentContext(join(run, 'chrome'), {
      executablePath: CHROMIUM, headless: true, viewport: { ...VIEWPORT },
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    });
    const page = context.pages()[0] ?? await context.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (m) => {
      // Errors and warnings, and the webview host's log line of a stalled service worker (see stalledWebviews).
      if (m.type() === 'error' || m.type() === 'warning' || /service worker/i.test(m.text())) consoleErrors.push(`${m.type()}: ${m.text()}`.slice(0, 500));
    });
    page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
    await page.goto(`${base}/?folder=${encodeURIComponent(ws)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
    await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ timeout: 60_000 });
    return { run, ws, page, consoleErrors, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * The last `lines` lines of the extension's output channel ("ShardLens") in this session, newest extension host last:
 * code-server writes it under <user data>/logs/<time>/exthost<N>/shardlens.shardlens/ShardLens.log.
 */
export function extensionLogTail(run: string, lines = 15): string {
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > 4 || !existsSync(dir)) return;
    for (const n of readdirSync(dir).sort()) {
      const p = join(dir, n);
      if (statSync(p).isDirectory()) walk(p, depth + 1);
      else if (n === 'ShardLens.log') found.push(p);
    }
  };
  walk(join(run, 'ud', 'logs'), 0);
  const last = found[found.length - 1];
  return last ? readFileSync(last, 'utf8').trimEnd().split('\n').slice(-lines).join('\n') : '';
}

/** Removes the screenshots whose names start with one of `prefixes` (each suite clears its own, not the others'). */
export function clearShots(prefixes: readonly string[]): void {
  if (!existsSync(SHOTS)) return;
  for (const n of readdirSync(SHOTS)) if (prefixes.some((p) => n.startsWith(p))) rmSync(join(SHOTS, n), { force: true });
}

/** Saves a screenshot under test/e2e/shots (ignored by git) and lists it in the test output. */
export async function shot(page: Page, name: string): Promise<string> {
  mkdirSync(SHOTS, { recursive: true });
  const p = join(SHOTS, `${name.replace(/[^\w.-]+/g, '_')}.png`);
  await page.screenshot({ path: p }).catch(() => undefined);
  console.log(`screenshot: ${p}`);
  return p;
}

/** Monaco renders spaces as NBSP; tests compare normalised text. */
export const norm = (s: string) => s.replace(/\u00a0/g, ' ');

/** Opens a workspace file through Quick Open and waits until its tab is active. */
export async function openFile(page: Page, relPath: string): Promise<void> {
  const name = relPath.split('/').pop() ?? relPath;
  const input = page.locator('.quick-input-widget input');
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first();
  const tab = page.locator('.tab.active', { hasText: name }).first();
  // A webview that takes the focus while it re-renders can close the quick open before it is typed into, and a list
  // still filtering can replace the row under the click (the picker stays open, nothing opens): start over.
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press('Control+P');
      await input.waitFor({ timeout: 10_000 });
      await input.fill(relPath, { timeout: 10_000 });
      // Click the row of this file (Enter could pick a stale first row while the list is still filtering).
      await row.waitFor({ timeout: 10_000 });
      await row.click({ timeout: 10_000 });
      await tab.waitFor({ timeout: 10_000 });
      break;
    } catch (e) {
      if (attempt >= 3) throw e;
      if (await input.isVisible()) await page.keyboard.press('Escape');
    }
  }
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().waitFor();
}

/** The visible text of the active editor, inlay hints included, NBSP normalised. */
export async function editorText(page: Page): Promise<string> {
  return norm(await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().innerText());
}

/** Runs a palette command by its title (e.g. "ShardLens: Simulate Step"). */
export async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(`>${title}`);
  // Click the row whose label is exactly the title: fuzzy matching may rank "Focus on … View" commands first.
  const exact = new RegExp(`^\\s*${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
  const row = page.locator('.quick-input-list .monaco-list-row').filter({ has: page.locator('.label-name', { hasText: exact }) }).first();
  await row.waitFor();
  await row.click();
}

/**
 * Shows the hover at a 1-based line and column: the cursor goes there through "Go to Line/Column" and the hover opens
 * with the "Show or Focus Hover" command, so the hover is about that position whatever the mouse or the hints do.
 */
export async function hoverAt(page: Page, line: number, column: number): Promise<void> {
  await page.keyboard.press('Escape');
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(`:${line}:${column}`);
  await page.keyboard.press('Enter');
  await until('the cursor at the line', async () => {
    const status = norm(await page.locator('.statusbar-item', { hasText: /Ln \d+, Col \d+/ }).first().innerText().catch(() => ''));
    return status.includes(`Ln ${line}, Col ${column}`);
  }, 10_000);
  await runCommand(page, 'Show or Focus Hover');
}

/** The 1-based line and column of the first occurrence of `needle` in a workspace file. */
export function positionOf(text: string, needle: string): { line: number; column: number } {
  const i = text.indexOf(needle);
  if (i < 0) throw new Error(`"${needle}" is not in the file`);
  const before = text.slice(0, i).split('\n');
  return { line: before.length, column: (before[before.length - 1]?.length ?? 0) + 1 };
}

/**
 * code-server serves every webview from the workbench's own origin, and each webview's outer frame registers a service
 * worker under its own URL (pre/index.html: `service-worker.js?...&id=<webview id>`) for the one shared scope. When two
 * webviews load at once, one can find the other's worker already in control, log "Found unexpected service worker
 * controller", and wait for a `controllerchange` that has already happened: its content frame is never created and the
 * view stays blank for good ("Developer: Reload Webviews" re-sends the content to the same stalled frame). Desktop VS
 * Code gives each webview its own origin and never stalls this way. A stalled frame resumes at the next change of
 * controller, which any newly created webview causes; a user gets there by reopening a view. The harness does the same.
 */
const blankSince = new WeakMap<Frame, number>();

/** Outer webview frames that have had no content frame for `graceMs` (stalled, see above). */
export async function stalledWebviews(page: Page, graceMs = 8_000): Promise<Frame[]> {
  const out: Frame[] = [];
  for (const f of page.frames()) {
    if (!/\/webview\/browser\/pre\/index\.html/.test(f.url())) continue;
    const blank = await f.evaluate(() => !document.querySelector('iframe')).catch(() => false);
    if (!blank) { blankSince.delete(f); continue; }
    const since = blankSince.get(f) ?? Date.now();
    blankSince.set(f, since);
    if (Date.now() - since >= graceMs) out.push(f);
  }
  return out;
}

/** One line per webview frame pair (outer id, content, the dashboard page's view and first words), for failure reports. */
export async function describeWebviews(page: Page): Promise<string> {
  const lines: string[] = [];
  for (const f of page.frames()) {
    if (!/\/webview\/browser\/pre\/index\.html/.test(f.url())) continue;
    const id = new URL(f.url()).searchParams.get('id')?.slice(0, 8) ?? '?';
    const inner = f.childFrames()[0];
    const page_ = inner ? await inner.evaluate(() => `${document.body?.dataset.view ?? '-'}: ${(document.getElementById('app')?.textContent ?? '').trim().slice(0, 60)}`).catch((e: Error) => `unreadable (${e.message.slice(0, 60)})`) : 'no content frame';
    const box = await (await f.frameElement().catch(() => null))?.boundingBox().catch(() => null);
    lines.push(`${id} ${box ? `${Math.round(box.width)}x${Math.round(box.height)}@${Math.round(box.x)},${Math.round(box.y)}` : 'hidden'} ${page_}`);
  }
  return lines.join('\n') || 'no webviews';
}

/** How many times the harness had to revive a stalled webview (reported with failures). */
export const revivals = { count: 0 };

/**
 * Revives stalled webviews by creating one new webview: the Layouts side view is toggled twice (expanded and collapsed,
 * or collapsed and expanded), which leaves the layout as it was. The ShardLens view container is opened for it and
 * closed again if it was closed. Returns whether anything was stalled.
 */
export async function reviveStalledWebviews(page: Page): Promise<boolean> {
  if (!(await stalledWebviews(page)).length) return false;
  revivals.count++;
  const checked = page.locator('.activitybar .action-item.checked [aria-label^="ShardLens"]');
  const wasOpen = (await checked.count()) > 0;
  const container = page.locator('.activitybar .action-item [aria-label^="ShardLens"]').first();
  if (!wasOpen) await container.click({ timeout: 5_000 });
  const header = page.locator('.part.sidebar .pane-header', { hasText: /^\s*Layouts/i }).first();
  await header.click({ timeout: 5_000 });
  // Either click created the new webview; give its frame time to register before the view is toggled back.
  await until('a stalled webview to resume', async () => (await stalledWebviews(page, 0)).length === 0, 5_000).catch(() => undefined);
  await header.click({ timeout: 5_000 });
  if (!wasOpen) await container.click({ timeout: 5_000 });
  return true;
}

/**
 * The frame of the dashboard whose document has `selector` (webviews nest: iframe.webview → #active-frame). A webview
 * stalled by code-server's service-worker race is revived once it has been blank for a while (see above).
 */
export async function dashboardFrame(page: Page, selector: string, timeoutMs = 30_000): Promise<Frame> {
  let lastRevival = Date.now();
  return until(`a webview frame with ${selector}`, async () => {
    for (const f of page.frames()) {
      if (!f.url().includes('fake.html') && !f.url().includes('index.html')) continue;
      const n = await f.locator(selector).count().catch(() => 0);
      if (n > 0) return f;
    }
    if (Date.now() - lastRevival > 10_000) {
      lastRevival = Date.now();
      await reviveStalledWebviews(page).catch(() => undefined);
    }
    return undefined;
  }, timeoutMs);
}
