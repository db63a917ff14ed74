/**
 * "Show Assumptions": the verdict's assumed inputs in a quick pick, one click from the code lens or the status bar.
 * Picking one runs its fix: the GPU/cluster or model picker, the edit that writes the key into the file, or the
 * setting that gives the value.
 */
import * as vscode from 'vscode';
import type { AnalysisAssumption } from '../../shared/protocol';
import { INPUT_WORDS, decidingAssumptions } from '../../shared/wording/verdict';
import type { CommandFactory, Ctx } from '../ctx';

/** Runs the fix of one assumption for the document `uri`. */
async function runFix(ctx: Ctx, uri: string, a: AnalysisAssumption): Promise<void> {
  const fix = a.fix;
  if (fix?.edits?.length) {
    const edit = new vscode.WorkspaceEdit();
    for (const e of fix.edits) {
      edit.replace(vscode.Uri.parse(uri), new vscode.Range(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character), e.newText);
    }
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error('VS Code refused the edit (is the file read-only?)');
    return;
  }
  if (fix?.command && fix.command !== 'shardlens.showAssumptions') {
    await vscode.commands.executeCommand(fix.command, uri);
    return;
  }
  if (a.setting) {
    await vscode.commands.executeCommand('workbench.action.openSettings', a.setting);
    return;
  }
  await vscode.commands.executeCommand('shardlens.openDashboard', uri);
  ctx.log.info(`No direct fix for the assumed ${a.path}: ${a.detail}`);
}

export const showAssumptions: CommandFactory = (ctx) => async (arg) => {
  const uri = ctx.targetUri(arg);
  const r = await ctx.analysis(uri);
  if (!uri || !r) throw new Error('open a training config that ShardLens estimates first');
  if (!r.assumptions.length) {
    void vscode.window.showInformationMessage(`ShardLens: nothing is assumed for this file${r.verdict ? `; it ${r.verdict.headline}` : ''}.`);
    return;
  }
  const deciding = new Set(decidingAssumptions(r.assumptions).flatMap((d) => (d.path === 'cluster' ? ['cluster.gpu', 'cluster.worldSize'] : [d.path])));
  const items = [...r.assumptions]
    .sort((x, y) => Number(deciding.has(y.path)) - Number(deciding.has(x.path)))
    .map((a) => ({
      label: `${deciding.has(a.path) ? '$(warning) ' : ''}${INPUT_WORDS[a.path] ?? a.path} = ${a.value}`,
      description: a.fix?.title ?? (a.setting ? `set ${a.setting}` : ''),
      detail: a.detail,
      assumption: a,
    }));
  const pick = await vscode.window.showQuickPick(items, {
    title: `ShardLens: ${r.verdict?.headline ?? 'assumed inputs'}`,
    placeHolder: 'Inputs ShardLens assumed because no file or setting gave them; pick one to set it',
    matchOnDescription: true, matchOnDetail: true,
  });
  if (pick) await runFix(ctx, uri, pick.assumption);
};
