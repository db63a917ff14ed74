/** Summary figures derived from an analysis: peak per GPU, model states, communication per step, deltas. */
import type { MemoryEstimate, StageMemory } from '../../shared/plan/result';
import { formatSignedPercent } from '../../shared/units';
import type { AnalysisCollective } from '../../shared/protocol';
import type { CoreApi } from '../analysis/core';
import type { DocumentAnalysis } from '../analysis/analyze';
import type { PlanPath } from '../../shared/plan/paths';
import { expressibleWhatIfs, type ExpressibleWhatIf } from '../../formats/whatIfEdit';

/** The stage with the highest peak reserved bytes. */
export function peakStage(m: MemoryEstimate): StageMemory | undefined {
  return m.stages[m.peakStage] ?? m.stages.reduce<StageMemory | undefined>((b, s) => (!b || s.peakReservedBytes > b.peakReservedBytes ? s : b), undefined);
}

/** Highest peak reserved bytes per GPU over stages. */
export function peakBytes(m: MemoryEstimate | undefined): number | undefined {
  return m ? peakStage(m)?.peakReservedBytes : undefined;
}

/** Highest of a per-stage figure over stages. */
export function maxOver(stages: readonly StageMemory[], f: (s: StageMemory) => number): number | undefined {
  return stages.length ? Math.max(...stages.map(f)) : undefined;
}

/** Bytes one GPU sends per optimizer step (optionally in one group): the busiest stage's sum of bytesPerRank. */
export function commBytes(cs: readonly AnalysisCollective[], group?: string): number {
  const perStage = new Map<number, number>();
  for (const c of cs) {
    if (group && c.group !== group) continue;
    const b = Number.isFinite(c.bytesPerRank) && c.bytesPerRank > 0 ? c.bytesPerRank : 0;
    perStage.set(c.stage, (perStage.get(c.stage) ?? 0) + b);
  }
  return perStage.size ? Math.max(...perStage.values()) : 0;
}

/** A what-if the file can hold, with the plan it resolves to (the file's facts replaced, derived again) and its edits. */
export type PlannedWhatIf = ExpressibleWhatIf;

/** The what-ifs of a key that the file can hold, with their plans; none when the analysis cannot re-resolve. */
export function plannedWhatIfs(a: DocumentAnalysis, path: PlanPath): PlannedWhatIf[] {
  const { plan, whatIf } = a;
  if (!plan || !whatIf) return [];
  return expressibleWhatIfs(a, plan, path, whatIf);
}

/** The effect of one what-if on peak memory, communication and step time. */
export interface Delta {
  readonly variant: PlannedWhatIf;
  readonly peakBefore: number;
  readonly peakAfter: number;
  readonly commBefore: number;
  readonly commAfter: number;
  readonly fitsAfter: boolean;
  readonly gpuMemoryBytes: number;
  /** Step time before and after, seconds (absent when either has no estimate). */
  readonly stepBefore?: number;
  readonly stepAfter?: number;
}

/** A step-time change as a signed percentage ("+12.5 %"), or undefined below 0.05 % or without both figures. */
export function stepChange(d: Delta): string | undefined {
  const { stepBefore: b, stepAfter: x } = d;
  if (b === undefined || x === undefined || !(b > 0)) return undefined;
  const f = x / b - 1;
  return Math.abs(f) < 5e-4 ? undefined : formatSignedPercent(f);
}

/** Re-estimates a variant; undefined when the core rejects it or a figure is not finite. */
export function deltaOf(api: CoreApi, memory: MemoryEstimate, cs: readonly AnalysisCollective[], v: PlannedWhatIf, stepBefore?: number): Delta | undefined {
  try {
    const m = api.estimateMemory(v.plan);
    const peakBefore = peakBytes(memory);
    const peakAfter = peakBytes(m);
    const time = api.stepTime(v.plan);
    const commAfter = commBytes(time?.collectives ?? []);
    const stepAfter = time?.stepSeconds;
    const steps = stepBefore !== undefined && stepAfter !== undefined && Number.isFinite(stepBefore) && Number.isFinite(stepAfter) && stepBefore > 0 && stepAfter > 0
      ? { stepBefore, stepAfter } : {};
    const commBefore = commBytes(cs);
    const all = [peakBefore, peakAfter, commAfter, commBefore];
    if (!all.every((x) => typeof x === 'number' && Number.isFinite(x) && x >= 0)) return undefined;
    return {
      variant: v, peakBefore: peakBefore as number, peakAfter: peakAfter as number, commBefore, commAfter,
      fitsAfter: m.fits, gpuMemoryBytes: m.gpuMemoryBytes, ...steps,
    };
  } catch {
    return undefined;
  }
}
