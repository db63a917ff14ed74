/**
 * Inlay hints at the keys that drive each figure: model states at the sharding key (and how many times more replicated
 * data parallel holds), activations and logits at the micro batch, per-stage peaks at TP/PP, communication at the keys
 * that cause it, the verdict near the top (the first short line). Labels are short tokens within VS Code's default hint length; the long form
 * is the tooltip (shared/wording/hints.ts).
 */
import { InlayHint, InlayHintKind, MarkupKind, type Range } from 'vscode-languageserver';
import type { CommGroup } from '../../shared/comm/types';
import type { Fact } from '../../shared/plan/facts';
import { exposedSeconds } from '../../shared/wording/comm';
import { formatBytes, formatCount } from '../../shared/units';
import { activationsHint, commHint, fitHint, fitLabel, modelParamsHint, packLine, stagesHint, statesHint, type HintText } from '../../shared/wording/hints';
import type { DocumentAnalysis } from '../analysis/analyze';
import { endOf, localFact } from './facts';
import { commBytes, maxOver, peakStage } from './figures';
import { verdictInput } from './verdict';
import { assumedSentence } from './markdown';
import type { PlanPath } from '../../shared/plan/paths';

/** Plan paths whose key carries the data-parallel (sharding) figures, in order of preference. */
const SHARDING_KEYS: readonly PlanPath[] = ['parallel.sharding.stage', 'parallel.sharding.fsdpStrategy', 'parallel.dp', 'parallel.dpReplicate', 'parallel.sharding.shardGroupSize'];
/** Process group of a collective → the plan path of the key that causes it. */
const GROUP_KEYS: Record<string, readonly PlanPath[]> = {
  dp: SHARDING_KEYS, tp: ['parallel.tp'], pp: ['parallel.pp'], cp: ['parallel.cp'], ep: ['parallel.ep'],
};

/** A hint to place: where, and its texts (packed per line before it becomes an InlayHint). */
type Placed = HintText & { readonly at: { line: number; character: number } };

function make(at: { line: number; character: number }, t: HintText): Placed {
  return { ...t, at };
}

/** The InlayHint of a placed text, with the long form as a Markdown tooltip. */
function toInlayHint(p: Placed): InlayHint {
  const h = InlayHint.create(p.at, fitLabel(p.label), InlayHintKind.Type);
  h.paddingLeft = true;
  h.tooltip = { kind: MarkupKind.Markdown, value: p.tooltip };
  return h;
}

function hint(f: Fact, t: HintText): Placed | undefined {
  const at = endOf(f);
  return at ? make(at, t) : undefined;
}

function first(a: DocumentAnalysis, paths: readonly PlanPath[]): Fact | undefined {
  for (const p of paths) {
    const f = localFact(a, p);
    if (f) return f;
  }
  return undefined;
}

function inRange(h: Placed, range: Range | undefined): boolean {
  if (!range) return true;
  return h.at.line >= range.start.line && h.at.line <= range.end.line;
}

/** The hints of each line packed into VS Code's per-line length, in the order they were made (most important first). */
function packed(hints: readonly Placed[]): InlayHint[] {
  const lines = new Map<number, Placed[]>();
  for (const h of hints) lines.set(h.at.line, [...(lines.get(h.at.line) ?? []), h]);
  return [...lines.values()].flatMap((line) => packLine(line)).map(toInlayHint);
}

/** A hint at the end of the first reference of a kind (the DeepSpeed file or model a YAML names). */
function referenceHint(a: DocumentAnalysis, kind: 'deepspeed' | 'model', t: HintText): Placed | undefined {
  const r = a.facts?.references.find((x) => x.kind === kind && x.range);
  return r?.range ? make(r.range.end, t) : undefined;
}

/**
 * Longest line (characters) the verdict may end: with the hint's 43 characters it stays within the ~100 columns a
 * 1280-pixel window shows beside the explorer, so the verdict is seen without scrolling sideways.
 */
const VERDICT_LINE_MAX = 56;
/** How far down the verdict may move to find such a line; past it the verdict stays on the first line. */
const VERDICT_LINE_SEARCH = 12;

/**
 * Where the verdict goes: the end of the first line, unless that line is long (a licence header, a long comment), then
 * the end of the first short line near the top.
 */
export function verdictPosition(text: string): { line: number; character: number } {
  const lines = text.split(/\r?\n/, VERDICT_LINE_SEARCH);
  const i = lines.findIndex((l) => l.trimEnd().length <= VERDICT_LINE_MAX);
  const line = i < 0 ? 0 : i;
  return { line, character: (lines[line] ?? '').length };
}

/** The verdict near the top: peak per GPU and whether it fits, "if assumed" when it rests on assumptions. */
function totalHint(a: DocumentAnalysis, withStep: boolean): Placed | undefined {
  const v = verdictInput(a);
  if (!v) return undefined;
  const t = fitHint(v, withStep ? a.stepTime?.stepSeconds : undefined);
  const params = a.format === 'hf-config' && a.memory ? `${formatCount(a.memory.model.parameters)} parameters. ` : '';
  return make(sectionPosition(a) ?? verdictPosition(a.text), { ...t, tooltip: params + t.tooltip });
}

