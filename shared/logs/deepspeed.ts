/**
 * DeepSpeed's lines (deepspeedai/DeepSpeed edaa72212, 2026-08-22; the same at 3573858e7, 2024-12):
 *
 * - `ThroughputTimer.stop` (deepspeed/utils/timer.py), every `steps_per_print` optimizer steps on rank 0:
 *   `epoch={}/micro_step={}/global_step={}, RunningAvgSamplesPerSec={}, CurrSamplesPerSec={}, MemAllocated={}GB,
 *   MaxMemAllocated={}GB`. The engine builds the timer with `batch_size=self.train_batch_size()` (runtime/engine.py),
 *   the global batch (micro-batch × gradient accumulation × data-parallel size), so `CurrSamplesPerSec =
 *   train_batch_size / (forward-to-step time of this optimizer step)` counts samples of all GPUs together. The memory
 *   fields are `round(max_memory_allocated / 1024**3, 2)`: GiB, though printed "GB".
 * - `PipelineEngine.train_batch` (runtime/pipe/engine.py), every `steps_per_print` steps: `steps: {} loss: {:0.4f}
 *   iter time (s): {:0.3f} samples/sec: {:0.3f}`, the `train_batch` timer over the last `steps_per_print` steps ÷
 *   their number: the wall-clock seconds of one step.
 * - `see_memory_usage` (runtime/utils.py): `MA {round(memory_allocated / (1024*1024*1024), 2)} GB         Max_MA {…, 2}
 *   GB         CA {round(memory_reserved / …, 2)} GB         Max_CA {round(max_memory_reserved / …)} GB ` (the
 *   backslash continuations keep the next line's indent). Max_CA is rounded to whole GiB; peak stats reset after it.
 */
import { count, peakOf, steadyMedian } from './series';
import type { EngineRead, LogFigures } from './types';
import type { LogLine } from './lines';
import { BYTES, RATE, SECONDS, addValue, series, skippedWarnings } from './values';

const GLOBAL_STEP = /\bglobal_step=(\d+)/;
const CURR_SAMPLES = /\bCurrSamplesPerSec=([^,\s]+),/;
const MAX_MEM_ALLOCATED = /\bMaxMemAllocated=([^,\s]+?)GB/;
const PIPE_STEPS = /\bsteps:\s*(\d+)\s/;
const PIPE_ITER = /\biter time \(s\):\s*(\S+)\s+samples\/sec:/;
const MAX_MA = /\bMax_MA\s+(\S+)\s+GB/;
const CA = /\bCA\s+(\S+)\s+GB/;
const MAX_CA = /\bMax_CA\s+(\S+)\s+GB/;
const GIB = 2 ** 30;

/** DeepSpeed's figures: the pipeline step time or else the global samples per second, and the peak memory. */
export function readDeepSpeed(lines: readonly LogLine[]): EngineRead {
  const samples = series('CurrSamplesPerSec', RATE);
  const iter = series('iter time (s)', SECONDS);
  const maxMem = series('MaxMemAllocated (GB)', BYTES);
  const maxMa = series('Max_MA (GB)', BYTES);
  const ca = series('CA (GB)', BYTES);
  const maxCa = series('Max_CA (GB)', BYTES);
  const seenSteps = new Set<string>();
  const seenPipe = new Set<string>();
  let hits = 0;
  for (const { text, no } of lines) {
    if (text.includes('SamplesPerSec=')) {
      const step = GLOBAL_STEP.exec(text);
      const curr = CURR_SAMPLES.exec(text);
      const mem = MAX_MEM_ALLOCATED.exec(text);
      if (!step || (!curr && !mem)) continue;
      hits++;
      if (mem) addValue(maxMem, mem[1], GIB, no);
      if (curr && !seenSteps.has(step[1])) {
        seenSteps.add(step[1]);
        addValue(samples, curr[1], 1, no);
      }
    } else if (text.includes('iter time (s)')) {
      const step = PIPE_STEPS.exec(text);
      const t = PIPE_ITER.exec(text);
      if (!step || !t) continue;
      hits++;
      if (!seenPipe.has(step[1])) {
        seenPipe.add(step[1]);
        addValue(iter, t[1], 1, no);
      }
    } else if (text.includes('Max_MA')) {
      const a = MAX_MA.exec(text);
      const c = CA.exec(text);
      const mc = MAX_CA.exec(text);
      if (!a && !c && !mc) continue;
      hits++;
      if (a) addValue(maxMa, a[1], GIB, no);
      if (c) addValue(ca, c[1], GIB, no);
      if (mc) addValue(maxCa, mc[1], GIB, no);
    }
  }
  const time = steadyMedian(iter, 'first', 'step', 'iter time (s) of the pipeline engine: the wall-clock seconds of one optimizer step (each line averages the steps since the previous line)');
  const rate = time ? undefined : steadyMedian(samples, 'first', 'step', 'CurrSamplesPerSec: train_batch_size (all GPUs together) ÷ the forward-to-step time of the logged optimizer step');
  const alloc = peakOf([maxMem, maxMa], 'GB × 2³⁰ (DeepSpeed divides by 1024³): PyTorch max_memory_allocated bytes per GPU on rank 0');
  const res = peakOf([maxCa, ca], 'GB × 2³⁰ (DeepSpeed divides by 1024³): PyTorch max_memory_reserved (Max_CA, whole GiB) or memory_reserved (CA) bytes per GPU on rank 0');
  const figures: LogFigures = {
    ...(time ? { stepSeconds: time.figure } : {}),
    ...(rate ? { samplesPerSecond: { ...rate.figure, scope: 'global' as const } } : {}),
    ...(res ? { peakReservedBytes: res } : {}),
    ...(alloc ? { peakAllocatedBytes: alloc } : {}),
    steps: (time ?? rate)?.steps ?? 0,
  };
  const warnings = [...((time ?? rate)?.warnings ?? []), ...skippedWarnings([iter, samples, maxMem, maxMa, ca, maxCa])];
  if (maxCa.samples.length > 0) {
    warnings.push(`DeepSpeed's see_memory_usage rounds Max_CA to whole GiB (${count(maxCa.samples.length, 'line')}), so the peak reserved memory is uncertain by up to ±0.5 GiB.`);
  }
  return { engine: 'deepspeed', hits, figures, warnings };
}
