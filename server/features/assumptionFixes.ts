/**
 * The fix for each assumed input: the picker that sets it (GPU and cluster, model), or an edit that writes the key
 * into the file (a DeepSpeed "auto" replaced by the value ShardLens assumed, a missing JSON key inserted), or the
 * assumptions list where the value belongs to another file or a setting. Quick fixes and the assumptions list use it.
 */
import { CodeActionKind, TextEdit, type CodeAction, type Diagnostic } from 'vscode-languageserver';
import { ClientCommands, type AnalysisAssumption, type AssumptionFix } from '../../shared/protocol';
import { INPUT_WORDS } from '../../shared/wording/verdict';
import type { DocumentAnalysis } from '../analysis/analyze';
import { editFor } from './edits';
import { localFact } from './facts';
import { verdictOf } from './verdict';

/** The command that lists the assumptions with their fixes (a quick pick in the extension). */
export const SHOW_ASSUMPTIONS = ClientCommands.showAssumptions;

/** Edits that write an assumed numeric value where the file says "auto" or has no key (JSON), if any. */
function writeEdit(a: DocumentAnalysis, x: AnalysisAssumption): TextEdit[] | undefined {
  const n = Number(x.value);
  if (!Number.isFinite(n) || !/^training\.(microBatch|gradAccum|globalBatch|seqLen)$/.test(x.path)) return undefined;
  const f = localFact(a, x.path);
  // "auto" is text; the value replaces the quoted word with a number.
  if (f?.value === 'auto' && f.source.range) return [TextEdit.replace(f.source.range, String(n))];
  if (f) return undefined;
  return editFor(a, x.path, n);
}

/** The fix of one assumed input, or undefined when only the dashboard can explain it. */
export function assumptionFix(a: DocumentAnalysis, x: AnalysisAssumption): AssumptionFix | undefined {
  const word = INPUT_WORDS[x.path] ?? x.path;
  if (x.path.startsWith('cluster.')) return { title: `Set the GPU and cluster (assumed ${x.value} for ${word})…`, command: ClientCommands.selectCluster };
  if (x.path === 'model' || x.path.startsWith('model.')) return { title: `Select the model (assumed ${x.value})…`, command: ClientCommands.selectModel };
  const edits = writeEdit(a, x);
  if (edits?.length) {
    const key = localFact(a, x.path)?.key ?? word;
    return { title: `Write ${key} = ${x.value} (the value ShardLens assumed) into the file`, edits };
  }
  return { title: `Set ${word} (assumed ${x.value})…`, command: SHOW_ASSUMPTIONS };
}

/** Quick fixes for a "does not fit" that rests on assumptions: one per deciding assumption, the first preferred. */
export function assumptionActions(a: DocumentAnalysis, diag: Diagnostic): CodeAction[] {
  const out: CodeAction[] = [];
  const seen = new Set<string>();
  const deciding = new Set((verdictOf(a)?.assumed ?? []).flatMap((d) => (d.path === 'cluster' ? ['cluster.gpu', 'cluster.worldSize'] : [d.path])));
  for (const x of a.assumptions.filter((y) => deciding.has(y.path))) {
    const fix = assumptionFix(a, x);
    if (!fix || seen.has(fix.title) || (fix.command && seen.has(fix.command))) continue;
    seen.add(fix.title);
    if (fix.command) seen.add(fix.command);
    out.push({
      title: fix.title, kind: CodeActionKind.QuickFix, diagnostics: [diag], isPreferred: out.length === 0, data: { assumption: x.path },
      ...(fix.edits ? { edit: { changes: { [a.uri]: [...fix.edits] } } } : {}),
      ...(fix.command ? { command: { title: fix.title, command: fix.command, arguments: [a.uri] } } : {}),
    });
  }
  return out;
}
