/**
 * The ShardLens VS Code client: builds the one context object (`Ctx`), registers the commands from their factories,
 * follows the active config editor and starts the language server. Estimates work in untrusted workspaces; commands
 * that launch processes refuse there.
 */
import * as vscode from 'vscode';
import { SETTINGS_SECTION, WEBVIEW_PROTOCOL_VERSION } from '../shared/protocol';
import { createCommands } from './commands/index';
import { cancelProbes } from './probe/commands';
import { cancelActiveRun } from './commands/run';
import { Ctx } from './ctx';

let ctx: Ctx | undefined;

/** Follows the active editor: the status bar and the dashboards describe the last config file that had the focus. */
function followEditors(c: Ctx): void {
  const onEditor = (ed: vscode.TextEditor | undefined) => {
    if (!ed) return; // A webview or panel took focus: keep describing the last config file.
    const uri = c.isConfig(ed.document) ? ed.document.uri.toString() : undefined;
    c.status.setActive(uri);
    if (uri) void c.hub.setUri(uri);
  };
  c.pushExtCleanup(
    vscode.window.onDidChangeActiveTextEditor(onEditor),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(SETTINGS_SECTION)) { c.status.setActive(c.hub.uri); void c.hub.refresh(); }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => c.hub.post({ v: WEBVIEW_PROTOCOL_VERSION, type: 'environment', trusted: true })),
  );
  // After a window reload a restored dashboard may hold the focus: then describe the first visible config editor.
  onEditor(vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors.find((e) => c.isConfig(e.document)));
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const c = new Ctx(context);
  ctx = c;
  context.subscriptions.push(c);
  c.register(createCommands());
  followEditors(c);
  await c.start();
}

/** Stops what ShardLens launched (validation runs, probes) before the window closes or the extension is disabled. */
export async function deactivate(): Promise<void> {
  cancelActiveRun();
  await cancelProbes();
  await ctx?.stopClient();
  ctx = undefined;
}
