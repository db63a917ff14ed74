/**
 * The caching allocator against its replay (issue 13): per stage, the oracle's allocation trace replayed through the
 * simulation of PyTorch's caching allocator (probe/oracle/allocator.py) beside the estimate's reserved memory. Tensor
 * bytes only (the CUDA context is outside torch's reserved bytes).
 *
 * Two errors: `reservedError` compares the reserved bytes themselves (the estimate's tensors and allocator terms
 * together); `cachedError` isolates the allocator terms: the oracle's allocated bytes plus the estimate's reserved −
 * allocated, against the oracle's reserved, so an error in the tensors does not show up as one of the allocator.
 */
import { estimateMemory } from '../../shared/memory/estimate';
import type { Plan } from '../../shared/plan/types';
import type { OracleReport } from './oracleTypes';

export interface AllocatorComparison {
  readonly stage: number;
  /** The replay's torch.cuda.max_memory_allocated / max_memory_reserved, native allocator and expandable segments. */
  readonly oracleAllocated: number; readonly oracleReserved: number; readonly oracleExpandable: number;
  /** The estimate's peak allocated and reserved tensor bytes (without the CUDA context). */
  readonly estimateAllocated: number; readonly estimateReserved: number;
  /** estimateReserved / oracleReserved − 1. */
  readonly reservedError: number;
  /** (oracleAllocated + estimateReserved − estimateAllocated) / oracleReserved − 1. */
  readonly cachedError: number;
}

/** One comparison per stage the oracle replayed (stages of reports without allocator fields are skipped). */
export function compareAllocator(report: OracleReport, plan: Plan): AllocatorComparison[] {
  const est = estimateMemory(plan);
  const out: AllocatorComparison[] = [];
  for (const r of report.ranks) {
    const s = est.stages[r.stage];
    const a = r.allocator;
    if (!s || !a || !(a.native.peakReserved > 0)) continue;
    const ctx = s.terms.cudaContext?.bytes ?? 0;
    const estimateAllocated = Math.max(0, s.peakAllocatedBytes - ctx), estimateReserved = Math.max(0, s.peakReservedBytes - ctx);
    const oracleAllocated = a.native.peakAllocated, oracleReserved = a.native.peakReserved;
    out.push({
      stage: r.stage, oracleAllocated, oracleReserved, oracleExpandable: a.expandable.peakReserved, estimateAllocated, estimateReserved,
      reservedError: estimateReserved / oracleReserved - 1,
      cachedError: (oracleAllocated + estimateReserved - estimateAllocated) / oracleReserved - 1,
    });
  }
  return out;
}
