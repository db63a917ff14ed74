/**
 * The ShardLens VS Code client: starts the language server, registers the commands, the status bar item and the
 * dashboards. Estimates work in untrusted workspaces; commands that launch processes refuse there.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { listPresets } from '../shared/model/presets';
import { LspMethods, SETTINGS_SECTION, WEBVIEW_PROTOCOL_VERSION, type AnalysisChangedParams, type AnalysisResult, type DashboardView, type MemoryUnits } from '../shared/protocol';
import { cancelProbes, PROBE_COMMANDS, registerProbeCommands } from './probe/commands';
import { DOCUMENT_SELECTOR, startClient } from './client';
import { selectCluster } from './commands/cluster';
import { applyLayout, layoutTarget } from './commands/layout';
import { selectModel } from './commands/model';
import { runValidation } from './commands/validate';
import { cancelActiveRun } from './commands/run';
import { coreEstimate } from './dashboard/estimator';
import { DashboardHub } from './dashboard/hub';
import { DashboardPanel, registerDashboards } from './dashboard/panel';
import { StatusBar, summaryOf } from './statusBar';

let client: LanguageClient | undefined;

const units = (): MemoryUnits => (vscode.workspace.getConfiguration(SETTINGS_SECTION).get<string>('units') === 'GB' ? 'GB' : 'GiB');

/** True when ShardLens annotates this document. */
function isConfig(doc: vscode.TextDocument): boolean {
  return vscode.languages.match(DOCUMENT_SELECTOR as vscode.DocumentSelector, doc) > 0;
}

/** The URI a command acts on: its argument (from a code lens or menu), else the dashboards' file, else the editor's. */
function targetUri(hub: DashboardHub, arg: unknown): string | undefined {
  if (arg instanceof vscode.Uri) return arg.toString();
  if (typeof arg === 'string' && arg) return arg;
  const ed = vscode.window.activeTextEditor;
  if (ed && isConfig(ed.document)) return ed.document.uri.toString();
  return hub.uri;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel('ShardLens', { log: true });
  const status = new StatusBar(units);
  const hub = new DashboardHub(log, () => client, units, coreEstimate, (r) => status.update(summaryOf(r)));
  context.subscriptions.push(log, status, hub, ...registerDashboards(context.extensionUri, hub));

  const openDashboard = async (view: DashboardView, arg: unknown) => {
    const uri = targetUri(hub, arg);
    DashboardPanel.show(context.extensionUri, hub, view);
    if (uri && uri !== hub.uri) await hub.setUri(uri);
    else await hub.refresh();
  };
  const guarded = (name: string, fn: (arg: unknown) => unknown) => vscode.commands.registerCommand(name, async (arg: unknown) => {
    try {
      await fn(arg);
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      log.error(`${name} failed: ${msg}`);
      void vscode.window.showErrorMessage(`ShardLens: ${msg}`, 'Show Output').then((p) => { if (p) log.show(); });
    }
  });
  context.subscriptions.push(
    guarded('shardlens.simulateStep', (arg) => openDashboard('simulation', arg)),
    guarded('shardlens.openDashboard', (arg) => openDashboard('memory', arg)),
    guarded('shardlens.runValidation', (arg) => runValidation(context, log, hub, targetUri(hub, arg))),
    // "Run on PyTorch" is the probe's local run: mode and interpreter pick, progress, cancel, comparison with the estimate.
    guarded('shardlens.runProbe', (arg) => vscode.commands.executeCommand(PROBE_COMMANDS.runLocal, targetUri(hub, arg))),
    guarded('shardlens.cancelValidation', () => { cancelActiveRun(); }),
    guarded('shardlens.selectCluster', () => selectCluster()),
    guarded('shardlens.selectModel', () => selectModel(listPresets().map((p) => ({ id: p.id, name: p.name })))),
    guarded('shardlens.showOutput', () => log.show()),
    guarded('shardlens.applyLayout', (arg) => {
      const target = layoutTarget(arg);
      return applyLayout(client, targetUri(hub, target.uri), units(), target.index);
    }),
  );

  registerProbeCommands(context, {
    getPlan: async (uri) => {
      const u = uri ?? targetUri(hub, undefined);
      if (!u || !client) return undefined;
      const r = await client.sendRequest<AnalysisResult | null>(LspMethods.analysis, { uri: u });
      return r?.plan;
    },
    showResult: (result) => {
      DashboardPanel.show(context.extensionUri, hub, 'validation');
      hub.post({ v: WEBVIEW_PROTOCOL_VERSION, type: 'validationResult', result });
    },
    showProgress: (state, message) => hub.post({ v: WEBVIEW_PROTOCOL_VERSION, type: 'validationProgress', state, fraction: state === 'running' ? 0 : 1, message }),
    log,
  });

  const onEditor = (ed: vscode.TextEditor | undefined) => {
    if (!ed) return; // A webview or panel took focus: keep describing the last config file.
    const uri = isConfig(ed.document) ? ed.document.uri.toString() : undefined;
    status.setActive(uri);
    if (uri) void hub.setUri(uri);
  };
  context.subscriptions.push(
    vscode.window.onDidChangeActiveTextEditor(onEditor),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(SETTINGS_SECTION)) { status.setActive(hub.uri); void hub.refresh(); }
    }),
  );
  // After a window reload a restored dashboard may hold the focus: then describe the first visible config editor.
  onEditor(vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors.find((e) => isConfig(e.document)));

  let pending: NodeJS.Timeout | undefined;
  const onAnalysisChanged = (p: AnalysisChangedParams) => {
    status.update(p);
    // Coalesce bursts of edits into one dashboard refresh.
    if (p.uri === hub.uri) {
      if (pending) clearTimeout(pending);
      pending = setTimeout(() => { pending = undefined; void hub.refresh(); }, 100);
    }
  };
  context.subscriptions.push({ dispose: () => { if (pending) clearTimeout(pending); } });
  try {
    client = await startClient(context, log, onAnalysisChanged);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    log.error(`The language server failed to start: ${msg}`);
    status.setState('failed', msg);
    void vscode.window.showErrorMessage(`ShardLens: the language server failed to start: ${msg}`, 'Show Output').then((p) => { if (p) log.show(); });
    return;
  }
  status.setState('running');
  // The active file's summary may have been sent before this window's editor was known: fetch it once.
  void hub.refresh();
}

/** Stops what ShardLens launched (validation runs, probes) before the window closes or the extension is disabled. */
export async function deactivate(): Promise<void> {
  cancelActiveRun();
  await cancelProbes();
  const c = client;
  client = undefined;
  if (c) await c.stop();
}
