/**
 * The edit that makes a file say what a what-if supposes: each replaced fact's literal set in place (keyEdit.ts), or,
 * where a literal cannot carry the change (a bare flag, an FSDP strategy name), the format's layout rewriter with the
 * what-if plan's layout. Quick fixes apply it; the what-if property test checks that the edited file, read again,
 * gives the what-if's figures.
 */
import type { ConfigFacts, FactValue } from '../shared/plan/facts';
import type { PlanPath } from '../shared/plan/paths';
import type { Plan } from '../shared/plan/types';
import { layoutOfPlan } from '../shared/planner/build';
import { keyEdits, type EditableFile } from './common/edit/keyEdit';
import { applyTextEdits, lineStarts, offsetAt, type TextEdit } from './common/edit/text';
import { parseConfig } from './index';
import { canApplyLayout, layoutEdits } from './layout';
import type { FactOverrides } from '../shared/plan/resolve';
import { whatIfsFor, type WhatIf } from '../shared/plan/whatIf';

/** Plan paths a layout rewriter writes. */
const LAYOUT_PATHS: ReadonlySet<PlanPath> = new Set<PlanPath>([
  'parallel.tp', 'parallel.pp', 'parallel.vpp', 'parallel.cp', 'parallel.ep', 'parallel.dp', 'parallel.sp',
  'parallel.sharding.stage', 'parallel.sharding.style', 'parallel.sharding.fsdpStrategy', 'parallel.sharding.offloadOptimizer',
  'training.microBatch', 'training.gradAccum', 'training.recompute',
]);

/** True when no two edits touch the same text. */
function disjoint(text: string, edits: readonly TextEdit[]): boolean {
  const starts = lineStarts(text);
  const spans = edits.map((e) => [offsetAt(starts, e.range.start), offsetAt(starts, e.range.end)] as const).sort((a, b) => a[0] - b[0]);
  return spans.every((s, i) => i === 0 || s[0] >= spans[i - 1][1]);
}

/** Literal edits for every replaced fact, or undefined when one of them cannot be written as a literal. */
function literalEdits(file: EditableFile, overrides: FactOverrides): TextEdit[] | undefined {
  const out: TextEdit[] = [];
  const same = (a: TextEdit, b: TextEdit) => a.newText === b.newText && JSON.stringify(a.range) === JSON.stringify(b.range);
  for (const [path, value] of Object.entries(overrides) as [PlanPath, FactValue | undefined][]) {
    const e = keyEdits(file, path, value);
    if (!e) return undefined;
    // Facts one key states (Liger's loss and kernels at use_liger_kernel) ask for the same edit: it is made once.
    for (const x of e) if (!out.some((y) => same(x, y))) out.push(x);
  }
  return out.length && disjoint(file.text, out) ? out : undefined;
}

/**
 * Edits that make `file` hold the what-if (`overrides`, whose resolved plan is `after`); undefined when the file cannot
 * express it. `how` says which writer made them; `edited` is the edited file as read again.
 */
export function whatIfEdits(
  file: EditableFile, overrides: FactOverrides, after: Plan,
): { edits: TextEdit[]; how: 'literal' | 'rewriter'; edited: ConfigFacts } | undefined {
  const literal = literalEdits(file, overrides);
  const literalRead = literal && readBack(file, overrides, literal);
  if (literal && literalRead) return { edits: literal, how: 'literal', edited: literalRead };
  const rewritten = rewriterEdits(file, overrides, after);
  const rewrittenRead = rewritten && readBack(file, overrides, rewritten.edits);
  return rewritten && rewrittenRead ? { ...rewritten, edited: rewrittenRead } : undefined;
}

/** The edited file read again, when it states every overridden value (the edit says what the what-if supposes). */
function readBack(file: EditableFile, overrides: FactOverrides, edits: readonly TextEdit[]): ConfigFacts | undefined {
  const edited = editedFacts(file, edits);
  if (!edited) return undefined;
  return (Object.entries(overrides) as [PlanPath, FactValue | undefined][]).every(([path, value]) => edited.facts[path]?.value === value) ? edited : undefined;
}

