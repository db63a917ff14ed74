/**
 * Oracle vs estimate, per pipeline stage and per category: the oracle's peak of each category on its own and of the
 * total (torch's MemTracker) beside ShardLens's estimate of the same (possibly reduced-depth) plan.
 *
 * Tolerances (issue #13): every category within 3 % and the total within 2 %. A category whose difference is below
 * 0.5 % of the total passes too (a category that small cannot move the total; its relative error is still shown).
 */
import { stageCategoryPeaks, type CategoryPeaks } from '../../shared/memory/categories';
import { estimateMemory } from '../../shared/memory/estimate';
import { stageNumbers } from '../../shared/memory/fast';
import type { Plan } from '../../shared/plan/types';
import type { OracleReport } from './oracleTypes';

export const CATEGORY_TOLERANCE = 0.03;
export const TOTAL_TOLERANCE = 0.02;
/** A category difference below this share of the total passes whatever its relative error. */
export const NEGLIGIBLE_SHARE = 0.005;

export const COMPARED = ['parameters', 'gradients', 'optimizer', 'activations', 'temporaries', 'other', 'total'] as const;
export type ComparedCategory = (typeof COMPARED)[number];

export interface CategoryRow {
  readonly category: ComparedCategory;
  readonly oracle: number;
  readonly estimate: number;
  /** estimate / oracle − 1 (0 when both are 0, 1 when only the estimate is non-zero). */
  readonly relError: number;
  readonly ok: boolean;
}

export interface StageComparison { readonly stage: number; readonly label: string; readonly rows: readonly CategoryRow[]; readonly ok: boolean }

export interface OracleComparison { readonly stages: readonly StageComparison[]; readonly ok: boolean }

const rel = (est: number, ora: number) => (ora === 0 ? (est === 0 ? 0 : 1) : est / ora - 1);

/** Oracle categories merged as the estimate states them (module buffers such as RoPE tables count as parameters). */
export function oracleCategories(peaks: OracleReport['ranks'][number]['peaks']): CategoryPeaks {
  return {
    parameters: peaks.parameters + peaks.buffers, gradients: peaks.gradients, optimizer: peaks.optimizer,
    activations: peaks.activations, temporaries: peaks.temporaries, other: peaks.other, total: peaks.total,
  };
}

/** Compares one stage's figures. */
export function compareCategories(oracle: CategoryPeaks, estimate: CategoryPeaks): { rows: CategoryRow[]; ok: boolean } {
  const rows = COMPARED.map((category): CategoryRow => {
    const o = oracle[category], e = estimate[category];
    const r = rel(e, o);
    const tol = category === 'total' ? TOTAL_TOLERANCE : CATEGORY_TOLERANCE;
    const ok = Math.abs(r) <= tol || (category !== 'total' && Math.abs(e - o) <= NEGLIGIBLE_SHARE * oracle.total);
    return { category, oracle: o, estimate: e, relError: r, ok };
  });
  return { rows, ok: rows.every((x) => x.ok) };
}

function stageLabel(stage: number, pp: number): string {
  if (pp <= 1) return 'every rank';
  return `pipeline stage ${stage} of ${pp}${stage === 0 ? ' (first)' : stage === pp - 1 ? ' (last)' : ''}`;
}

/** Compares every stage the oracle measured with the estimate of `plan` (the comparable plan of the export). */
export function compareOracle(report: OracleReport, plan: Plan): OracleComparison {
  const est = estimateMemory(plan);
  const stages = report.ranks.map((r): StageComparison => {
    const s = est.stages[r.stage];
    const e = s ? stageCategoryPeaks(s) : undefined;
    if (!e) return { stage: r.stage, label: stageLabel(r.stage, plan.parallel.pp), rows: [], ok: false };
    const { rows, ok } = compareCategories(oracleCategories(r.peaks), e);
    return { stage: r.stage, label: stageLabel(r.stage, plan.parallel.pp), rows, ok };
  });
  return { stages, ok: report.ok && stages.length > 0 && stages.every((s) => s.ok) };
}

/**
 * The total at the peak apart from the model's saved activations, per stage: the oracle's total minus its activations
 * at the moment of its peak, beside the estimate's tensors minus the activations of its peak moment. This checks the
 * engine's own bytes (states, buckets, gradient partitions, gathered parameters, copies) at the peak while the
 * activation terms are checked on their own (issue 13).
 */
export function totalBesideActivations(report: OracleReport, plan: Plan): { stage: number; oracle: number; estimate: number; relError: number }[] {
  return report.ranks.map((r) => {
    const s = stageNumbers(plan, r.stage);
    const m = s?.shown;
    const estimate = s && m ? s.allocated - s.cudaContext - (m.activations + m.embeddingActivations + m.logits) : NaN;
    const oracle = r.atPeak.total - r.atPeak.activations;
    return { stage: r.stage, oracle, estimate, relError: rel(estimate, oracle) };
  });
}
