/** Summary figures derived from an analysis: peak per GPU, model states, communication per step, deltas. */
import type { MemoryEstimate, StageMemory } from '../../shared/plan/result';
import type { AnalysisCollective } from '../../shared/protocol';
import type { CoreApi } from '../analysis/core';
import type { Variant } from './planEdit';

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

/** The effect of one variant on peak memory and communication. */
export interface Delta {
  readonly variant: Variant;
  readonly peakBefore: number;
  readonly peakAfter: number;
  readonly commBefore: number;
  readonly commAfter: number;
  readonly fitsAfter: boolean;
  readonly gpuMemoryBytes: number;
}

/** Re-estimates a variant; undefined when the core rejects it or a figure is not finite. */
export function deltaOf(api: CoreApi, memory: MemoryEstimate, cs: readonly AnalysisCollective[], v: Variant): Delta | undefined {
  try {
    const m = api.estimateMemory(v.plan);
    const peakBefore = peakBytes(memory);
    const peakAfter = peakBytes(m);
    const commAfter = commBytes(api.stepTime(v.plan)?.collectives ?? []);
    const commBefore = commBytes(cs);
    const all = [peakBefore, peakAfter, commAfter, commBefore];
    if (!all.every((x) => typeof x === 'number' && Number.isFinite(x) && x >= 0)) return undefined;
    return {
      variant: v, peakBefore: peakBefore as number, peakAfter: peakAfter as number, commBefore, commAfter,
      fitsAfter: m.fits, gpuMemoryBytes: m.gpuMemoryBytes,
    };
  } catch {
    return undefined;
  }
}
