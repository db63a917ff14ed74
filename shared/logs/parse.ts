/**
 * Reads the measured step time, throughput and peak memory out of a pasted training log of torchtitan, Megatron-LM,
 * DeepSpeed or the Hugging Face Trainer (the formats and what each figure means are in the reader of each engine:
 * torchtitan.ts, megatron.ts, deepspeed.ts, hfTrainer.ts). Pure and bounded: a string in, data out, never throws; at
 * most 200,000 lines of 2,000 characters are read (lines.ts), each once by each reader.
 */
import { splitLog } from './lines';
import { readDeepSpeed } from './deepspeed';
import { readHfTrainer } from './hfTrainer';
import { readMegatron } from './megatron';
import { readTorchtitan } from './torchtitan';
import type { EngineRead, LogEngine, LogParseResult } from './types';

/** The engines' names in the words the user knows. */
export const ENGINE_NAMES: Readonly<Record<LogEngine, string>> = {
  torchtitan: 'torchtitan',
  megatron: 'Megatron-LM',
  deepspeed: 'DeepSpeed',
  'hf-trainer': 'the Hugging Face Trainer',
};

/** The error of a log with no line any reader understands. */
export const NOT_FOUND = 'No step time or memory line of torchtitan, Megatron-LM, DeepSpeed or the Hugging Face Trainer was found.';

/** The measured figures of a training log, or why there are none. */
export function parseTrainingLog(text: string): LogParseResult {
  try {
    if (typeof text !== 'string') return { ok: false, error: 'The log is not text.' };
    return parse(text);
  } catch (e) {
    // A reader's bug must not take the caller down; say what happened instead.
    return { ok: false, error: `The log could not be read: ${e instanceof Error ? e.message : String(e)}` };
  }
}

function parse(text: string): LogParseResult {
  const split = splitLog(text);
  const reads: EngineRead[] = [readTorchtitan, readMegatron, readDeepSpeed, readHfTrainer].map((read) => read(split.lines));
  const found = reads.filter((r) => r.hits > 0);
  if (found.length === 0) return { ok: false, error: NOT_FOUND };
  // The most lines win; on a tie the first in the list above.
  const best = found.reduce((a, b) => (b.hits > a.hits ? b : a));
  const { stepSeconds, tokensPerSecondPerGpu, samplesPerSecond, peakReservedBytes, peakAllocatedBytes } = best.figures;
  const mixed = found.length > 1
    ? [`Lines of several engines were found (${found.map((r) => `${ENGINE_NAMES[r.engine]}: ${r.hits}`).join(', ')}); the log was read as ${ENGINE_NAMES[best.engine]}, which has the most.`]
    : [];
  if (!stepSeconds && !tokensPerSecondPerGpu && !samplesPerSecond && !peakReservedBytes && !peakAllocatedBytes) {
    const why = [...split.warnings, ...best.warnings].join(' ');
    return { ok: false, error: `Lines of ${ENGINE_NAMES[best.engine]} were found, but none held a usable figure.${why ? ` ${why}` : ''}` };
  }
  return {
    ok: true,
    measurement: {
      engine: best.engine,
      ...(stepSeconds ? { stepSeconds } : {}),
      ...(tokensPerSecondPerGpu ? { tokensPerSecondPerGpu } : {}),
      ...(samplesPerSecond ? { samplesPerSecond } : {}),
      ...(peakReservedBytes ? { peakReservedBytes } : {}),
      ...(peakAllocatedBytes ? { peakAllocatedBytes } : {}),
      steps: best.figures.steps,
      warnings: [...split.warnings, ...mixed, ...best.warnings],
    },
  };
}
