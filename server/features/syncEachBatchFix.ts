/**
 * The quick fix of `no-sync-gradients` (shared/memory/estimate.ts) in a Hugging Face Trainer YAML (Axolotl,
 * LLaMA-Factory, TrainingArguments YAML): reduce in every micro-batch with
 * `accelerator_config.gradient_accumulation_kwargs.sync_each_batch: true`, which the Trainer honours (transformers
 * trainer.py syncs each micro-batch when it is set; Accelerate's GradientAccumulationPlugin). Added at the end of a file
 * that has no `accelerator_config` yet, offered only when the edited file, read again, says so, and titled with what
 * the estimate predicts (less memory, one reduce-scatter per micro-batch).
 */
import { CodeActionKind, type CodeAction, type Diagnostic } from 'vscode-languageserver';
import type { CoreApi } from '../analysis/core';
import type { DocumentAnalysis } from '../analysis/analyze';
import { stepChange } from './figures';
import { fixDelta } from './fixDelta';
import { formatBytes, formatDeltaBytes } from '../../shared/units';
import { lineStarts, positionAt, type TextEdit } from '../../formats/common/edit/text';
import type { FormatId } from '../../shared/plan/facts';

/** The formats whose YAML is (or passes through to) the Trainer's TrainingArguments. */
const TRAINER_YAML: ReadonlySet<FormatId> = new Set<FormatId>(['axolotl', 'llamafactory', 'hf-trainer']);

/** The lines that turn the sync on, appended to a file without `accelerator_config`; undefined otherwise. */
export function syncEachBatchEdits(a: Pick<DocumentAnalysis, 'format' | 'text'>): TextEdit[] | undefined {
  if (!a.format || !TRAINER_YAML.has(a.format) || /^accelerator_config\s*:/m.test(a.text)) return undefined;
  const end = positionAt(lineStarts(a.text), a.text.length);
  const lead = a.text.length === 0 || a.text.endsWith('\n') ? '' : '\n';
  return [{ range: { start: end, end }, newText: `${lead}accelerator_config:\n  gradient_accumulation_kwargs:\n    sync_each_batch: true\n` }];
}

/** "Reduce gradients in every micro-batch (−11.2 GiB per GPU → 36.7 GiB, step +1.0 %)". */
export function syncEachBatchActions(a: DocumentAnalysis, api: CoreApi, diag: Diagnostic): CodeAction[] {
  if (!a.plan) return [];
  const edits = syncEachBatchEdits(a);
  const d = fixDelta(a, api, 'training.syncEveryMicroBatch', true, 'gradients reduced in the last micro-batch → in every micro-batch', edits);
  if (!d || !edits) return [];
  const u = a.settings.units;
  const step = stepChange(d);
  return [{
    title: `Reduce gradients in every micro-batch (${formatDeltaBytes(d.peakAfter - d.peakBefore, u)} per GPU → ${formatBytes(d.peakAfter, u)}${step ? `, step ${step}` : ''})`,
    kind: CodeActionKind.QuickFix, diagnostics: [diag], isPreferred: true, edit: { changes: { [a.uri]: edits } },
  }];
}
