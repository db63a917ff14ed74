/**
 * The quick fix of `tied-head-untied-shape` (shared/plan/resolve.ts): a Megatron launch of a released model's shape
 * that ties the output layer only by Megatron's default gets `--untie-embeddings-and-output-weights`, on a line of its
 * own after another flag. Offered only when the edited script, read again, unties the head, and titled with what the
 * estimate predicts (the head's parameters cost memory: the fix is about loading the checkpoint, not about fitting).
 */
import { CodeActionKind, type CodeAction, type Diagnostic } from 'vscode-languageserver';
import type { CoreApi } from '../analysis/core';
import type { DocumentAnalysis } from '../analysis/analyze';
import { fixDelta } from './fixDelta';
import { formatBytes, formatDeltaBytes } from '../../shared/units';
import { keyEdits } from '../../formats/common/edit/keyEdit';

/** "Untie the output layer, as the released model has it (+1.1 GiB per GPU → 59.7 GiB)". */
export function untieActions(a: DocumentAnalysis, api: CoreApi, diag: Diagnostic): CodeAction[] {
  if (!a.plan || a.format !== 'megatron-script') return [];
  const edits = keyEdits(a, 'model.tiedEmbeddings', false);
  const d = fixDelta(a, api, 'model.tiedEmbeddings', false, 'output layer tied → untied', edits, true);
  if (!d || !edits) return [];
  const u = a.settings.units;
  return [{
    title: `Untie the output layer, as the released model has it (${formatDeltaBytes(d.peakAfter - d.peakBefore, u)} per GPU → ${formatBytes(d.peakAfter, u)})`,
    kind: CodeActionKind.QuickFix, diagnostics: [diag], isPreferred: true, edit: { changes: { [a.uri]: edits } },
  }];
}
