/**
 * Hover on a known key, answer first: the key's value, the figures it drives and the verdict, then what changing it
 * would do; after that the formulas, with every symbol they use defined once, and a link to the full derivation in
 * the dashboard. No internal names; the key's description only where no JSON schema already shows it.
 */
import { MarkupKind, type Hover, type Position } from 'vscode-languageserver';
import { ClientCommands } from '../../shared/protocol';
import type { MemoryTermName, Term } from '../../shared/plan/result';
import { formatBytes, formatDeltaBytes, formatSeconds } from '../../shared/units';
import { formatTraffic } from '../../shared/wording/hints';
import { symbolLines } from '../../shared/wording/symbols';
import type { CoreApi } from '../analysis/core';
import type { DocumentAnalysis } from '../analysis/analyze';
import { factAt } from './facts';
import { keyDocAt, keyDocHover } from './keyAt';
import { deltaOf, peakStage, plannedWhatIfs, stepChange, type Delta } from './figures';
import { keyForPath, keyTable } from '../../formats/keyTables';
import { verdictOf } from './verdict';
import { escapeMarkdown, inlineCode } from './markdown';
import type { PlanPath } from '../../shared/plan/paths';
import { RUN_LENGTH_SCOPE, runLength, runLine } from '../../shared/wording/runLength';
import { valueInWords } from '../../shared/wording/values';
import { textOf } from '../../formats/common/edit/text';

/** The model states: every one scales with the parameter count Ψ. */
const STATES: readonly MemoryTermName[] = ['parameters', 'gradients', 'optimizerStates', 'masterWeights'];

/** Memory terms each plan path feeds (first principles: which symbols appear in the term's formula). */
const TERMS_OF: Partial<Record<PlanPath, readonly MemoryTermName[]>> = {
  // The model's sizes: Ψ (docs/formulas.md#parameters) and the activations' b·s·h, f, a, KV and V factors.
  'model.layers': [...STATES, 'activations'],
  'model.hiddenSize': [...STATES, 'activations', 'logits'],
  'model.ffnSize': [...STATES, 'activations'],
  'model.heads': [...STATES, 'activations'],
  'model.kvHeads': [...STATES, 'activations'],
  'model.headDim': [...STATES, 'activations'],
  'model.vocabSize': [...STATES, 'logits'],
  'model.tiedEmbeddings': STATES,
  'model.moe.experts': STATES,
  'model.moe.expertFfnSize': [...STATES, 'activations'],
  'model.moe.topK': ['activations'],
  'parallel.sharding.stage': STATES,
  'parallel.sharding.fsdpStrategy': STATES,
  'parallel.dp': STATES,
  'parallel.sharding.offloadOptimizer': ['optimizerStates', 'masterWeights'],
  'parallel.sharding.offloadParams': ['parameters'],
  'training.microBatch': ['activations', 'logits'],
  'training.seqLen': ['activations', 'logits'],
  'training.recompute': ['activations'],
  'training.optimizer': ['optimizerStates'],
  'training.precision': ['parameters', 'gradients', 'masterWeights'],
  'parallel.tp': ['parameters', 'activations'],
  'parallel.pp': ['parameters', 'activations'],
  'parallel.sharding.reduceBucketElems': ['commBuffers'],
  'parallel.sharding.allgatherBucketElems': ['commBuffers'],
  'parallel.sharding.prefetchBucketElems': ['gatheredParameters'],
  'parallel.sharding.maxLiveParams': ['gatheredParameters'],
  // Context parallelism cuts each sequence into cp shards; expert parallelism splits the routed experts; virtual
  // stages change how many micro-batches a stage holds.
  'parallel.cp': ['activations', 'logits'],
  'parallel.ep': STATES,
  'parallel.vpp': ['activations'],
  // Switches of the training loop: compiled kernels save fewer tensors (and a compiled chunked loss no fp32 copies);
  // offloading keeps a few layers' checkpointed inputs on the GPU; the optimizer in the backward holds one weight's
  // gradient; a paged optimizer's states live in unified memory; the loss's implementation decides its logits' copies.
  'training.compile': ['activations', 'logits'],
  'training.activationOffload': ['activations'],
  'training.optimizerInBackward': ['gradients'],
  'training.pagedOptimizer': ['optimizerStates'],
  'training.optimizerImpl': ['optimizerStates'],
  'training.syncEveryMicroBatch': ['gradients'],
  // Later micro-batches of an accumulating step run beside the earlier ones' gradients.
  'training.gradAccum': ['gradients'],
  'training.lossFusion': ['logits'],
};

