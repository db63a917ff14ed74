/**
 * Log lines as each engine prints them, built from the engines' own format strings (cited at each builder), so the
 * tests feed the parser what a real run writes. Python's format specs are spelt out by the helpers below.
 */

/** Python `{:w}` for a number or string: right-aligned in w characters. */
export const pad = (v: string | number, w: number): string => String(v).padStart(w);
/** Python `{:.df}`. */
export const fixed = (x: number, d: number): string => x.toFixed(d);
/** Python `{:,}` of an int (and `{:,.df}` with d decimals). */
export const commas = (x: number, d = 0): string => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d, useGrouping: true });
/** Python `{:.dE}`: mantissa, `E`, sign and at least two exponent digits. */
export function sci(x: number, d: number): string {
  const [m, e] = x.toExponential(d).split('e');
  const sign = e.startsWith('-') ? '-' : '+';
  return `${m}E${sign}${e.replace(/^[-+]/, '').padStart(2, '0')}`;
}

/** torchtitan's `Color` (torchtitan/tools/utils.py at b5bcd76c6). */
const C = {
  red: '\u001b[31m', green: '\u001b[32m', yellow: '\u001b[33m', blue: '\u001b[34m', magenta: '\u001b[35m',
  cyan: '\u001b[36m', reset: '\u001b[39m', orange: '\u001b[38;2;180;60;0m', turquoise: '\u001b[38;2;54;234;195m',
};
/** torchtitan's `NoColor`: every colour is the empty string. */
const NO_C: typeof C = Object.fromEntries(Object.keys(C).map((k) => [k, ''])) as typeof C;

export interface TitanStep {
  readonly step: number;
  readonly loss: number;
  readonly gradNorm?: number;
  readonly memGiB: string;
  readonly memPct: number;
  readonly tps: number;
  readonly tflops?: number;
  readonly mfu?: number;
}

/**
 * torchtitan at b5bcd76c6 (2026-08-21), torchtitan/components/metrics.py `MetricsProcessor.log`, after the logger's
 * `[titan] %(asctime)s - %(name)s - %(levelname)s - ` (torchtitan/tools/logging.py). `memGiB` is the text of
 * `{max_reserved_gib:5.2f}` so hostile values can be written.
 */
export function titanHead(s: TitanStep, colour = true): string {
  const c = colour ? C : NO_C;
  return '[titan] 2026-08-21 10:00:00,123 - root - INFO - '
    + `${c.red}step: ${pad(s.step, 2)}  `
    + `${c.green}loss: ${pad(fixed(s.loss, 5), 8)}  `
    + `${c.orange}grad_norm: ${pad(fixed(s.gradNorm ?? 1, 4), 7)}  `
    + `${c.turquoise}memory: ${pad(s.memGiB, 5)}GiB(${fixed(s.memPct, 2)}%)  `
    + `${c.blue}tps: ${commas(Math.round(s.tps))}  `
    + `${c.cyan}tflops: ${commas(s.tflops ?? 200, 2)}  `
    + `${c.magenta}mfu: ${s.mfu === undefined ? 'N/A' : `${fixed(s.mfu, 2)}%`}${c.reset}`;
}

/** torchtitan at 3f20451bc (2024-12-27), train.py, after `%(asctime)s - %(name)s - %(levelname)s - ` (torchtitan/logging.py). */
export function titan2024(s: TitanStep, colour = true): string {
  const c = colour ? C : NO_C;
  return '2024-12-27 10:00:00,123 - root - INFO - '
    + `${c.cyan}step: ${pad(s.step, 2)}  `
    + `${c.green}loss: ${pad(fixed(s.loss, 4), 7)}  `
    + `${c.yellow}memory: ${pad(s.memGiB, 5)}GiB(${fixed(s.memPct, 2)}%)  `
    + `${c.blue}tps: ${commas(Math.round(s.tps))}  `
    + `${c.magenta}mfu: ${fixed(s.mfu ?? 40, 2)}%${c.reset}`;
}

/** torchtitan `log_validation` at b5bcd76c6: `validate step: {step:2}  loss: {loss:7.4f}  memory: …GiB(…%)  tps: {:,}`. */
export function titanValidate(step: number, memGiB: string, tps: number): string {
  return `${C.yellow}validate step: ${pad(step, 2)}  ${C.green}loss: ${pad(fixed(2.5, 4), 7)}  ${C.turquoise}memory: ${pad(memGiB, 5)}GiB(50.00%)  ${C.blue}tps: ${commas(tps)}${C.reset}`;
}

export interface MegatronIter {
  readonly iteration: number;
  readonly trainIters: number;
  /** The text of `{:.1f}` of the elapsed milliseconds, so hostile values can be written. */
  readonly ms: string;
  readonly skipped?: number;
  readonly nan?: number;
}

