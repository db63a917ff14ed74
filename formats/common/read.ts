/** Typed reads of tree entries into facts, with a diagnostic when a value has the wrong type. */
import type { FactValue } from '../../shared/plan/facts';
import type { FactSink, Loc } from './sink';
import { shown, toBool, toNumber } from './text';
import { at, type KEntry, type KNode } from './tree';
import { optimizerOf } from './maps';
import type { PlanPath } from '../../shared/plan/paths';
import type { TextRange } from '../../shared/plan/types';

export function locOf(e: KEntry, key: string): Loc {
  return { key, keyRange: e.keyRange, valueRange: e.value.range, uri: e.value.uri };
}

/** True when an entry is absent or holds null / an empty value. */
export function isEmpty(e: KEntry | undefined): boolean {
  return !e || (e.value.kind === 'scalar' && (e.value.value === null || e.value.value === undefined || e.value.value === ''));
}

export function isAuto(e: KEntry | undefined): boolean {
  return !!e && e.value.kind === 'scalar' && typeof e.value.value === 'string' && e.value.value.trim().toLowerCase() === 'auto';
}

/** True when a scalar is an unresolved OmegaConf/Hydra value (`${…}` interpolation, `???` mandatory): not a wrong type. */
export function isUnresolved(v: unknown): boolean {
  return typeof v === 'string' && /\$\{|\?\?\?/.test(v);
}

/**
 * Whether the value at `path` is one only the run gives (`${oc.env:SEQ}`, `???`); if so, says so at it, naming the
 * setting, so the estimate can state what it assumes for the plan `paths` instead.
 */
function setAtRunTime(s: FactSink, e: KEntry, path: string, paths: readonly PlanPath[]): boolean {
  if (e.value.kind !== 'scalar' || !isUnresolved(e.value.value)) return false;
  s.unresolved('value-unresolved', path, `${path} uses a variable or placeholder ShardLens could not evaluate.`, e.value.range, paths);
  return true;
}

export interface NumOpts {
  readonly auto?: boolean; readonly int?: boolean; readonly min?: number; readonly max?: number; readonly map?: (n: number) => FactValue;
  /** The setting as messages name it, when `path` is relative to a section (default: `path`). */
  readonly label?: string;
}

/**
 * Reads a number at `path` (dotted, within `root`) into `factPath`; returns the number read. A value only the run gives
 * (`${oc.env:SEQ}`, `???`) is an information naming the setting, which the estimate turns into a stated assumption;
 * any other non-number is an error at the value.
 */
export function readNum(s: FactSink, root: KNode | undefined, path: string, factPath: PlanPath, o: NumOpts = {}): number | undefined {
  const e = at(root, path);
  const name = o.label ?? path;
  if (isEmpty(e) || !e) return undefined;
  if (o.auto && isAuto(e)) { s.explicit(factPath, 'auto', locOf(e, path)); return undefined; }
  if (setAtRunTime(s, e, name, [factPath])) return undefined;
  const n = e.value.kind === 'scalar' ? toNumber(e.value.value) : undefined;
  if (n === undefined) {
    // The estimate needs this number: reading past it would give a verdict from a default, so it is an error.
    s.diag('invalid-value', 'error', `${name} should be a number${o.auto ? ' or "auto"' : ''}.`, e.value.range, [factPath]);
    return undefined;
  }
  if (o.int && !Number.isInteger(n)) {
    s.diag('invalid-value', 'error', `${name} must be a whole number (got ${shown(n)}).`, e.value.range, [factPath]);
    return undefined;
  }
  if (o.min !== undefined && n < o.min) {
    s.diag('invalid-value', 'error', `${name} must be at least ${o.min} (got ${shown(n)}).`, e.value.range, [factPath]);
    return undefined;
  }
  if (o.max !== undefined && n > o.max) {
    s.diag('invalid-value', 'error', `${name} must be at most ${o.max} (got ${shown(n)}).`, e.value.range, [factPath]);
    return undefined;
  }
  s.explicit(factPath, o.map ? o.map(n) : n, locOf(e, path));
  return n;
}

/**
 * Reads a run's planned optimizer steps at `path` ("training.steps") when it is a positive whole number; HF's −1 ("train
 * for num_train_epochs") and 0 state none. Anything else is a warning at the value, never an error: no estimate needs
 * the step count (it only turns the step time into the run's wall-clock and GPU-hours).
 */
export function readSteps(s: FactSink, root: KNode | undefined, path: string): number | undefined {
  const e = at(root, path);
  if (isEmpty(e) || !e || e.value.kind !== 'scalar') return undefined;
  const raw = e.value.value;
  if (isUnresolved(raw)) return undefined;
  const n = toNumber(raw);
  if (n === undefined || !Number.isInteger(n)) {
    s.diag('invalid-value', 'warning', `${path} should be a whole number of steps (got ${n === undefined ? JSON.stringify(String(raw).slice(0, 40)) : shown(n)}); the run length is not shown.`, e.value.range, ['training.steps']);
    return undefined;
  }
  if (n < 1) return undefined;
  s.explicit('training.steps', n, locOf(e, path));
  return n;
}

/**
 * The boolean at `path`, or undefined when it is absent, empty, "auto" or unresolved (an information at it, so the
 * estimate can say the run sets it); any other value is a warning at it ("should be true or false") naming `about`,
 * the plan paths it would have set.
 */
export function boolAt(s: FactSink, root: KNode | undefined, path: string, about: readonly PlanPath[]): boolean | undefined {
  const e = at(root, path);
  if (isEmpty(e) || !e || setAtRunTime(s, e, path, about)) return undefined;
  const b = e.value.kind === 'scalar' ? toBool(e.value.value) : undefined;
  if (b === undefined && !isAuto(e)) s.diag('invalid-value', 'warning', `${path} should be true or false.`, e.value.range, about);
  return b;
}

/** Reads a boolean at `path` into `factPath` (through `map`); returns it. */
export function readBool(s: FactSink, root: KNode | undefined, path: string, factPath?: PlanPath, map?: (b: boolean) => FactValue): boolean | undefined {
  const b = boolAt(s, root, path, factPath ? [factPath] : []);
  const e = at(root, path);
  if (b !== undefined && factPath && e) s.explicit(factPath, map ? map(b) : b, locOf(e, path));
  return b;
}

/**
 * A packing switch whose samples attend only within themselves (axolotl `sample_packing`, LLaMA-Factory
 * `neat_packing`, torchtune `dataset.packed`, NeMo `packed_sequence`): true is `training.packing` varlen, false says
 * nothing (one sample per sequence); anything else is a warning at the value.
 */
export function readPacking(s: FactSink, root: KNode | undefined, path: string): void {
  const e = at(root, path);
  if (readBool(s, root, path) === true && e) s.explicit('training.packing', 'varlen', locOf(e, path));
}

/** Reads a scalar as a string (numbers stringified); returns it. */
export function readStr(root: KNode | undefined, path: string): string | undefined {
  const e = at(root, path);
  if (isEmpty(e) || !e || e.value.kind !== 'scalar') return undefined;
  return String(e.value.value);
}

/**
 * The optimizer a file names at `e` (or `name`, a class path read there): the plan's kind when ShardLens models it;
 * otherwise a warning at the value (`optimizer: lomo`), so the framework's default the estimate uses instead is never
 * taken silently for what the file says. Returns the kind read.
 */
export function readOptimizer(s: FactSink, e: KEntry | undefined, key: string, name?: string): string | undefined {
  const text = name ?? (e && typeof e.value.value === 'string' ? e.value.value : undefined);
  if (!e || !text || !text.trim()) return undefined;
  const kind = optimizerOf(text);
  if (kind) {
    s.explicit('training.optimizer', kind, locOf(e, key));
    readPagedOptimizer(s, text, locOf(e, key));
    readHfAdamImpl(s, text, locOf(e, key));
    return kind;
  }
  unmodelledOptimizer(s, key, text, e.value.uri ? undefined : e.value.range);
  return undefined;
}

/**
 * bitsandbytes' paged optimizers (PagedAdamW8bit, `optim: paged_adamw_8bit`) keep their states in CUDA unified memory,
 * which the driver pages out to CPU memory when the GPU runs short (bitsandbytes docs, "Paged optimizers"; Dettmers
 * et al. 2023, QLoRA §2): the states cannot cause an out-of-memory error, and PyTorch's allocator does not count them.
 * The plan says so (`training.pagedOptimizer`): the states are counted with the host's memory, not the GPU's peak.
 */
export function readPagedOptimizer(s: FactSink, name: string, loc: Loc): void {
  if (/paged/i.test(name)) s.explicit('training.pagedOptimizer', true, loc);
}

/** torch.optim's Adam and AdamW as a file names them: the class, bare (LitGPT) or with its module (torchtune, Lightning). */
export const TORCH_ADAM = /^(torch\.optim\.)?Adam(W)?$/;

/**
 * torch.optim's Adam and AdamW step with the fused kernel only when `fused=True` is passed; otherwise, every parameter
 * on CUDA, with foreach (torch/optim/adam.py: neither flag given, `_default_to_fused_or_foreach(..., use_fused=False)`
 * turns foreach on), which makes one state-sized list at the step (docs/engine-memory.md#moments). `fusedPath` is the
 * key that passes `fused` (torchtune `optimizer.fused`, Lightning `optimizer.init_args.fused`); `fused: false` is the
 * foreach default too.
 */
export function readTorchAdamImpl(s: FactSink, root: KNode | undefined, name: string | undefined, e: KEntry | undefined, key: string, fusedPath: string): void {
  if (name && !TORCH_ADAM.test(name.trim())) return;
  const fused = readBool(s, root, fusedPath, 'training.optimizerImpl', (b) => (b ? 'fused' : 'foreach'));
  if (fused === undefined && name && e) {
    s.derived('training.optimizerImpl', 'foreach', `${name.trim()} without fused=True steps with foreach on CUDA (torch/optim/adam.py: foreach is the default when neither flag is given)`, locOf(e, key));
  }
}

/**
 * Hugging Face optimizer names that say torch's implementation (transformers TrainingArguments `optim`): adamw_torch
 * is torch.optim.AdamW as constructed (foreach on CUDA, readTorchAdamImpl), adamw_torch_fused passes fused=True.
 */
function readHfAdamImpl(s: FactSink, name: string, loc: Loc): void {
  const n = name.trim().toLowerCase();
  if (n === 'adamw_torch_fused') s.explicit('training.optimizerImpl', 'fused', loc);
  else if (n === 'adamw_torch') s.derived('training.optimizerImpl', 'foreach', `${name.trim()}: torch.optim.AdamW without fused=True steps with foreach on CUDA (torch/optim/adam.py)`, loc);
}

/**
 * The Hugging Face Trainer's accumulation: every micro-batch but the last runs under `accelerator.no_sync`
 * (transformers trainer.py, the inner training loop; DeepSpeed excepted), as Accelerate's `accumulate()` does; for
 * FSDP2 that is `set_requires_gradient_sync(False)`, which keeps each gradient unsharded until the last micro-batch.
 */
export function hfTrainerAccumulation(s: FactSink, who = 'HF Trainer', root?: KNode, flag?: { value?: string; loc: Loc }): void {
  // TrainingArguments.accelerator_config.gradient_accumulation_kwargs.sync_each_batch: the Trainer then syncs in
  // every micro-batch (transformers trainer.py: "sync_each_batch set to True"; Accelerate GradientAccumulationPlugin).
  // As a YAML map, as JSON text in YAML, or as the flag's JSON text.
  const nested = 'accelerator_config.gradient_accumulation_kwargs.sync_each_batch';
  const e = root && readBool(s, root, nested, 'training.syncEveryMicroBatch') === undefined ? at(root, 'accelerator_config') : undefined;
  const json = e?.value.kind === 'scalar' && typeof e.value.value === 'string' ? { value: e.value.value, loc: locOf(e, 'accelerator_config') } : flag;
  const sync = json?.value !== undefined ? syncEachBatchOf(json.value) : undefined;
  if (json && sync !== undefined) s.explicit('training.syncEveryMicroBatch', sync, json.loc);
  s.default('training.syncEveryMicroBatch', false, `${who}: every micro-batch but the step's last runs under accelerator.no_sync (transformers trainer.py; Accelerate accumulate)`);
}

/** `sync_each_batch` of an accelerator_config given as JSON text (a flag's value, a string in YAML); undefined if absent. */
function syncEachBatchOf(json: string): boolean | undefined {
  if (json.length > 10_000) return undefined;
  try {
    const v = (JSON.parse(json) as { gradient_accumulation_kwargs?: { sync_each_batch?: unknown } } | null)?.gradient_accumulation_kwargs?.sync_each_batch;
    return typeof v === 'boolean' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The warning at an optimizer name ShardLens does not model: the framework's default is used instead, and said. */
export function unmodelledOptimizer(s: FactSink, key: string, name: string, range: TextRange | undefined): void {
  s.diag('unmodelled-value', 'warning', `${key}: "${name}" is an optimizer ShardLens does not model; the estimate uses the framework's default optimizer instead.`, range, ['training.optimizer']);
}
