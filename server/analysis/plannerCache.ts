/**
 * The layout planner for one document, computed lazily (only when a code action or `shardlens/planLayouts` asks)
 * and cached per document version, so typing never runs a search. Each layout comes with the edits that write it
 * into the document and the delta to show before applying.
 */
import type { Problem } from '../../shared/plan/types';
import { coreEstimators } from '../../shared/planner/estimators';
import { planLayouts } from '../../shared/planner/plan-layouts';
import { TimeCache } from '../../shared/time/cache';
import type { Layout, PlanResult } from '../../shared/planner/types';
import type { PlanLayoutsResult, PlannedLayout } from '../../shared/protocol';
import { applyLayoutEdits, canApplyLayout } from '../../formats/layout';
import type { DocumentAnalysis } from './analyze';
import { checkPlannedLayout, type Reparse } from './layoutCheck';

/** Layouts the cache keeps per document: the most any caller may ask for. */
export const MAX_TOP_K = 20;
/** Layouts returned when the caller does not say. */
export const DEFAULT_TOP_K = 5;

function sharding(l: Layout): string {
  if (l.fsdpStrategy) return `FSDP ${l.fsdpStrategy}`;
  if (l.sharding === 'ddp' || l.sharding === 'megatron-distopt') return l.distributedOptimizer ? 'dist-opt' : 'DDP';
  return `ZeRO-${l.zero}`;
}

/** A one-line label of a layout: "TP 2 · PP 1 · DP 4 · ZeRO-1 · micro 2×8 · recompute selective". */
export function layoutSummary(l: Layout): string {
  const parts = [`TP ${l.tp}`, `PP ${l.pp}`];
  if (l.vpp > 1) parts.push(`VPP ${l.vpp}`);
  if (l.cp > 1) parts.push(`CP ${l.cp}`);
  if (l.ep > 1) parts.push(`EP ${l.ep}`);
  parts.push(`DP ${l.dp}`, sharding(l), `micro ${l.microBatch}×${l.gradAccum}`, `recompute ${l.recompute}`);
  if (l.offload !== 'none') parts.push(`offload ${l.offload}`);
  if (l.equivalent?.length) parts.push(`(same time: ${l.equivalent.join(', ')})`);
  return parts.join(' · ');
}

function internal(e: unknown): Problem {
  const msg = e instanceof Error ? e.message : String(e);
  return { code: 'internal-error', severity: 'info', message: `ShardLens could not search layouts: ${msg}`, paths: [] };
}

/**
 * Runs the planner for one analysed document and builds each layout's edits; never throws. With `reparse`, each
 * layout's edits are checked by reading the edited text again (layoutCheck.ts): a layout the edits cannot deliver is
 * refused with the reason. `time` is the step-time cache the search uses (the PlannerCache keeps one across searches,
 * so layer costs of a model on a cluster are reused).
 */
export function planDocument(a: DocumentAnalysis, topK: number = DEFAULT_TOP_K, reparse?: Reparse, time: TimeCache = new TimeCache()): PlanLayoutsResult {
  const base = { uri: a.uri, version: a.version, format: a.format, canApply: !!a.format && canApplyLayout(a.format) };
  const plan = a.plan;
  if (!plan || !a.format) {
    const why: Problem = { code: 'planner-no-plan', severity: 'info', message: 'The file does not resolve to a model and cluster to plan for.', paths: [] };
    return { ...base, layouts: [], problems: a.problems.length ? a.problems : [why] };
  }
  let result: PlanResult;
  try {
    result = planLayouts(plan, { topK: Math.min(Math.max(1, Math.floor(topK)), MAX_TOP_K), format: a.format, safetyMargin: a.settings.planner.safetyMargin }, coreEstimators(time));
  } catch (e) {
    return { ...base, layouts: [], problems: [internal(e)] };
  }
  const format = a.format;
  const layouts: PlannedLayout[] = result.layouts.map((layout) => {
    const e = base.canApply
      ? applyLayoutEdits(format, a.text, plan, layout, a.facts, undefined, a.settings.units)
      : { edits: [], delta: '', notes: [`ShardLens cannot rewrite ${format} files yet.`] };
    const planned: PlannedLayout = { layout, summary: layoutSummary(layout), edits: e.edits, delta: e.delta, notes: e.notes };
    return reparse && base.canApply ? checkPlannedLayout(a.text, plan, planned, reparse) : planned;
  });
  return { ...base, result, layouts, problems: result.problems };
}

interface Entry {
  readonly analysis: DocumentAnalysis;
  readonly topK: number;
  readonly value: PlanLayoutsResult;
}

/** One planner result per document, valid while the analysis (document version and settings) is the same. */
export class PlannerCache {
  private readonly entries = new Map<string, Entry>();
  /** The step-time cache every search of this server shares (shared/time/cache.ts). */
  private readonly time = new TimeCache();
  /** Planner runs so far (tests check that a second request is served from the cache). */
  runs = 0;

  /** `reparse` reads an edited text of a document again (for the Apply Layout check); without it layouts are not checked. */
  constructor(private readonly reparse?: (a: DocumentAnalysis, text: string) => DocumentAnalysis['plan']) {}

  /** The cached result for this analysis, if any holds at least `topK` layouts' worth of search. */
  peek(a: DocumentAnalysis, topK: number = DEFAULT_TOP_K): PlanLayoutsResult | undefined {
    const e = this.entries.get(a.uri);
    if (!e || e.topK < topK || !sameInput(e.analysis, a)) return undefined;
    return trim(e.value, topK);
  }

  /** The planner result for this analysis: cached, else computed now (synchronously). */
  get(a: DocumentAnalysis, topK: number = DEFAULT_TOP_K): PlanLayoutsResult {
    const hit = this.peek(a, topK);
    if (hit) return hit;
    const k = Math.max(topK, DEFAULT_TOP_K);
    this.runs++;
    const reparse = this.reparse;
    const value = planDocument(a, k, reparse ? (text) => reparse(a, text) : undefined, this.time);
    this.entries.set(a.uri, { analysis: a, topK: k, value });
    return trim(value, topK);
  }

  /** Forgets a document (closed) or everything (settings changed). */
  clear(uri?: string): void {
    if (uri) this.entries.delete(uri);
    else this.entries.clear();
  }
}

/** The same analysis object, or one of the same text and settings that resolved to an equal plan (a file read again). */
function sameInput(x: DocumentAnalysis, y: DocumentAnalysis): boolean {
  return x === y || (x.text === y.text && x.settings === y.settings && JSON.stringify(x.plan) === JSON.stringify(y.plan));
}

function trim(v: PlanLayoutsResult, topK: number): PlanLayoutsResult {
  return v.layouts.length <= topK ? v : { ...v, layouts: v.layouts.slice(0, topK) };
}
