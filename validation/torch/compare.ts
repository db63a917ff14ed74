/**
 * Measured vs estimated, per rank and per term. The estimate is the core's (a StageMemory of the comparable plan)
 * when given, else first principles; communication is compared with the collectives torch issues for the mode.
 */
import type { StageMemory } from '../../shared/plan/result';
import { stageOfMode } from './exportPlan';
import { expectedCollectives, expectedModelStates, zeroRedundancyPartition } from './expected';
import type { ProbeReport } from './types';
import { own } from '../../shared/lookup';
import { torchReportedPeak } from '../../shared/memory/torchView';

export type ComparedTerm = 'parameters' | 'gradients' | 'optimizerStates' | 'modelStates' | 'peakAllocated' | 'commBuffers' | 'commBytesPerStep';

export interface TermComparison {
  readonly term: ComparedTerm | `collective:${string}`;
  readonly measured: number;
  /** The estimate as the core (or first principles) states it. */
  readonly estimated: number;
  /** What the engine should hold: the estimate adjusted for known engine behaviour (e.g. whole-tensor ZeRO partitions). */
  readonly expected: number;
  /** measured / expected − 1 (0 when both are 0). */
  readonly relError: number;
  /** Whether |relError| ≤ tolerance; undefined for terms shown but not checked (peak memory). */
  readonly withinTolerance?: boolean;
  readonly note?: string;
}

export interface RankComparison { readonly rank: number; readonly ok: boolean; readonly terms: readonly TermComparison[] }

export interface ProbeComparison {
  readonly mode: ProbeReport['mode'];
  readonly worldSize: number;
  readonly parameters: number;
  readonly estimateSource: 'core' | 'first-principles';
  readonly tolerance: number;
  readonly ranks: readonly RankComparison[];
  /** Every checked term on every rank is within tolerance. */
  readonly ok: boolean;
  readonly notes: readonly string[];
}

/** Per-rank model-state bytes from a core stage estimate (master weights count with the optimizer, as DeepSpeed does). */
export interface CoreRankEstimate {
  readonly parametersBytes: number;
  readonly gradientsBytes: number;
  readonly optimizerStatesBytes: number;
  /** Peak tensor bytes without the CUDA context (torch.cuda.max_memory_allocated does not see the context either). */
  readonly peakAllocatedBytes?: number;
  readonly commBuffersBytes?: number;
}

/** Reads the terms the probe measures out of the core's StageMemory. */
export function coreRankEstimate(stage: StageMemory): CoreRankEstimate {
  const t = (name: keyof StageMemory['terms']) => stage.terms[name]?.bytes ?? 0;
  return {
    parametersBytes: t('parameters'),
    // Gradients as the step holds them after the backward (engines that free them after the step have none at a forward
    // peak; the probe measures them after the backward).
    gradientsBytes: stage.gradientBytes,
    optimizerStatesBytes: t('optimizerStates') + t('masterWeights'),
    // torch's allocated peak leaves the CUDA context out (shared/memory/torchView.ts).
    peakAllocatedBytes: torchReportedPeak(stage).allocated,
    commBuffersBytes: t('commBuffers'),
  };
}

const FAMILY: Readonly<Record<string, string>> = {
  _all_gather_base: 'all_gather', all_gather_into_tensor: 'all_gather', _reduce_scatter_base: 'reduce_scatter',
  reduce_scatter_tensor: 'reduce_scatter',
};

/** Sums collectives of one family (torch 1.13 `_all_gather_base`, 2.x `all_gather_into_tensor` → all_gather). */
export function collectiveFamilies(c: Readonly<Record<string, { payloadBytes: number }>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [op, v] of Object.entries(c)) { const f = own(FAMILY, op) ?? op; out[f] = (out[f] ?? 0) + v.payloadBytes; }
  return out;
}

const rel = (m: number, e: number): number => (e === 0 ? (m === 0 ? 0 : 1) : m / e - 1);

function term(name: TermComparison['term'], measured: number, estimated: number, expected: number, tol: number | undefined, note?: string): TermComparison {
  const relError = rel(measured, expected);
  return { term: name, measured, estimated, expected, relError, ...(tol === undefined ? {} : { withinTolerance: Math.abs(relError) <= tol }), ...(note ? { note } : {}) };
}

export interface CompareOptions {
  /** The core's estimate for the comparable plan (exportProbePlan's comparablePlan); omitted → first principles. */
  readonly core?: CoreRankEstimate;
  /** Relative tolerance of model-state terms (default 1 %). */
  readonly tolerance?: number;
}

