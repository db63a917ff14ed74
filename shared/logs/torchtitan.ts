/**
 * torchtitan's training line, `MetricsProcessor.log` in torchtitan/components/metrics.py (pytorch/torchtitan
 * b5bcd76c6, 2026-08-21), each field after an ANSI colour:
 *
 *     step: {step:2}  loss: {global_avg_loss:8.5f}  grad_norm: {grad_norm:7.4f}  memory: {max_reserved_gib:5.2f}GiB
 *     ({max_reserved_pct:.2f}%)  tps: {round(tps):,}  tflops: {tflops:,.2f}  mfu: {mfu_str}
 *
 * and before it (train.py at 3f20451bc, 2024-12-27, before `grad_norm` (a85e2a536) and `tflops` (4e3266374)):
 *
 *     step: {step:2}  loss: {global_avg_loss:7.4f}  memory: {max_reserved_gib:5.2f}GiB({max_reserved_pct:.2f}%)
 *     tps: {round(tps):,}  mfu: {mfu:.2f}%
 *
 * `memory` is `reserved_bytes.all.peak` / 2³⁰ of the logging rank since the previous line (`DeviceMemoryMonitor.
 * get_peak_stats`, peak stats reset after each line). `tps` is `ntokens_since_last_log / (time_delta ×
 * non_data_parallel_size)` with `non_data_parallel_size = cp·tp·pp` (distributed/parallel_dims.py): the rank's tokens
 * over the wall time since the previous line, divided by the GPUs sharing them, i.e. all tokens ÷ all GPUs per second.
 * A line is logged at step 1 and every `log_freq` steps. `validate step:` lines (`log_validation`) are not training.
 */
import { count, peakOf, steadyMedian } from './series';
import type { EngineRead, LogFigures } from './types';
import type { LogLine } from './lines';
import { BYTES, RATE, addValue, series, skippedWarnings } from './values';

const STEP = /\bstep:\s*(\d+)\s+loss:/;
const VALIDATE = /\bvalidate step:/;
// The value must end before its unit or the next field, so a line cut in a number gives nothing.
const MEMORY = /\bmemory:\s*([^\s(]+?)GiB/;
const TPS = /\btps:\s*(\S+)\s/;

/** torchtitan's figures: tokens per second per GPU and the peak reserved memory. */
export function readTorchtitan(lines: readonly LogLine[]): EngineRead {
  const tps = series('tps', RATE);
  const memory = series('memory (GiB)', BYTES);
  const seen = new Set<string>();
  let hits = 0;
  for (const { text, no } of lines) {
    if (!text.includes('step:')) continue;
    const step = STEP.exec(text);
    if (!step || VALIDATE.test(text)) continue;
    hits++;
    const mem = MEMORY.exec(text);
    if (mem) addValue(memory, mem[1], 2 ** 30, no);
    // Several ranks may log the same step (LOG_RANK); the first line of a step counts for the rate.
    const t = TPS.exec(text);
    if (t && !seen.has(step[1])) {
      seen.add(step[1]);
      addValue(tps, t[1], 1, no);
    }
  }
  const rate = steadyMedian(tps, 'tenth', 'step', "tps: tokens per second per GPU (the logging rank's tokens over the wall time since the previous line ÷ (TP·PP·CP), i.e. all tokens ÷ all GPUs)");
  const peak = peakOf([memory], "GiB × 2³⁰: the logging rank's peak reserved bytes (PyTorch reserved_bytes.all.peak) per GPU");
  const figures: LogFigures = {
    ...(rate ? { tokensPerSecondPerGpu: rate.figure } : {}),
    ...(peak ? { peakReservedBytes: peak } : {}),
    steps: rate?.steps ?? 0,
  };
  const warnings = [...(rate?.warnings ?? []), ...skippedWarnings([tps, memory])];
  if (hits > 0 && !rate && tps.skippedLines.length === 0) warnings.push(`None of the ${count(hits, 'torchtitan step line')} states tps.`);
  return { engine: 'torchtitan', hits, figures, warnings };
}
