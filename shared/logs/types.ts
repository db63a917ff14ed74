/**
 * What a training log says about its own run: the measured step time, throughput and peak memory that
 * `parseTrainingLog` (shared/logs/parse.ts) reads out of the console output of torchtitan, Megatron-LM, DeepSpeed or
 * the Hugging Face Trainer, so that an estimate can be checked against (and calibrated on) a real run.
 */

/** The training engines whose console lines are understood. */
export type LogEngine = 'torchtitan' | 'megatron' | 'deepspeed' | 'hf-trainer';

/** One measured figure and where it came from. */
export interface LogFigure {
  readonly value: number;
  /** 1-based line of the log it came from (the last line used). */
  readonly line: number;
  /** What it is, in words, e.g. "median of 18 logged steps after 2 warm-up steps, elapsed time per iteration (ms)". */
  readonly detail: string;
}

/** The figures one log gives; a figure the log does not state is absent. */
export interface LogMeasurement {
  readonly engine: LogEngine;
  /** Steady-state seconds per optimizer step, when the log states a step time (Megatron, HF Trainer) or it follows from the log alone. */
  readonly stepSeconds?: LogFigure;
  /** Tokens per second per GPU as logged (torchtitan tps). */
  readonly tokensPerSecondPerGpu?: LogFigure;
  /** Samples (sequences) per second, global or per GPU as the engine means it — say which in detail; only when no step time. */
  readonly samplesPerSecond?: LogFigure & { readonly scope: 'global' | 'per-gpu' };
  /** Peak bytes per GPU: the largest over the logged steps. */
  readonly peakReservedBytes?: LogFigure;
  /** Peak allocated (PyTorch `max_memory_allocated`) bytes per GPU: the largest over the logged steps. */
  readonly peakAllocatedBytes?: LogFigure;
  /** Logged steps the figures rest on (after warm-up). */
  readonly steps: number;
  /** What the reader skipped, doubted or had to choose, in full sentences. */
  readonly warnings: readonly string[];
}

/** The figures, or why there are none. */
export type LogParseResult =
  | { readonly ok: true; readonly measurement: LogMeasurement }
  | { readonly ok: false; readonly error: string };

/** The figures of a measurement without the engine and the warnings (what one engine's reader fills in). */
export type LogFigures = Omit<LogMeasurement, 'engine' | 'warnings'>;

/** What one engine's reader found in a log. */
export interface EngineRead {
  readonly engine: LogEngine;
  /** Lines that carry a figure of this engine (how the engine of a log is chosen). */
  readonly hits: number;
  readonly figures: LogFigures;
  readonly warnings: readonly string[];
}