/** Compares every rank of a report with the estimate; a failed report gives rows with no terms. */
export function compareReport(report: ProbeReport, o: CompareOptions = {}): ProbeComparison {
  const tol = o.tolerance ?? 0.01;
  const n = report.worldSize;
  const psi = report.parameters ?? 0;
  const { precision, optimizer } = report.plan.training;
  const stage = report.plan.parallel.zeroStage ?? stageOfMode(report.mode);
  const engine = expectedModelStates(psi, stage, n, precision, optimizer);
  const est = o.core ?? engine;
  // torch autocast (DDP, ZeroRedundancyOptimizer, FSDP without param_dtype) keeps fp32 weights and gradients and no
  // master copy, where the core models bf16 weights plus fp32 masters: per term the engine's layout is expected, and
  // the total is still checked against the core.
  const torchAmp = (precision === 'bf16-mixed' || precision === 'fp16-mixed') && report.mode !== 'deepspeed';
  const base = torchAmp ? engine : est;
  const notes: string[] = [];
  // ZeroRedundancyOptimizer gives whole tensors to ranks, so each rank's optimizer share is partition[r]/Ψ, not 1/N.
  const partition = report.mode === 'zero1' && report.parameterNumels ? zeroRedundancyPartition(report.parameterNumels, n) : undefined;
  if (partition) notes.push('ZeroRedundancyOptimizer assigns whole tensors to ranks (sorted greedy): expected optimizer bytes follow that partition.');
  if (torchAmp) notes.push('torch autocast keeps fp32 weights and gradients and no master copy: per-term expectations follow torch; the model-state total is checked against the estimate.');
  const root = report.ranks.find((r) => r.fsdpRootParameters !== undefined)?.fsdpRootParameters ?? 0;
  const comm = expectedCollectives(report.mode, psi, precision, root);
  const ranks = report.ranks.map((r): RankComparison => {
    if (!r.ok || r.parametersBytes === undefined) return { rank: r.rank, ok: false, terms: [] };
    const optExpected = partition && psi > 0 ? (base.optimizerStatesBytes * n * partition[r.rank]) / psi : base.optimizerStatesBytes;
    const optNote = partition ? `partition share ${(partition[r.rank] / psi * 100).toFixed(1)} % of Ψ` : undefined;
    const estStates = est.parametersBytes + est.gradientsBytes + est.optimizerStatesBytes;
    // The total expected is the estimate's, shifted by the whole-tensor partition imbalance (0 without it).
    const expStates = estStates + (optExpected - base.optimizerStatesBytes);
    const terms: TermComparison[] = [
      term('parameters', r.parametersBytes, est.parametersBytes, base.parametersBytes, tol),
      term('gradients', r.gradientsBytes ?? 0, est.gradientsBytes, base.gradientsBytes, tol),
      term('optimizerStates', r.optimizerStatesBytes ?? 0, est.optimizerStatesBytes, optExpected, tol, optNote),
      term('modelStates', r.modelStatesBytes ?? 0, estStates, expStates, tol),
    ];
    if (o.core?.peakAllocatedBytes !== undefined && r.peakAllocatedBytes !== undefined) {
      terms.push(term('peakAllocated', r.peakAllocatedBytes, o.core.peakAllocatedBytes, o.core.peakAllocatedBytes, undefined,
        `measured by ${r.peakAllocatedSource ?? 'unknown'}; shown, not checked`));
    }
    if (o.core?.commBuffersBytes !== undefined && r.commBuffersBytes !== undefined) {
      terms.push(term('commBuffers', r.commBuffersBytes, o.core.commBuffersBytes, o.core.commBuffersBytes, undefined, 'DDP buckets not shared with gradients; shown, not checked'));
    }
    const measured = collectiveFamilies(r.collectives ?? {});
    for (const op of new Set([...Object.keys(comm), ...Object.keys(measured)])) {
      terms.push(term(`collective:${op}`, measured[op] ?? 0, comm[op] ?? 0, comm[op] ?? 0, tol));
    }
    const commTotal = Object.values(comm).reduce((a, b) => a + b, 0);
    terms.push(term('commBytesPerStep', r.commBytesPerStep ?? 0, commTotal, commTotal, tol));
    return { rank: r.rank, ok: true, terms };
  });
  const ok = report.ok && ranks.every((r) => r.ok && r.terms.every((t) => t.withinTolerance !== false));
  return { mode: report.mode, worldSize: n, parameters: psi, estimateSource: o.core ? 'core' : 'first-principles', tolerance: tol, ranks, ok, notes };
}

/**
 * The report with each rank's estimate attached as `estimated` (the fields the dashboards chart), so a saved report
 * can be reopened without re-estimating. Terms the comparison lacks are left out.
 */
export function withEstimates(report: ProbeReport, cmp: ProbeComparison): ProbeReport {
  const fields: Readonly<Record<string, string>> = {
    parameters: 'parametersBytes', gradients: 'gradientsBytes', optimizerStates: 'optimizerStatesBytes',
    modelStates: 'modelStatesBytes', peakAllocated: 'peakAllocatedBytes', commBytesPerStep: 'commBytesPerStep',
  };
  const byRank = new Map(cmp.ranks.map((r) => [r.rank, r]));
  return {
    ...report,
    ranks: report.ranks.map((r) => {
      const c = byRank.get(r.rank);
      if (!c || !c.terms.length) return r;
      const estimated: Record<string, number> = {};
      for (const t of c.terms) if (fields[t.term]) estimated[fields[t.term]] = Math.round(t.expected);
      return { ...r, estimated };
    }),
  };
}