/** Text from a file or a setting, shown inside a code span: nothing in it can become a link or markup. */
function code(v: unknown): string {
  const s = Array.isArray(v) ? v.join(', ') : typeof v === 'number' && !Number.isFinite(v) ? '—' : String(v);
  return inlineCode(s.slice(0, 200));
}

/** Command-link arguments: encodeURIComponent leaves parentheses, which would end the Markdown link early. */
function linkArg(args: unknown): string {
  return encodeURIComponent(JSON.stringify(args)).replace(/[()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** "−79.4 GiB/GPU → 101 GiB, does not fit · +96.4 GiB traffic/step". */
function deltaLine(d: Delta, a: DocumentAnalysis): string {
  const u = a.settings.units;
  const comm = d.commAfter !== d.commBefore
    ? ` · ${d.commAfter > d.commBefore ? '+' : '−'}${formatTraffic(Math.abs(d.commAfter - d.commBefore), u)} traffic/step` : '';
  // Labels never call a ZeRO stage a bare "stage" next to the pipeline stages (shared/plan/whatIf.ts).
  const label = d.variant.whatIf.label;
  const change = stepChange(d);
  const step = change && d.stepBefore !== undefined && d.stepAfter !== undefined
    ? ` · step ${formatSeconds(d.stepBefore)} → ${formatSeconds(d.stepAfter)} (${change})` : '';
  // A change below the shown precision reads as none (a switch that acts where the peak is not).
  const peak = formatBytes(d.peakAfter, u) === formatBytes(d.peakBefore, u)
    ? `peak unchanged (${formatBytes(d.peakAfter, u)})` : `${formatDeltaBytes(d.peakAfter - d.peakBefore, u)}/GPU → ${formatBytes(d.peakAfter, u)}`;
  return `- ${label}: ${peak}, ${d.fitsAfter ? 'fits' : 'does not fit'}${comm}${step}`;
}

/** The step's operator terms with their formulas and sources (the busiest stage, per step). */
function timeDerivation(a: DocumentAnalysis): string[] {
  const t = a.stepTime;
  if (!t || !(t.stepSeconds > 0)) return [];
  const terms = t.operatorTerms.filter((x) => x.stepSeconds > 0);
  if (!terms.length) return [];
  const md = ['', `Step ≈ ${formatSeconds(t.stepSeconds)}. The busiest stage's operator terms per step (the rest is pipeline bubble, exposed gradient sync and the optimizer):`, ''];
  for (const x of terms) md.push(`- ${escapeMarkdown(x.label)} ${formatSeconds(x.stepSeconds)} = \`${x.formula}\` (${escapeMarkdown(x.citation)}; rates: ${escapeMarkdown(x.provenance)})`);
  return md;
}

/** The answer: the figures this key drives on the peak stage, the verdict and the step time. */
function answer(a: DocumentAnalysis, terms: readonly (readonly [MemoryTermName, Term])[]): string {
  const u = a.settings.units;
  const figures = terms.filter(([, t]) => t.bytes > 0).map(([, t]) => `${t.label.toLowerCase()} ${formatBytes(t.bytes, u)}`).join(' + ');
  const v = verdictOf(a);
  const step = a.stepTime && a.stepTime.stepSeconds > 0 ? `step ≈ ${formatSeconds(a.stepTime.stepSeconds)}` : '';
  return [figures ? `${figures} per GPU` : '', v ? escapeMarkdown(v.headline) : '', step].filter(Boolean).join(' · ');
}

/** The derivation: each term's formula and source, then every symbol once. */
function derivation(a: DocumentAnalysis, stage: number, terms: readonly (readonly [MemoryTermName, Term])[]): string[] {
  if (!terms.length) return [];
  const u = a.settings.units;
  const md = ['', '---', '', `Per GPU on pipeline stage ${stage} (the peak stage):`, ''];
  for (const [, t] of terms) md.push(`- ${t.label} ${formatBytes(t.bytes, u)} = \`${t.formula}\` (${t.citation})`);
  const lines = symbolLines(terms);
  if (lines.length) {
    md.push('', 'where', '');
    for (const l of lines) md.push(`- \`${l.symbol}\`${l.value !== undefined ? ` = ${code(l.value)}` : ''}: ${l.meaning}${l.source ? ` (${escapeMarkdown(l.source)})` : ''}`);
  }
  return md;
}

/** The keys that plan the run's length (steps, or Megatron's samples). */
const RUN_PATHS: ReadonlySet<PlanPath> = new Set(['training.steps', 'training.samples']);

/** The planned steps: the run's wall-clock and GPU-hours at the estimated step time, then the step's terms. */
function stepsHover(a: DocumentAnalysis, md: string[], range: Hover['range']): Hover {
  const run = runLength(a.plan, a.stepTime?.stepSeconds);
  md.push(run ? `${escapeMarkdown(runLine(run))} (${RUN_LENGTH_SCOPE})` : 'No run length: the step time could not be estimated for this file.', '');
  md.push(...timeDerivation(a));
  return { contents: { kind: MarkupKind.Markdown, value: md.join('\n') }, ...(range ? { range } : {}) };
}

/** Markdown for the fact at the position, or null when there is no known key there. */
export function buildHover(a: DocumentAnalysis, pos: Position, api: CoreApi): Hover | null {
  const hit = factAt(a, pos, (path) => path in TERMS_OF || RUN_PATHS.has(path));
  if (!hit) {
    const doc = keyDocAt(a.format, a.text, pos);
    if (!doc) return null;
    // A key the file writes with a run-time value has no fact, only the assumption standing in for it.
    const stand = doc[1].plan ? a.assumptions.find((x) => x.path === doc[1].plan) : undefined;
    return keyDocHover(doc[0], doc[1], stand);
  }
  const [path, fact] = hit;
  const tableKey = keyForPath(a.format, path);
  const written = fact.key ?? path;
  const key = tableKey && tableKey.endsWith(written) ? tableKey : written;
  const assumption = a.assumptions.find((x) => x.path === path);
  const assumed = assumption ? ` → ${code(assumption.value)} (assumed: ${escapeMarkdown(assumption.detail.replace(/\s*\([^)]*\.(py|ts|md)\)/g, ''))})` : '';
  const m = a.memory;
  const st = m ? peakStage(m) : undefined;
  const terms = st ? (TERMS_OF[path] ?? []).flatMap((n): [MemoryTermName, Term][] => (st.terms[n] ? [[n, st.terms[n] as Term]] : [])) : [];
  // A flag without a value (--use-distributed-optimizer) is on; anything else shows its value.
  const bare = key.startsWith('--') && (!fact.source.range || JSON.stringify(fact.source.range) === JSON.stringify(fact.keyRange));
  // A value the plan names internally (a loss class read as its implementation) is shown as written, then in words.
  const words = valueInWords(path, fact.value);
  const asWritten = words && fact.source.range ? textOf(a.text, fact.source.range).trim() : undefined;
  const shown = words ? `${asWritten ? code(asWritten) : ''} (${escapeMarkdown(words)})`.trim() : code(fact.value);
  const md: string[] = [`**ShardLens** · ${inlineCode(key)}${bare ? ' (on)' : ` = ${shown}`}${assumed}`, ''];
  if (RUN_PATHS.has(path)) return stepsHover(a, md, fact.keyRange ?? fact.source.range);
  const head = m ? answer(a, terms) : '';
  if (head) md.push(head, '');
  if (a.plan && m) {
    const deltas = plannedWhatIfs(a, path).map((v) => deltaOf(api, m, a.collectives, v, a.stepTime?.stepSeconds)).filter((d): d is Delta => d !== undefined);
    if (deltas.length) md.push('If you change it:', '', ...deltas.map((d) => deltaLine(d, a)), '');
  }
  // DeepSpeed JSON has a bundled schema whose description VS Code shows in the same hover: never say it twice.
  const doc = a.format === 'deepspeed' ? undefined : keyTable(a.format)?.keys[key]?.description;
  if (doc) md.push(doc, '');
  if (st) md.push(...derivation(a, st.stage, terms));
  md.push(...timeDerivation(a));
  md.push('', `[More: the full derivation in the dashboard](command:${ClientCommands.showDerivation}?${linkArg([a.uri])})`);
  const range = fact.keyRange ?? fact.source.range;
  return { contents: { kind: MarkupKind.Markdown, value: md.join('\n') }, ...(range ? { range } : {}) };
}
