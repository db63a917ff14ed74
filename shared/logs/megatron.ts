/**
 * Megatron-LM's lines. `training_log` in megatron/training/training.py (NVIDIA/Megatron-LM d98e8a64d, 2026-08-22; the
 * same fields at 076972e37, 2024-12) prints, at the first iteration and every `log_interval` iterations:
 *
 *     [{datetime}] iteration {iteration:8d}/{train_iters:8d} | consumed samples: {:12d} |
 *     elapsed time per iteration (ms): {:.1f} | throughput per GPU (TFLOP/s/GPU): {:.1f} | learning rate: {:.6E} |
 *     global batch size: {:5d} | lm loss: {:.6E} | loss scale: {:.1f} | grad norm: {:.3f} |
 *     number of skipped iterations: {:3d} | number of nan iterations: {:3d} |
 *
 * where the elapsed time is the `interval-time` timer over the iterations since the previous line, divided by their
 * number: the wall-clock time of one optimizer step, the same on every GPU. `report_memory`
 * (megatron/training/utils/common_utils.py at d98e8a64d; megatron/training/utils.py at 076972e37) prints, on
 * data-parallel rank 0 of each model-parallel rank, with `mega_bytes = 1024.0 * 1024.0`:
 *
 *     [Rank {rank}] (after {iteration} iterations) memory (MB) | allocated: {:.2f} | max allocated: {:.2f} |
 *     reserved: {:.2f} | max reserved: {:.2f}
 *
 * (plain `{}` floats in 2024-12), i.e. PyTorch's `max_memory_allocated` / `max_memory_reserved` in MiB.
 */
import { listLines } from './lines';
import { count, peakOf, steadyMedian } from './series';
import type { EngineRead, LogFigures } from './types';
import type { LogLine } from './lines';
import { BYTES, SECONDS, addValue, series, skippedWarnings } from './values';

const ITERATION = /\biteration\s+(\d+)\/\s*\d+\s*\|/;
const ELAPSED = /\belapsed time per iteration \(ms\):\s*([^\s|]+)\s*\|/;
const NAN_ITERS = /\bnumber of nan iterations:\s*(\d+)/;
const MAX_ALLOCATED = /\|\s*max allocated:\s*([^\s|]+)/;
const MAX_RESERVED = /\|\s*max reserved:\s*([^\s|]+)/;
const MIB = 2 ** 20;

/** Megatron-LM's figures: the step time and the peak allocated and reserved memory. */
export function readMegatron(lines: readonly LogLine[]): EngineRead {
  const elapsed = series('elapsed time per iteration (ms)', SECONDS);
  const allocated = series('max allocated (MB)', BYTES);
  const reserved = series('max reserved (MB)', BYTES);
  const seen = new Set<string>();
  const nanLines: number[] = [];
  let hits = 0;
  for (const { text, no } of lines) {
    if (text.includes('memory (MB)')) {
      const a = MAX_ALLOCATED.exec(text);
      const r = MAX_RESERVED.exec(text);
      if (a) addValue(allocated, a[1], MIB, no);
      if (r) addValue(reserved, r[1], MIB, no);
      if (a || r) hits++;
      continue;
    }
    if (!text.includes('iteration')) continue;
    const it = ITERATION.exec(text);
    const ms = it && ELAPSED.exec(text);
    if (!it || !ms) continue;
    hits++;
    const nan = NAN_ITERS.exec(text);
    if (nan && Number(nan[1]) > 0) nanLines.push(no);
    // A line repeated (two ranks' output, a pasted log twice) counts once.
    if (seen.has(it[1])) continue;
    seen.add(it[1]);
    addValue(elapsed, ms[1], 1e-3, no);
  }
  const time = steadyMedian(elapsed, 'tenth', 'iteration', "elapsed time per iteration (ms) ÷ 1000: the wall-clock seconds of one optimizer step, the same on every GPU (each line averages the iterations since the previous line)");
  const alloc = peakOf([allocated], 'MB × 2²⁰: PyTorch max_memory_allocated bytes per GPU, over the ranks that reported');
  const res = peakOf([reserved], 'MB × 2²⁰: PyTorch max_memory_reserved bytes per GPU, over the ranks that reported');
  const figures: LogFigures = {
    ...(time ? { stepSeconds: time.figure } : {}),
    ...(res ? { peakReservedBytes: res } : {}),
    ...(alloc ? { peakAllocatedBytes: alloc } : {}),
    steps: time?.steps ?? 0,
  };
  const warnings = [...(time?.warnings ?? []), ...skippedWarnings([elapsed, allocated, reserved])];
  if (nanLines.length > 0) {
    warnings.push(`${count(nanLines.length, 'logged interval')} had nan iterations (${listLines(nanLines)}); their times are still counted, but the run was not healthy.`);
  }
  return { engine: 'megatron', hits, figures, warnings };
}
