/**
 * The status bar item for the active config file: fits or not, peak per GPU, GPU; a click opens the dashboard.
 * It is fed by the server's `shardlens/analysisChanged` summaries, kept per document URI.
 */
import * as vscode from 'vscode';
import { trainsNothing, type AnalysisChangedParams, type AnalysisResult } from '../shared/protocol';
import { formatBytes, formatSeconds } from '../shared/units';

/** The status bar summary of a full analysis (the same figures the server's analysisChanged carries). */
export function summaryOf(r: AnalysisResult): AnalysisChangedParams {
  const m = r.memory;
  const peak = m?.stages[m.peakStage]?.peakReservedBytes;
  return {
    uri: r.uri, version: r.version, fits: m ? m.fits : null, peakBytes: peak ?? null,
    gpuMemoryBytes: m ? m.gpuMemoryBytes : null, gpuName: r.plan?.cluster.gpu.name ?? null,
    stepSeconds: r.stepTime?.stepSeconds ?? null, verdict: r.verdict ?? null,
    ...(trainsNothing(r.plan, r.problems) ? { noTraining: true } : {}),
  };
}

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('shardlens.status', vscode.StatusBarAlignment.Right, 100);
  private readonly summaries = new Map<string, AnalysisChangedParams>();
  private activeUri: string | undefined;
  private state: 'starting' | 'running' | 'failed' = 'starting';

  constructor(private readonly units: () => 'GiB' | 'GB') {
    this.item.name = 'ShardLens';
    this.item.command = 'shardlens.openDashboard';
    this.render();
  }

  /** Records the server's summary for a document and redraws if it is the active one. */
  update(p: AnalysisChangedParams): void {
    this.summaries.set(p.uri, p);
    if (p.uri === this.activeUri) this.render();
  }

  /** Sets the document the item describes (undefined hides it). */
  setActive(uri: string | undefined): void {
    this.activeUri = uri;
    this.render();
  }

  setState(state: 'starting' | 'running' | 'failed', detail?: string): void {
    this.state = state;
    this.render(detail);
  }

  /** The summary shown now, for tests and the dashboard. */
  current(): AnalysisChangedParams | undefined {
    return this.activeUri ? this.summaries.get(this.activeUri) : undefined;
  }

  private render(detail?: string): void {
    const item = this.item;
    item.backgroundColor = undefined;
    if (this.state === 'failed') {
      item.text = '$(error) ShardLens';
      item.tooltip = `ShardLens: the language server failed${detail ? `: ${detail}` : ''}. See the ShardLens output.`;
      item.command = 'shardlens.showOutput';
      item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      item.show();
      return;
    }
    item.command = 'shardlens.openDashboard';
    if (!this.activeUri) { item.hide(); return; }
    const s = this.summaries.get(this.activeUri);
    if (this.state === 'starting' || !s) {
      item.text = '$(loading~spin) ShardLens';
      item.tooltip = 'ShardLens is estimating this file.';
      item.show();
      return;
    }
    if (s.noTraining) {
      item.text = '$(circle-slash) ShardLens';
      item.tooltip = 'ShardLens: this script runs no training command (and names no model, batch or layout), so there is nothing to estimate.';
      item.show();
      return;
    }
    if (s.peakBytes === null || s.fits === null) {
      item.text = '$(question) ShardLens';
      item.tooltip = 'ShardLens: this file does not say enough for an estimate yet. Open the dashboard for details.';
      item.show();
      return;
    }
    const units = this.units();
    const peak = formatBytes(s.peakBytes, units);
    const gpu = s.gpuMemoryBytes !== null ? formatBytes(s.gpuMemoryBytes, units) : '?';
    const conditional = s.verdict?.conditional ?? false;
    // A verdict that rests on assumed inputs says so, and its click lists them; otherwise the click opens the dashboard.
    item.text = conditional ? `$(warning) ${peak} / GPU (assumed)` : s.fits ? `$(check) ${peak} / GPU` : `$(error) ${peak} > ${gpu}`;
    if (!s.fits || conditional) item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    item.command = conditional ? { title: 'Show the assumptions', command: 'shardlens.showAssumptions', arguments: [s.uri] } : 'shardlens.openDashboard';
    const md = new vscode.MarkdownString(undefined, true);
    md.appendMarkdown(`**ShardLens** — ${s.verdict?.headline ?? (s.fits ? 'fits' : 'does not fit')} (${s.gpuName ?? 'GPU'})\n\n`);
    md.appendMarkdown(`Peak reserved per GPU ${peak} of ${gpu}${s.stepSeconds !== null ? ` · step ${formatSeconds(s.stepSeconds)}` : ''}\n\n`);
    md.appendMarkdown(conditional ? 'Click to see and set the assumed inputs.' : 'Click to open the dashboard.');
    item.tooltip = md;
    item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