/** In a module of configuration functions: the end of the analysed function's `def` line. */
function sectionPosition(a: DocumentAnalysis): { line: number; character: number } | undefined {
  const r = a.sections?.find((s) => s.symbol === a.symbol)?.range;
  if (!r) return undefined;
  const line = a.text.split(/\r?\n/, r.start.line + 1)[r.start.line] ?? '';
  return { line: r.start.line, character: line.length };
}

/** Parameters + gradients + optimizer states + master weights of the peak stage, e.g. "parameters 12 GiB, gradients 1.6 GiB". */
function breakdown(a: DocumentAnalysis): string {
  const st = a.memory ? peakStage(a.memory) : undefined;
  if (!st) return '';
  const u = a.settings.units;
  const parts: [string, number | undefined][] = [
    ['parameters', st.terms.parameters?.bytes], ['gradients', st.terms.gradients?.bytes], ['optimizer states', st.terms.optimizerStates?.bytes],
    ['master weights', st.terms.masterWeights?.bytes],
  ];
  return parts.filter(([, b]) => b !== undefined && b > 0).map(([k, b]) => `${k} ${formatBytes(b, u)}`).join(', ');
}

/**
 * Activations (with the embedding's) and logits at their own largest moment, of the stage with the most, and how much
 * of them that stage holds at its overall peak (less when it peaks after the backward, at the optimizer step).
 */
function activationTerms(a: DocumentAnalysis): { activations: number; logits: number; atPeak: { bytes: number; moment?: string } } {
  const stages = a.memory?.stages ?? [];
  let best: ReturnType<typeof activationTerms> = { activations: 0, logits: 0, atPeak: { bytes: 0 } };
  for (const s of stages) {
    const atPeak = (s.terms.activations?.bytes ?? 0) + (s.terms.embeddingActivations?.bytes ?? 0) + (s.terms.logits?.bytes ?? 0);
    const own = s.activationPeak ?? { activations: atPeak - (s.terms.logits?.bytes ?? 0), logits: s.terms.logits?.bytes ?? 0 };
    if (own.activations + own.logits > best.activations + best.logits) best = { activations: own.activations, logits: own.logits, atPeak: { bytes: atPeak, moment: s.peakMoment } };
  }
  return best;
}

/**
 * "= 1 assumed" after each value only the run gives (`--micro-batch-size $MBS`, `seq_length: ${oc.env:SEQ}`): what the
 * estimate stands in for it, so a verdict resting on it is seen where the value is written.
 */
function runTimeHints(a: DocumentAnalysis): Placed[] {
  const out: Placed[] = [];
  for (const d of a.facts?.diagnostics ?? []) {
    const r = d.range;
    // A value from another file (a sourced script) has no range here: its assumption is in the verdict's list.
    if (d.setting === undefined || (r.end.line === 0 && r.end.character === 0)) continue;
    const x = a.assumptions.find((y) => d.paths.includes(y.path));
    if (x) out.push(make(r.end, { label: `= ${x.value} assumed`, tooltip: assumedSentence(x.value, x.detail) }));
  }
  return out;
}

/** Every hint for the document, filtered to `range` and to the detail setting. */
export function buildInlayHints(a: DocumentAnalysis, range?: Range): InlayHint[] {
  const detail = a.settings.hints.detail;
  const m = a.memory;
  if (detail === 'off' || !m) return [];
  const u = a.settings.units;
  const verbose = detail === 'verbose';
  const shard = first(a, SHARDING_KEYS);
  const out: (Placed | undefined)[] = [totalHint(a, detail !== 'minimal' && (verbose || !shard)), ...runTimeHints(a)];
  if (detail !== 'minimal') {
    const states = statesHint(maxOver(m.stages, (s) => s.modelStatesBytes) ?? 0, maxOver(m.replicated.stages, (s) => s.modelStatesBytes) ?? 0, u, breakdown(a));
    out.push(shard ? hint(shard, states) : referenceHint(a, 'deepspeed', states));
    out.push(referenceHint(a, 'model', modelParamsHint(m.model.parameters, a.plan?.model)));
    const micro = localFact(a, 'training.microBatch');
    const act = activationTerms(a);
    if (micro) out.push(hint(micro, activationsHint(act.activations, act.logits, u, act.atPeak)));
    for (const axis of ['parallel.tp', 'parallel.pp'] as const) {
      const f = localFact(a, axis);
      if (!f || (!verbose && (a.plan?.parallel[axis === 'parallel.tp' ? 'tp' : 'pp'] ?? 1) <= 1)) continue;
      out.push(hint(f, stagesHint(m.stages.map((s) => s.peakReservedBytes), u)));
    }
    for (const [group, keys] of Object.entries(GROUP_KEYS)) {
      const bytes = commBytes(a.collectives, group);
      const f = first(a, keys);
      if (!f || bytes <= 0) continue;
      out.push(hint(f, commHint(group, bytes, u, exposedSeconds(a.collectives, group as CommGroup))));
    }
  }
  return packed(out.filter((h): h is Placed => h !== undefined && inRange(h, range)));
}
