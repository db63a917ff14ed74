/**
 * The dashboards' hub: it tracks the config file the dashboards describe, asks the server for its analysis
 * (`shardlens/analysis`), turns it into a DashboardModel and posts it to every open dashboard. Messages from the
 * webviews are checked with the protocol's type guards; malformed ones are ignored and logged.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import {
  LspMethods, WEBVIEW_PROTOCOL_VERSION, type AnalysisResult, type HostToWebviewMessage, type MemoryUnits,
  type PlanLayoutsResult, type WebviewToHostMessage,
} from '../../shared/protocol';
import { describeRejected, isWebviewToHostMessage } from '../../webview/protocol/guards';
import { toLayoutsView } from './layouts';
import { toDashboardModel } from './model';
import type { EstimateFn } from './variants';

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

export class DashboardHub implements vscode.Disposable {
  private readonly webviews = new Set<vscode.Webview>();
  private readonly disposables: vscode.Disposable[] = [];
  /** The config file the dashboards describe (the last active supported editor). */
  uri: string | undefined;
  /** The last model or empty message, replayed to dashboards that open later. */
  private last: HostToWebviewMessage | undefined;
  private lastValidation: HostToWebviewMessage | undefined;
  private generation = 0;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly client: () => LanguageClient | undefined,
    private readonly units: () => MemoryUnits,
    private readonly estimate: EstimateFn | undefined,
    /** Called with every analysis the hub receives (the status bar uses it as well). */
    private readonly onAnalysis?: (r: AnalysisResult) => void,
  ) {}

  /** Connects a webview: replays the current state and routes its messages. */
  attach(webview: vscode.Webview): vscode.Disposable {
    this.webviews.add(webview);
    const sub = webview.onDidReceiveMessage((m: unknown) => this.onMessage(webview, m));
    return new vscode.Disposable(() => { sub.dispose(); this.webviews.delete(webview); });
  }

  /** Posts a message to every dashboard (and remembers models and validation state for late-comers). */
  post(msg: HostToWebviewMessage): void {
    if (msg.type === 'model' || msg.type === 'empty') this.last = msg;
    if (msg.type === 'validationResult' || msg.type === 'validationProgress') this.lastValidation = msg;
    for (const w of this.webviews) void w.postMessage(msg).then(undefined, (e: unknown) => this.log.warn(`postMessage failed: ${String(e)}`));
  }

  /** Sets the file the dashboards describe and refreshes them. */
  async setUri(uri: string | undefined): Promise<void> {
    if (uri === this.uri && this.last) return;
    this.uri = uri;
    await this.refresh();
  }

  /** Asks the server for the current file's analysis and posts the model; stale answers are dropped. */
  async refresh(): Promise<void> {
    const uri = this.uri;
    const client = this.client();
    const gen = ++this.generation;
    if (!uri) return this.post({ v: WEBVIEW_PROTOCOL_VERSION, type: 'empty', reason: 'Open a training config (DeepSpeed JSON, Megatron script, YAML or TOML) to see its estimate.' });
    if (!client) return this.post({ v: WEBVIEW_PROTOCOL_VERSION, type: 'empty', reason: 'The ShardLens language server is starting…' });
    try {
      const r = await client.sendRequest<AnalysisResult | null>(LspMethods.analysis, { uri });
      if (gen !== this.generation) return;
      if (!r) return this.post({ v: WEBVIEW_PROTOCOL_VERSION, type: 'empty', reason: 'ShardLens does not recognise this file as a training config.' });
      this.onAnalysis?.(r);
      const built = toDashboardModel(r, this.units(), this.estimate);
      this.post('model' in built
        ? { v: WEBVIEW_PROTOCOL_VERSION, type: 'model', model: built.model }
        : { v: WEBVIEW_PROTOCOL_VERSION, type: 'empty', reason: built.reason });
    } catch (e) {
      if (gen !== this.generation) return;
      this.log.error(`shardlens/analysis failed for ${uri}: ${e instanceof Error ? e.message : String(e)}`);
      this.post({ v: WEBVIEW_PROTOCOL_VERSION, type: 'empty', reason: `The analysis failed: ${e instanceof Error ? e.message : String(e)}` });
    }
  }

  private onMessage(webview: vscode.Webview, m: unknown): void {
    if (!isWebviewToHostMessage(m)) {
      this.log.warn(`Ignored a malformed webview message: ${describeRejected(m)}`);
      return;
    }
    if (m.type === 'ready') {
      if (this.last) void webview.postMessage(this.last);
      else void this.refresh();
      if (this.lastValidation) void webview.postMessage(this.lastValidation);
      return;
    }
    if (m.type === 'planLayouts') return void this.postLayouts(webview);
    if (m.type === 'applyLayout') {
      // Only the file the dashboards describe may be rewritten from a webview.
      if (m.uri !== this.uri) return this.log.warn(`Ignored applyLayout for ${m.uri}: the dashboards show ${this.uri ?? 'no file'}.`);
      void vscode.commands.executeCommand('shardlens.applyLayout', { uri: m.uri, index: m.index });
      return;
    }
    void vscode.commands.executeCommand(COMMANDS[m.command], this.uri).then(undefined, (e: unknown) => {
      this.log.error(`Command ${COMMANDS[m.command]} failed: ${String(e)}`);
      void vscode.window.showErrorMessage(`ShardLens: ${String(e)}`);
    });
  }

  /** Asks the server for the planner's layouts of the current file (lazily: only when a Layouts view asks). */
  private async postLayouts(webview: vscode.Webview): Promise<void> {
    const uri = this.uri;
    const client = this.client();
    if (!uri || !client) return;
    try {
      const r = await client.sendRequest<PlanLayoutsResult | null>(LspMethods.planLayouts, { uri, topK: 10 });
      if (!r || uri !== this.uri) return;
      void webview.postMessage({ v: WEBVIEW_PROTOCOL_VERSION, type: 'layouts', layouts: toLayoutsView(r) } satisfies HostToWebviewMessage);
    } catch (e) {
      this.log.error(`shardlens/planLayouts failed for ${uri}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.webviews.clear();
  }
}