/**
 * Megatron-LM at d98e8a64d (2026-08-22), megatron/training/training.py `training_log`, with `--log-throughput`,
 * gbs 32 and sequence 4096: one `print_rank_last` line. `legacy` writes 076972e37's (2024-12) seconds-only stamp.
 */
export function megatronIter(i: MegatronIter, legacy = false): string {
  const stamp = legacy ? '2024-12-31 10:00:00' : '2026-08-22 10:00:00.123456';
  return ` [${stamp}]`
    + ` iteration ${pad(i.iteration, 8)}/${pad(i.trainIters, 8)} |`
    + ` consumed samples: ${pad(i.iteration * 32, 12)} |`
    + ` elapsed time per iteration (ms): ${i.ms} |`
    + ` throughput per GPU (TFLOP/s/GPU): ${fixed(400.1, 1)} |`
    + ` learning rate: ${sci(3e-4, 6)} |`
    + ` global batch size: ${pad(32, 5)} |`
    + ` lm loss: ${sci(7.123456, 6)} |`
    + ` loss scale: ${fixed(1, 1)} |`
    + ` grad norm: ${fixed(1.234, 3)} |`
    + ` number of skipped iterations: ${pad(i.skipped ?? 0, 3)} |`
    + ` number of nan iterations: ${pad(i.nan ?? 0, 3)} |`;
}

/**
 * Megatron-LM `report_memory` at d98e8a64d (megatron/training/utils/common_utils.py): `[Rank {}] {name} memory (MB) |
 * allocated: {:.2f} | max allocated: {:.2f} | reserved: {:.2f} | max reserved: {:.2f}`; the MB values are given as
 * text (at 076972e37 they were plain `{}` floats).
 */
export function megatronMemory(rank: number, iteration: number, alloc: string, maxAlloc: string, res: string, maxRes: string): string {
  return `[Rank ${rank}] (after ${iteration} iterations) memory (MB) | allocated: ${alloc} | max allocated: ${maxAlloc} | reserved: ${res} | max reserved: ${maxRes}`;
}

/** DeepSpeed's logger prefix (deepspeed/utils/logging.py at edaa72212): `[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s] `. */
const dsPrefix = (where: string) => `[2026-08-22 10:00:00,123] [INFO] [${where}] `;

/**
 * DeepSpeed `ThroughputTimer.stop` at edaa72212 (deepspeed/utils/timer.py): `epoch={}/micro_step={}/global_step={},
 * RunningAvgSamplesPerSec={}, CurrSamplesPerSec={}, MemAllocated={}GB, MaxMemAllocated={}GB` (Python `str` of floats).
 */
export function dsThroughput(step: number, curr: string, mem: string, maxMem: string): string {
  return `${dsPrefix('timer.py:264:stop')}epoch=0/micro_step=${step * 4}/global_step=${step}, RunningAvgSamplesPerSec=30.123456789, CurrSamplesPerSec=${curr}, MemAllocated=${mem}GB, MaxMemAllocated=${maxMem}GB`;
}

/**
 * DeepSpeed `see_memory_usage` at edaa72212 (deepspeed/runtime/utils.py): `print(f"MA {…} GB \` + newline + eight
 * spaces + `Max_MA {…} GB \` …: each backslash continuation keeps the next line's eight-space indent.
 */
export function dsSeeMemory(ma: string, maxMa: string, ca: string, maxCa: string): string {
  return `MA ${ma} GB         Max_MA ${maxMa} GB         CA ${ca} GB         Max_CA ${maxCa} GB `;
}

/** DeepSpeed `PipelineEngine.train_batch` at edaa72212 (deepspeed/runtime/pipe/engine.py): `steps: {} loss: {:0.4f} iter time (s): {:0.3f} samples/sec: {:0.3f}`. */
export function dsPipe(step: number, iterSeconds: string, samplesPerSec: number): string {
  return `steps: ${step} loss: ${fixed(2.3456, 4)} iter time (s): ${iterSeconds} samples/sec: ${fixed(samplesPerSec, 3)}`;
}

/**
 * The Hugging Face Trainer's `log_metrics("train", …)` (src/transformers/trainer_pt_utils.py at 010a915ce): a header
 * and `  {key: <{k_width}} = {value:>{v_width}}` for the sorted keys; values are given as their formatted text.
 */
export function hfBlock(values: Readonly<Record<string, string>>): string[] {
  const keys = Object.keys(values).sort();
  const kw = Math.max(...keys.map((k) => k.length));
  const vw = Math.max(...keys.map((k) => values[k].length));
  return ['***** train metrics *****', ...keys.map((k) => `  ${k.padEnd(kw)} = ${values[k].padStart(vw)}`)];
}
