/**
 * A stage's peak as PyTorch reports it. `torch.cuda.memory_stats()` (`reserved_bytes.all.peak`,
 * `allocated_bytes.all.peak`, what torchtitan's "memory", Megatron's report_memory and DeepSpeed's see_memory_usage
 * print) counts the caching allocator's blocks only: the CUDA context and NCCL's communicator buffers, which the
 * estimate's cudaContext term holds (docs/formulas.md#runtime-overheads), are allocated outside it. Comparing a
 * published or logged peak with the estimate therefore leaves that term out; the estimate shown to users keeps it
 * (it is device memory the job needs).
 */
import type { StageMemory } from '../plan/result';

/**
 * Peak reserved and allocated bytes of a stage without what sits outside the allocator: its cudaContext term, or
 * `outside` bytes when given (a calibrated plan's context term also holds the measured overhead, which is the
 * allocator's: shared/plan/calibration.ts adds it there).
 */
export function torchReportedPeak(s: Pick<StageMemory, 'peakReservedBytes' | 'peakAllocatedBytes' | 'terms'>, outside?: number): { reserved: number; allocated: number } {
  const ctx = Math.max(0, outside ?? s.terms.cudaContext?.bytes ?? 0);
  return { reserved: Math.max(0, s.peakReservedBytes - ctx), allocated: Math.max(0, s.peakAllocatedBytes - ctx) };
}
