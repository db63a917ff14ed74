/**
 * The dashboards' hub: it tracks the config file the dashboards describe, asks the server for its analysis
 * (`shardlens/analysis`), turns it into a DashboardModel and posts it to every open dashboard. The planner's layouts
 * and the step simulation are asked for only when a view that shows them says so. Every request has a deadline: a
 * view that gets no answer shows why and offers a retry, never "Loading…" for ever. Messages from the webviews are
 * checked with the protocol's type guards; malformed ones are ignored and logged.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import {
  AnalysisRequest, PlanLayoutsRequest, SimulateRequest, WEBVIEW_PROTOCOL_VERSION as V, type AnalysisResult,
  type HostToWebviewMessage, type MemoryUnits, type WebviewToHostMessage,
} from '../../shared/protocol';
import { describeRejected, isWebviewToHostMessage } from '../../webview/protocol/guards';
import { toLayoutsView } from './layouts';
import { toDashboardModel } from './model';
import { simulationAnswer } from './simulation';
import type { EstimateFn } from './variants';
import { BootWatch, type BootTarget } from './bootWatch';

/** Commands the webviews may run, by message name. */
const COMMANDS: Readonly<Record<Extract<WebviewToHostMessage, { type: 'command' }>['command'], string>> = {
  simulateStep: 'shardlens.simulateStep',
  runValidation: 'shardlens.runValidation',
  cancelValidation: 'shardlens.cancelValidation',
  runProbe: 'shardlens.runProbe',
  runOracle: 'shardlens.probe.fake',
  selectCluster: 'shardlens.selectCluster',
  selectModel: 'shardlens.selectModel',
  openDashboard: 'shardlens.openDashboard',
};

/** Deadlines of the server requests, ms: an analysis is fast; a layout search on a large cluster takes longer. */
export const DEADLINES = { analysis: 20_000, simulate: 30_000, layouts: 60_000 } as const;

