/**
 * "Apply layout" code actions: the best fitting layouts of the planner for the document, each with the predicted
 * delta in its title and an edit that rewrites the file in its own format (formatting kept by the rewriters).
 */
import { CodeActionKind, type CodeAction, type CodeActionContext } from 'vscode-languageserver';
import type { PlanLayoutsResult } from '../../shared/protocol';

/** Layouts offered as code actions. */
export const LAYOUT_ACTIONS = 3;

/** The code action kind of "Apply layout" (a rewrite of the file, not a fix of one diagnostic). */
export const LAYOUT_ACTION_KIND = CodeActionKind.RefactorRewrite;

/** True when the client asked for kinds that include "Apply layout" (or for any kind). */
export function wantsLayoutActions(context: CodeActionContext): boolean {
  const only = context.only;
  if (!only?.length) return true;
  return only.some((k) => LAYOUT_ACTION_KIND === k || LAYOUT_ACTION_KIND.startsWith(`${k}.`));
}

/** "Apply layout: <summary> (<delta>)" for the top layouts that change the file. */
export function buildLayoutActions(plan: PlanLayoutsResult): CodeAction[] {
  if (!plan.canApply) return [];
  const out: CodeAction[] = [];
  for (const p of plan.layouts) {
    if (out.length >= LAYOUT_ACTIONS) break;
    if (!p.edits.length) continue;
    out.push({
      title: `Apply layout: ${p.summary}${p.delta ? ` (${p.delta})` : ''}`,
      kind: LAYOUT_ACTION_KIND,
      edit: { changes: { [plan.uri]: p.edits.map((e) => ({ range: e.range, newText: e.newText })) } },
    });
  }
  return out;
}
