/**
 * The Hugging Face Trainer's end-of-training speed metrics. `speed_metrics("train", start_time, num_samples=
 * num_train_samples, num_steps=self.state.max_steps, …)` (src/transformers/trainer_utils.py, huggingface/transformers
 * 007360d65) gives `train_runtime` (seconds, `round(runtime, 4)`), `train_samples_per_second` and
 * `train_steps_per_second` (`round(…, 3)`), where `num_train_samples = max_steps × total_train_batch_size` and the
 * total batch is per-device batch × gradient accumulation × world size (trainer.py `_inner_training_loop`,
 * 000945a9b): samples of all GPUs together. They appear twice:
 *
 * - `self.log(metrics)` → `ProgressCallback.on_log` writes `str(logs)`: `{'train_runtime': 123.4,
 *   'train_samples_per_second': 5.6, 'train_steps_per_second': 0.7, 'train_loss': 2.1, 'epoch': 1.0}`;
 * - `log_metrics("train", metrics)` (src/transformers/trainer_pt_utils.py, 010a915ce) prints `***** train metrics
 *   *****` then `  {key: <{k_width}} = {value:>{v_width}}`, the runtime as `_secs2timedelta`:
 *   `{datetime.timedelta(seconds=int(secs))}.{msec:02d}` (e.g. `0:02:03.40`, `1 day, 2:03:04.50`).
 *
 * The start of training logs `  Total optimization steps = {max_steps:,}`, the same `max_steps`, so `train_runtime /
 * max_steps` is the step time to the runtime's precision. All are averages over the whole run: warm-up, evaluation and
 * checkpoint saves included.
 */
import type { EngineRead, LogFigure, LogFigures } from './types';
import type { LogLine } from './lines';
import { RATE, SECONDS, addValue, series, skippedWarnings, within, type Bounds, type Sample, type Series } from './values';

/** A whole run: above 0 s and at most ten years. */
const RUNTIME: Bounds = { min: 0, minInclusive: false, max: 10 * 365 * 86_400, why: '0, negative, not a number or over ten years' };

const dictValue = (key: string) => new RegExp(`['"]${key}['"]:\\s*(?:np\\.float\\d+\\()?['"]?([^,'"}\\s)]+)`);
const DICT_RUNTIME = dictValue('train_runtime');
const DICT_STEPS = dictValue('train_steps_per_second');
const DICT_SAMPLES = dictValue('train_samples_per_second');
const BLOCK_RUNTIME = /\btrain_runtime\s+=\s+(?:(\d+) days?, )?(\d+):(\d{2}):(\d{2})\.(\d{2})\b/;
const BLOCK_STEPS = /\btrain_steps_per_second\s+=\s+(\S+)/;
const BLOCK_SAMPLES = /\btrain_samples_per_second\s+=\s+(\S+)/;
const TOTAL_STEPS = /\bTotal optimization steps = ([\d,]+)/;
const AVERAGES = 'The Hugging Face Trainer states only averages over the whole run (train_runtime, train_*_per_second): warm-up, evaluation and checkpoint saves are included, so the figure is not a steady-state one (and a resumed run divides all its steps by the resumed part\'s time).';

/** Seconds of a `_secs2timedelta` runtime: days, hours, minutes, seconds and hundredths. */
function blockSeconds(m: RegExpExecArray): string {
  const [d, h, min, s, cs] = [m[1] ?? '0', m[2], m[3], m[4], m[5]].map(Number);
  return String(d * 86_400 + h * 3_600 + min * 60 + s + cs / 100);
}

/** The last sample of the dict form, else of the block form. */
const lastOf = (dict: readonly Sample[], block: readonly Sample[]): Sample | undefined => dict.at(-1) ?? block.at(-1);

/** The Trainer's figures: the run-average step time (or, without it, samples per second). */
export function readHfTrainer(lines: readonly LogLine[]): EngineRead {
  const runtime = { dict: series('train_runtime', RUNTIME), block: series('train_runtime', RUNTIME) };
  const steps = { dict: series('train_steps_per_second', RATE), block: series('train_steps_per_second', RATE) };
  const samples = { dict: series('train_samples_per_second', RATE), block: series('train_samples_per_second', RATE) };
  let total: Sample | undefined;
  let hits = 0;
  for (const { text, no } of lines) {
    if (!text.includes('train_') && !text.includes('Total optimization steps')) continue;
    const t = TOTAL_STEPS.exec(text);
    if (t) { total = { value: Number(t[1].replace(/,/g, '')), line: no }; continue; }
    let hit = false;
    const read = (re: RegExp, s: Series, token: (m: RegExpExecArray) => string = (m) => m[1]) => {
      const m = re.exec(text);
      if (m) { addValue(s, token(m), 1, no); hit = true; }
    };
    read(DICT_RUNTIME, runtime.dict);
    read(DICT_STEPS, steps.dict);
    read(DICT_SAMPLES, samples.dict);
    read(BLOCK_RUNTIME, runtime.block, blockSeconds);
    read(BLOCK_STEPS, steps.block);
    read(BLOCK_SAMPLES, samples.block);
    if (hit) hits++;
  }
  const warnings: string[] = [];
  const step = stepTime(lastOf(runtime.dict.samples, runtime.block.samples), total, lastOf(steps.dict.samples, steps.block.samples), warnings);
  const rate = step ? undefined : lastOf(samples.dict.samples, samples.block.samples);
  const figures: LogFigures = {
    ...(step ? { stepSeconds: step } : {}),
    ...(rate ? { samplesPerSecond: { ...rate, detail: 'train_samples_per_second: max_steps × the total train batch (all GPUs together) ÷ train_runtime, averaged over the whole run', scope: 'global' as const } } : {}),
    steps: step && total ? total.value : 0,
  };
  if (step || rate) warnings.unshift(AVERAGES);
  warnings.push(...skippedWarnings([runtime.dict, runtime.block, steps.dict, steps.block, samples.dict, samples.block]));
  return { engine: 'hf-trainer', hits, figures, warnings };
}

/** train_runtime ÷ Total optimization steps when both are logged, else 1 ÷ train_steps_per_second. */
function stepTime(runtime: Sample | undefined, total: Sample | undefined, perSecond: Sample | undefined, warnings: string[]): LogFigure | undefined {
  if (runtime && total && total.value > 0) {
    const value = runtime.value / total.value;
    if (within(value, SECONDS)) {
      return { value, line: Math.max(runtime.line, total.line), detail: `train_runtime ${runtime.value} s ÷ ${total.value.toLocaleString('en-US')} optimization steps (Total optimization steps): the average wall-clock seconds of one optimizer step over the whole run, warm-up included` };
    }
    warnings.push(`train_runtime ÷ Total optimization steps (lines ${runtime.line} and ${total.line}) is over a day per step; it was skipped.`);
  }
  if (!perSecond) return undefined;
  const value = 1 / perSecond.value;
  if (!within(value, SECONDS)) {
    warnings.push(`1 ÷ train_steps_per_second (line ${perSecond.line}) is over a day per step; it was skipped.`);
    return undefined;
  }
  // speed_metrics rounds to 3 decimals: ±0.0005 steps/s.
  const error = 0.0005 / perSecond.value;
  if (error > 0.01) warnings.push(`train_steps_per_second ${perSecond.value} is rounded to 3 decimals, so the step time 1 ÷ ${perSecond.value} is uncertain by ±${Math.round(error * 100)} %.`);
  return { value, line: perSecond.line, detail: `1 ÷ train_steps_per_second ${perSecond.value}: the average wall-clock seconds of one optimizer step over the whole run, warm-up included` };
}