/** Resolves with `p`, or rejects after `ms` with a sentence that says what did not answer. */
export function withDeadline<T>(p: Thenable<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([Promise.resolve(p), late]).finally(() => clearTimeout(timer));
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export class DashboardHub implements vscode.Disposable {
  private readonly webviews = new Set<vscode.Webview>();
  /** The boot watch of each page that has one (bootWatch.ts): told when the page says `ready`. */
  private readonly boots = new Map<vscode.Webview, BootWatch>();
  /** The config file the dashboards describe (the last active supported editor). */
  uri: string | undefined;
  /** The last model, empty or failed message, replayed to dashboards that open later. */
  private last: HostToWebviewMessage | undefined;
  private lastProgress: HostToWebviewMessage | undefined;
  /** The last validation result per config file, so a dashboard shows the results of the file it describes. */
  private readonly validations = new Map<string, HostToWebviewMessage>();
  private generation = 0;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly client: () => LanguageClient | undefined,
    private readonly units: () => MemoryUnits,
    private readonly estimate: EstimateFn | undefined,
    /** Called with every analysis the hub receives (the status bar uses it as well). */
    private readonly onAnalysis?: (r: AnalysisResult) => void,
  ) {}

  /**
   * Connects a webview: replays the current state and routes its messages. With `page`, a page whose script has not
   * said `ready` a while after it was loaded is loaded again (bootWatch.ts); the returned watch is to be told of
   * later loads and of visibility changes.
   */
  attach(webview: vscode.Webview, page?: Omit<BootTarget, 'log'> & { readonly what: string }): vscode.Disposable & { readonly boot?: BootWatch } {
    this.webviews.add(webview);
    const sub = webview.onDidReceiveMessage((m: unknown) => this.onMessage(webview, m));
    const boot = page
      ? new BootWatch({ visible: page.visible, reload: page.reload, log: (level, line) => this.log[level](line) }, page.what)
      : undefined;
    if (boot) {
      this.boots.set(webview, boot);
      boot.loading();
    }
    const d = new vscode.Disposable(() => {
      sub.dispose();
      boot?.dispose();
      this.boots.delete(webview);
      this.webviews.delete(webview);
    });
    return Object.assign(d, { boot });
  }

  /** Posts a message to every dashboard (and remembers models and validation state for late-comers). */
  post(msg: HostToWebviewMessage): void {
    if (msg.type === 'model' || msg.type === 'empty' || (msg.type === 'failed' && msg.what === 'model')) this.last = msg;
    if (msg.type === 'validationProgress') this.lastProgress = msg;
    if (msg.type === 'validationResult' && msg.result.configUri) this.validations.set(msg.result.configUri, msg);
    for (const w of this.webviews) this.send(w, msg);
  }

  private send(w: vscode.Webview, msg: HostToWebviewMessage): void {
    void w.postMessage(msg).then(undefined, (e: unknown) => this.log.warn(`postMessage failed: ${String(e)}`));
  }

  /** Sets the file the dashboards describe and refreshes them. */
  async setUri(uri: string | undefined): Promise<void> {
    if (uri === this.uri && this.last?.type === 'model') return;
    this.uri = uri;
    await this.refresh();
  }

  /** Asks the server for the current file's analysis and posts the model; stale answers are dropped. */
  async refresh(): Promise<void> {
    const uri = this.uri;
    const client = this.client();
    const gen = ++this.generation;
    if (!uri) return this.post({ v: V, type: 'empty', reason: 'Open a training config (DeepSpeed JSON, Megatron script, YAML or TOML) to see its estimate.' });
    if (!client) return this.post({ v: V, type: 'empty', reason: 'The ShardLens language server is starting…' });
    try {
      const r = await withDeadline(client.sendRequest(AnalysisRequest, { uri }), DEADLINES.analysis, 'The ShardLens language server');
      if (gen !== this.generation) return;
      if (!r) return this.post({ v: V, type: 'empty', reason: 'ShardLens does not recognise this file as a training config.' });
      this.onAnalysis?.(r);
      const built = toDashboardModel(r, this.units(), this.estimate);
      this.post('model' in built ? { v: V, type: 'model', model: built.model } : { v: V, type: 'empty', reason: built.reason });
    } catch (e) {
      if (gen !== this.generation) return;
      this.log.error(`shardlens/analysis failed for ${uri}: ${message(e)}`);
      this.post({ v: V, type: 'failed', what: 'model', reason: `The estimate could not be fetched: ${message(e)}.` });
    }
  }

  private onMessage(webview: vscode.Webview, m: unknown): void {
    if (!isWebviewToHostMessage(m)) {
      this.log.warn(`Ignored a malformed webview message: ${describeRejected(m)}`);
      return;
    }
    switch (m.type) {
      case 'ready':
        this.boots.get(webview)?.ready();
        return this.replay(webview);
      case 'planLayouts': return void this.postLayouts(webview);
      case 'simulate': return void this.postSimulation(webview);
      case 'applyLayout':
        // Only the file the dashboards describe may be rewritten from a webview.
        if (m.uri !== this.uri) return this.log.warn(`Ignored applyLayout for ${m.uri}: the dashboards show ${this.uri ?? 'no file'}.`);
        void vscode.commands.executeCommand('shardlens.applyLayout', { uri: m.uri, index: m.index });
        return;
      case 'command':
        void vscode.commands.executeCommand(COMMANDS[m.command], this.uri).then(undefined, (e: unknown) => {
          this.log.error(`Command ${COMMANDS[m.command]} failed: ${String(e)}`);
          void vscode.window.showErrorMessage(`ShardLens: ${String(e)}`);
        });
    }
  }

  /** A page (re)loaded: it gets the environment, the current model (fetched again after a failure) and the validation state. */
  private replay(webview: vscode.Webview): void {
    this.send(webview, { v: V, type: 'environment', trusted: vscode.workspace.isTrusted });
    if (this.last && this.last.type !== 'failed') this.send(webview, this.last);
    else void this.refresh();
    if (this.lastProgress) this.send(webview, this.lastProgress);
    const result = this.uri ? this.validations.get(this.uri) : undefined;
    if (result) this.send(webview, result);
  }

  /** Asks the server for the planner's layouts of the current file (lazily: only when a Layouts view asks). */
  private async postLayouts(webview: vscode.Webview): Promise<void> {
    const uri = this.uri;
    const client = this.client();
    if (!uri || !client) return this.send(webview, { v: V, type: 'failed', what: 'layouts', reason: 'No config file or language server yet.' });
    try {
      const r = await withDeadline(client.sendRequest(PlanLayoutsRequest, { uri, topK: 10 }), DEADLINES.layouts, 'The layout search');
      if (uri !== this.uri) return;
      if (!r) return this.send(webview, { v: V, type: 'failed', what: 'layouts', reason: 'ShardLens does not recognise this file as a training config.' });
      this.send(webview, { v: V, type: 'layouts', layouts: toLayoutsView(r) });
    } catch (e) {
      this.log.error(`shardlens/planLayouts failed for ${uri}: ${message(e)}`);
      this.send(webview, { v: V, type: 'failed', what: 'layouts', reason: `The layout search failed: ${message(e)}.` });
    }
  }

  /** Asks the server for the step simulation of the current file (only when a Simulate Step view shows). */
  private async postSimulation(webview: vscode.Webview): Promise<void> {
    const uri = this.uri;
    const client = this.client();
    if (!uri || !client) return this.send(webview, { v: V, type: 'failed', what: 'simulation', reason: 'No config file or language server yet.' });
    try {
      const r = await withDeadline(client.sendRequest(SimulateRequest, { uri }), DEADLINES.simulate, 'The step simulator');
      if (uri !== this.uri) return;
      this.send(webview, { v: V, type: 'simulation', uri, simulation: simulationAnswer(r) });
    } catch (e) {
      this.log.error(`shardlens/simulate failed for ${uri}: ${message(e)}`);
      this.send(webview, { v: V, type: 'failed', what: 'simulation', reason: `The simulation failed: ${message(e)}.` });
    }
  }

  dispose(): void {
    for (const b of this.boots.values()) b.dispose();
    this.boots.clear();
    this.webviews.clear();
  }
}
