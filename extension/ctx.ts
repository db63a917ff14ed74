/**
 * The client's one context object (rust-analyzer's `Ctx`): it holds the language client, the output channel, the
 * status bar and the dashboards' hub, and owns every disposable. Disposables that live as long as the extension go
 * to `pushExtCleanup`; those tied to one language client go to `pushClientCleanup`, so stopping or restarting the
 * server tears down exactly what belongs to it. Commands are factories `(ctx) => Cmd` registered through `register`.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { AnalysisRequest, SETTINGS_SECTION, type AnalysisChangedParams, type AnalysisResult, type MemoryUnits } from '../shared/protocol';
import { DOCUMENT_SELECTOR, startClient } from './client';
import { coreEstimate } from './dashboard/estimator';
import { DashboardHub } from './dashboard/hub';
import { registerDashboards } from './dashboard/panel';
import { StatusBar, summaryOf } from './statusBar';

/** A command body: receives the command's arguments (a URI from a code lens or menu, or nothing). */
export type Cmd = (...args: unknown[]) => unknown;
/** A command as a factory of its body, given the context (rust-analyzer `commands.ts`). */
export type CommandFactory = (ctx: Ctx) => Cmd;

export class Ctx implements vscode.Disposable {
  readonly log: vscode.LogOutputChannel;
  readonly status: StatusBar;
  readonly hub: DashboardHub;
  private client_: LanguageClient | undefined;
  private readonly extCleanup: vscode.Disposable[] = [];
  private clientCleanup: vscode.Disposable[] = [];
  private pendingRefresh: NodeJS.Timeout | undefined;

  constructor(readonly extCtx: vscode.ExtensionContext) {
    this.log = vscode.window.createOutputChannel('ShardLens', { log: true });
    this.status = new StatusBar(() => this.units());
    this.hub = new DashboardHub(this.log, () => this.client_, () => this.units(), coreEstimate, (r) => this.status.update(summaryOf(r)));
    this.pushExtCleanup(this.log, this.status, this.hub, ...registerDashboards(extCtx.extensionUri, this.hub));
    this.pushExtCleanup({ dispose: () => { if (this.pendingRefresh) clearTimeout(this.pendingRefresh); } });
  }

  /** The running language client, or undefined while it starts or after it failed. */
  get client(): LanguageClient | undefined {
    return this.client_;
  }

  get extensionUri(): vscode.Uri {
    return this.extCtx.extensionUri;
  }

  /** The `shardlens.units` setting: every figure the client shows uses it. */
  units(): MemoryUnits {
    return vscode.workspace.getConfiguration(SETTINGS_SECTION).get<string>('units') === 'GB' ? 'GB' : 'GiB';
  }

  /** True when ShardLens annotates this document. */
  isConfig(doc: vscode.TextDocument): boolean {
    return vscode.languages.match(DOCUMENT_SELECTOR as vscode.DocumentSelector, doc) > 0;
  }

  /** The URI a command acts on: its argument (from a code lens or menu), else the editor's config, else the dashboards'. */
  targetUri(arg: unknown): string | undefined {
    if (arg instanceof vscode.Uri) return arg.toString();
    if (typeof arg === 'string' && arg) return arg;
    const ed = vscode.window.activeTextEditor;
    if (ed && this.isConfig(ed.document)) return ed.document.uri.toString();
    return this.hub.uri;
  }

  /** The analysis of a config (the target of `arg`), or undefined without a client or a recognised file. */
  async analysis(arg?: unknown): Promise<AnalysisResult | undefined> {
    const uri = this.targetUri(arg);
    if (!uri || !this.client_) return undefined;
    return (await this.client_.sendRequest(AnalysisRequest, { uri })) ?? undefined;
  }

  pushExtCleanup(...d: vscode.Disposable[]): void {
    this.extCleanup.push(...d);
  }

  pushClientCleanup(...d: vscode.Disposable[]): void {
    this.clientCleanup.push(...d);
  }

  /** Registers commands from their factories; each failure is logged and shown once, never thrown at VS Code. */
  register(commands: Readonly<Record<string, CommandFactory>>): void {
    for (const [name, factory] of Object.entries(commands)) {
      const body = factory(this);
      this.pushExtCleanup(vscode.commands.registerCommand(name, async (...args: unknown[]) => {
        try {
          return await body(...args);
        } catch (e) {
          this.showError(`${name} failed`, e);
          return undefined;
        }
      }));
    }
  }

  /** Logs an error and shows it with a button to the output. */
  showError(where: string, e: unknown): void {
    const msg = e instanceof Error ? e.message : String(e);
    this.log.error(`${where}: ${msg}`);
    void vscode.window.showErrorMessage(`ShardLens: ${msg}`, 'Show Output').then((p) => { if (p) this.log.show(); });
  }

  /** Starts the language server; a failure is shown in the status bar and a notification, not thrown. */
  async start(): Promise<void> {
    try {
      const client = await startClient(this.extCtx, this.log, (p) => this.onAnalysisChanged(p));
      this.client_ = client;
      this.pushClientCleanup({ dispose: () => { this.client_ = undefined; } });
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      this.status.setState('failed', msg);
      this.showError('The language server failed to start', e);
      return;
    }
    this.status.setState('running');
    // The active file's summary may have been sent before this window's editor was known: fetch it once.
    void this.hub.refresh();
  }

  /** Stops the language server and disposes what belongs to it. */
  async stopClient(): Promise<void> {
    const c = this.client_;
    for (const d of this.clientCleanup.splice(0).reverse()) d.dispose();
    if (c) await c.stop().catch((e: unknown) => this.log.warn(`Stopping the language server: ${String(e)}`));
  }

  private onAnalysisChanged(p: AnalysisChangedParams): void {
    this.status.update(p);
    if (p.uri !== this.hub.uri) return;
    // Coalesce bursts of edits into one dashboard refresh.
    if (this.pendingRefresh) clearTimeout(this.pendingRefresh);
    this.pendingRefresh = setTimeout(() => { this.pendingRefresh = undefined; void this.hub.refresh(); }, 100);
  }

  dispose(): void {
    for (const d of this.clientCleanup.splice(0).reverse()) d.dispose();
    for (const d of this.extCleanup.splice(0).reverse()) d.dispose();
  }
}
