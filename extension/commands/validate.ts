/**
 * "Run Validation" (the tfjs runner): runs the CLI as a child process, refuses in untrusted workspaces, streams progress
 * to the dashboards and posts the results as the results of the file they were run on. Reports are saved under the
 * extension's workspace storage (never into the workspace unasked).
 */
import * as vscode from 'vscode';
import { WEBVIEW_PROTOCOL_VERSION as V, type ValidationResultView } from '../../shared/protocol';
import type { CommandFactory, Ctx } from '../ctx';
import type { DashboardHub } from '../dashboard/hub';
import { requireTrust } from '../trust';
import { persistRunnerReport } from '../validation/persist';
import { cancelActiveRun, runCli } from './run';
import { validationOutcome, type ReportGist } from '../validation/outcome';

/** The file a run is for, as a local path, or an error the user sees. */
function localPath(uri: string | undefined): string {
  if (!uri) throw new Error('open a training config first');
  const u = vscode.Uri.parse(uri);
  if (u.scheme !== 'file') throw new Error(`runs need a file on disk, not ${u.scheme}:`);
  return u.fsPath;
}

const cwdOf = (file: string) => vscode.workspace.getWorkspaceFolder(vscode.Uri.file(file))?.uri.fsPath;

/** Parses the last JSON object the CLI printed on stdout. */
export function lastJson(stdout: string): unknown {
  const start = stdout.indexOf('{');
  if (start < 0) return undefined;
  try {
    return JSON.parse(stdout.slice(start));
  } catch {
    return undefined;
  }
}

async function finish(hub: DashboardHub, log: vscode.LogOutputChannel, label: string, run: { code: number | null; cancelled: boolean }, result: ValidationResultView | undefined, report: ReportGist | undefined, lastLine: string): Promise<void> {
  const o = validationOutcome(label, run, !!result, report, lastLine);
  hub.post({ v: V, type: 'validationProgress', state: o.state, fraction: o.state === 'done' ? 1 : 0, message: o.message });
  if (o.showResult && result) hub.post({ v: V, type: 'validationResult', result });
  if (o.level === 'error') {
    log.error(o.message);
    void vscode.window.showErrorMessage(`ShardLens: ${o.message}`, 'Show Output').then((p) => { if (p) log.show(); });
  } else if (o.level === 'warning') {
    log.warn(o.message);
    void vscode.window.showWarningMessage(`ShardLens: ${o.message}`);
  }
}

/** Streams one CLI stderr line to the dashboards; "[k/n]" prefixes give the fraction. */
function progressLine(hub: DashboardHub, line: string): void {
  const m = /\[(\d+)\/(\d+)\]/.exec(line);
  const fraction = m && Number(m[2]) > 0 ? Math.min(1, Number(m[1]) / Number(m[2])) : 0;
  hub.post({ v: V, type: 'validationProgress', state: 'running', fraction, message: line.slice(0, 200) });
}

/** The folder reports are saved in: the workspace's storage, else the extension's global storage. */
export function reportStorage(context: vscode.ExtensionContext): string {
  return (context.storageUri ?? context.globalStorageUri).fsPath;
}

export async function runValidation(ctx: Ctx, uri: string | undefined): Promise<void> {
  if (!requireTrust('Run Validation')) return;
  const { hub, log, extCtx: context } = ctx;
  const file = localPath(uri);
  await vscode.commands.executeCommand('shardlens.validationView.focus').then(undefined, () => undefined);
  hub.post({ v: V, type: 'validationProgress', state: 'running', fraction: 0, message: 'Starting the validation runner…' });
  let lastLine = '';
  const run = await runCli(context.extensionPath, ['validate', file, '--json', '--trust'], 'ShardLens: validating', cwdOf(file), log, (l) => { if (l.trim()) lastLine = l; progressLine(hub, l); });
  const report = lastJson(run.stdout);
  // Saved under the extension's storage with the previous run of the same config attached for comparison.
  const saved = run.cancelled ? {} : await persistRunnerReport(report, { configPath: file, storageDir: reportStorage(context), prefer: 'storage' });
  if (saved.saveError) log.warn(`Validation report not saved: ${saved.saveError}`);
  const gist = typeof report === 'object' && report !== null ? report as ReportGist : undefined;
  await finish(hub, log, 'Validation', run, saved.view && uri ? { ...saved.view, configUri: uri } : saved.view, gist, lastLine);
}

export const runValidationCmd: CommandFactory = (ctx) => (arg) => runValidation(ctx, ctx.targetUri(arg));
export const cancelValidationCmd: CommandFactory = () => () => { cancelActiveRun(); };

