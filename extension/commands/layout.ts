/**
 * "Apply Layout": asks the server for the planner's best layouts of a config file (`shardlens/planLayouts`), lets the
 * user pick one with its predicted delta in view, confirms, and applies the layout's edits as one WorkspaceEdit.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { PlanLayoutsRequest, type MemoryUnits, type PlanLayoutsResult, type PlannedLayout } from '../../shared/protocol';
import type { CommandFactory } from '../ctx';
import { formatBytes } from '../../shared/units';
import { layoutItems, layoutLabel } from './layoutItems';

/** Layouts offered in the quick pick. */
const TOP_K = 5;

/** The planner's answer for `uri`, with a progress notification while the server searches. */
export async function requestLayouts(client: LanguageClient, uri: string, topK = TOP_K): Promise<PlanLayoutsResult | null> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: 'ShardLens: searching layouts…' },
    () => client.sendRequest(PlanLayoutsRequest, { uri, topK }),
  );
}

/** Why no layout can be offered, or undefined when some can. */
function refusal(r: PlanLayoutsResult, units: MemoryUnits): string | undefined {
  if (!r.result) return `ShardLens cannot plan this file: ${r.problems.map((p) => p.message).join(' ') || 'no model and cluster resolved.'}`;
  if (!r.layouts.length) {
    const low = r.result.lowestMemory;
    return `No layout fits in ${formatBytes(r.result.memoryLimitBytes, units)} per GPU${low ? ` (the lowest peak found is ${formatBytes(low.peakReservedBytes, units)})` : ''}.`;
  }
  if (!r.canApply) return `ShardLens cannot rewrite ${r.format ?? 'this'} files yet; run "shardlens plan" for the layouts.`;
  return undefined;
}

/** Applies one planned layout to the document after a modal confirmation that shows the delta; true when applied. */
export async function confirmAndApply(uri: string, r: PlanLayoutsResult, p: PlannedLayout): Promise<boolean> {
  if (p.refusal) {
    void vscode.window.showWarningMessage(`ShardLens: cannot apply layout ${layoutLabel(p.layout)}. ${p.refusal}`);
    return false;
  }
  if (!p.edits.length) {
    void vscode.window.showInformationMessage(`ShardLens: the file already has this layout.${p.notes.length ? ` ${p.notes.join(' ')}` : ''}`);
    return false;
  }
  const target = vscode.Uri.parse(uri);
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
  if (open && r.version !== null && open.version !== r.version) {
    throw new Error('the file changed while the layouts were computed; run Apply Layout again');
  }
  const choice = await vscode.window.showInformationMessage(
    `Apply layout ${layoutLabel(p.layout)}?`,
    { modal: true, detail: [p.delta, ...p.notes].filter(Boolean).join('\n') },
    'Apply',
  );
  if (choice !== 'Apply') return false;
  const edit = new vscode.WorkspaceEdit();
  for (const e of p.edits) {
    edit.replace(target, new vscode.Range(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character), e.newText);
  }
  const ok = await vscode.workspace.applyEdit(edit);
  if (!ok) throw new Error('VS Code refused the edit (is the file read-only?)');
  return true;
}

/**
 * The command. `index` (from the dashboard's Apply button) skips the quick pick; the confirmation still shows the
 * delta. Throws readable errors; the caller shows them.
 */
export async function applyLayout(client: LanguageClient | undefined, uri: string | undefined, units: MemoryUnits, index?: number): Promise<void> {
  if (!uri) throw new Error('open a training config to apply a layout to it');
  if (!client) throw new Error('the ShardLens language server is not running');
  const r = await requestLayouts(client, uri, Math.max(TOP_K, (index ?? 0) + 1));
  if (!r) throw new Error('ShardLens does not recognise this file as a training config');
  const why = refusal(r, units);
  if (why) {
    void vscode.window.showWarningMessage(`ShardLens: ${why}`);
    return;
  }
  let chosen: PlannedLayout | undefined;
  if (index !== undefined) {
    chosen = r.layouts[index];
    if (!chosen) throw new Error(`layout ${index + 1} is no longer among the best layouts; run Apply Layout again`);
  } else {
    const pick = await vscode.window.showQuickPick(layoutItems(r.layouts, units), {
      title: `ShardLens: layouts for ${r.result?.gpus ?? '?'} GPUs, fastest first (${r.result?.evaluated.toLocaleString('en-US') ?? 0} evaluated)`,
      placeHolder: 'Pick a layout to write into the file (the detail line shows what changes)',
      matchOnDescription: true, matchOnDetail: true,
    });
    if (!pick) return;
    chosen = r.layouts[pick.index];
  }
  if (chosen) await confirmAndApply(uri, r, chosen);
}

/** The command's argument: a URI (string or Uri), or `{ uri, index }` from the dashboard's Apply button. */
export function layoutTarget(arg: unknown): { uri: unknown; index?: number } {
  if (arg && typeof arg === 'object' && !(arg instanceof vscode.Uri)) {
    const o = arg as { uri?: unknown; index?: unknown };
    const index = typeof o.index === 'number' && Number.isInteger(o.index) && o.index >= 0 ? o.index : undefined;
    return { uri: o.uri, index };
  }
  return { uri: arg };
}

/** "Apply Layout" from the palette, a code action or the dashboard's Apply button. */
export const applyLayoutCmd: CommandFactory = (ctx) => (arg) => {
  const target = layoutTarget(arg);
  return applyLayout(ctx.client, ctx.targetUri(target.uri), ctx.units(), target.index);
};
