/**
 * The quick fix of `foreach-step-peak` (shared/memory/estimate.ts): step torch's Adam fused, written the way the file
 * says its optimizer — a `fused` flag that is there, torchtitan's `implementation`, Hugging Face's `adamw_torch` name,
 * or a `fused: True` line added under torchtune's optimizer. Offered only when the edited file, read again, steps
 * fused, and titled with what the estimate predicts.
 */
import { CodeActionKind, type CodeAction, type Diagnostic } from 'vscode-languageserver';
import type { CoreApi } from '../analysis/core';
import type { DocumentAnalysis } from '../analysis/analyze';
import { localFact } from './facts';
import { fixDelta } from './fixDelta';
import { formatBytes, formatDeltaBytes } from '../../shared/units';
import { keyEdits } from '../../formats/common/edit/keyEdit';
import { TORCH_ADAM } from '../../formats/common/read';
import { lineStarts, textOf, type TextEdit } from '../../formats/common/edit/text';

/** The edits that make the file step fused, or undefined where it cannot say so in place. */
export function fusedStepEdits(a: DocumentAnalysis): TextEdit[] | undefined {
  const impl = localFact(a, 'training.optimizerImpl');
  if (!impl?.source.range) return undefined;
  // A written implementation, `fused` flag or Hugging Face name (adamw_torch → adamw_torch_fused): its value replaced
  // as the file spells it (keyEdit.ts optimizerImplLiteral, shared with the hover's what-if).
  const inPlace = keyEdits(a, 'training.optimizerImpl', 'fused');
  if (inPlace) return inPlace;
  const bare = textOf(a.text, impl.source.range).trim().replace(/^(["'])(.*)\1$/, '$2');
  // torchtune's `optimizer._component_: torch.optim.AdamW`: a `fused: True` line after it, at its indentation.
  if (a.format === 'torchtune' && TORCH_ADAM.test(bare)) {
    const line = impl.source.range.start.line;
    const starts = lineStarts(a.text);
    const text = a.text.slice(starts[line], starts[line + 1] ?? a.text.length);
    const indent = /^(\s*)/.exec(text)![1];
    if (!indent) return undefined;
    return [{ range: { start: { line: line + 1, character: 0 }, end: { line: line + 1, character: 0 } }, newText: `${indent}fused: True\n` }];
  }
  return undefined;
}

/** "Step the optimizer fused (−4.1 GiB per GPU → 28.7 GiB)" for a foreach-step-peak information. */
export function fusedStepActions(a: DocumentAnalysis, api: CoreApi, diag: Diagnostic): CodeAction[] {
  if (!a.plan) return [];
  const edits = fusedStepEdits(a);
  const d = fixDelta(a, api, 'training.optimizerImpl', 'fused', 'optimizer step foreach → fused', edits);
  if (!d || !edits) return [];
  const u = a.settings.units;
  return [{
    title: `Step the optimizer fused (${formatDeltaBytes(d.peakAfter - d.peakBefore, u)} per GPU → ${formatBytes(d.peakAfter, u)})`,
    kind: CodeActionKind.QuickFix, diagnostics: [diag], isPreferred: true, edit: { changes: { [a.uri]: edits } },
  }];
}