/** True when the edited file, read again, states every overridden value. */
export function readsBack(file: EditableFile, overrides: Readonly<Partial<Record<PlanPath, FactValue>>>, edits: readonly TextEdit[]): boolean {
  return readBack(file, overrides, edits) !== undefined;
}

/**
 * The facts an edit changes: every fact of the edited file whose value differs from the original's (undefined where the
 * edit removed it). A key can set several facts (Accelerate's `fsdp_offload_params`), and a script variable can feed
 * several flags and the values the script computes from it; all of them change together.
 */
export function changedFacts(file: EditableFile, edits: readonly TextEdit[], edited = editedFacts(file, edits)): FactOverrides {
  if (!file.format || !file.facts || !edited) return {};
  const before = file.facts.facts;
  const after = edited.facts;
  const out: Partial<Record<PlanPath, FactValue | undefined>> = {};
  for (const path of new Set([...Object.keys(before), ...Object.keys(after)]) as Set<PlanPath>) {
    const a = before[path]?.value;
    const b = after[path]?.value;
    if (JSON.stringify(a) !== JSON.stringify(b)) out[path] = b;
  }
  return out;
}

/** The edited file read again (undefined without a format). */
function editedFacts(file: EditableFile, edits: readonly TextEdit[]): ConfigFacts | undefined {
  return file.format ? parseConfig(file.uri, applyTextEdits(file.text, edits), file.format) : undefined;
}

/**
 * True when the edited file has an error the file did not have: the engine would refuse the what-if at start-up
 * (torchtune's optimizer in the backward with gradient accumulation, offloading without checkpointing), so it is no
 * alternative to offer.
 */
export function refusedEdit(file: EditableFile, edited: ConfigFacts): boolean {
  const key = (d: { code: string; message: string }) => `${d.code}\u0000${d.message}`;
  const had = new Set((file.facts?.diagnostics ?? []).filter((d) => d.severity === 'error').map(key));
  return edited.diagnostics.some((d) => d.severity === 'error' && !had.has(key(d)));
}

/** A what-if the file can hold: the facts its edit changes, its plan and the edits that write it. */
export interface ExpressibleWhatIf {
  readonly whatIf: Omit<WhatIf, 'overrides'> & { readonly overrides: FactOverrides };
  readonly plan: Plan;
  readonly edits: TextEdit[];
  readonly how: 'literal' | 'rewriter';
}

/**
 * The what-ifs of a key that the file can hold, each resolved by `resolveWith` (the file's facts with the overrides in
 * place, derived again). Hovers show these, quick fixes apply their edits.
 */
export function expressibleWhatIfs(file: EditableFile, plan: Plan, path: PlanPath, resolveWith: (o: FactOverrides) => Plan | undefined): ExpressibleWhatIf[] {
  const out: ExpressibleWhatIf[] = [];
  for (const w of whatIfsFor(plan, path)) {
    // The layout rewriter needs the what-if's layout; the facts the edit then changes are what the what-if replaces.
    const first = resolveWith(w.overrides);
    const edit = first ? whatIfEdits(file, w.overrides, first) : undefined;
    if (!edit || refusedEdit(file, edit.edited)) continue;
    const overrides = changedFacts(file, edit.edits, edit.edited);
    const after = resolveWith(overrides);
    if (after) out.push({ whatIf: { ...w, overrides }, plan: after, edits: edit.edits, how: edit.how });
  }
  return out;
}

/** The layout rewriter's edits for the what-if plan's layout, when the format has a rewriter and the change is a layout. */
export function rewriterEdits(
  file: EditableFile, overrides: Readonly<Partial<Record<PlanPath, FactValue>>>, after: Plan,
): { edits: TextEdit[]; how: 'rewriter' } | undefined {
  const paths = Object.keys(overrides) as PlanPath[];
  if (!file.format || !canApplyLayout(file.format) || !paths.every((p) => LAYOUT_PATHS.has(p))) return undefined;
  const target = { ...layoutOfPlan(after), globalBatch: after.training.globalBatch, layers: after.model.layers };
  const r = layoutEdits(file.format, file.text, target, undefined, undefined, file.facts);
  return r.edits.length ? { edits: r.edits, how: 'rewriter' } : undefined;
}
