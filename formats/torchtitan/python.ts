/**
 * torchtitan's Python configurations (torchtitan ≥ 2026-02, pytorch/torchtitan#2386): a function returning
 * `Trainer.Config(...)` in a recipe module (`torchtitan_recipes/llama3.py`) or a model's `config_registry.py`, named by
 * a launch (`--module M --config F`). Read statically (formats/common/python/static.ts: nothing is run) into the tree
 * of the job TOML it replaces, so the TOML reader (./reader.ts) applies the same rules. Field names:
 * torchtitan/config/configs.py (TrainingConfig, ParallelismConfig, CompileConfig), torchtitan/trainer.py
 * (Trainer.Config: model_spec, training, parallelism, activation_checkpoint with SelectiveAC by default, compile,
 * optimizer), torchtitan/distributed/activation_checkpoint.py (FullAC, SelectiveAC, MemoryBudgetAC).
 */
import type { FactSink } from '../common/sink';
import type { LineIndex } from '../common/text';
import type { KEntry, KNode } from '../common/tree';
import { PyModule, type Field, type Span, type Value } from '../common/python/static';
import type { TextRange } from '../../shared/plan/types';
import { readTorchtitan } from './reader';

/** The Python module a launch's `--module` names, as a path: dotted names are files, a bare model name its registry. */
export function torchtitanModulePath(module: string): string {
  return module.includes('.') ? `${module.replace(/\./g, '/')}.py` : `torchtitan/models/${module}/config_registry.py`;
}

/** At most this many configuration functions of one module are listed (and estimated when the module is opened). */
export const MAX_CONFIG_FUNCTIONS = 24;

/** Fields only a Trainer.Config has (torchtitan/trainer.py). */
const TRAINER_FIELDS = ['model_spec', 'training', 'parallelism', 'activation_checkpoint'];

/** A function of a module that returns a trainer configuration: its name and where the name is written. */
export interface ConfigFunction { readonly name: string; readonly at: Span }

/**
 * The functions of a module that return a `Trainer.Config(...)` (or a trainer subclass's `Config`), directly or through
 * another of its configurations, in file order: what a launch's `--config` can name. Read statically; a module without
 * the text `Trainer.Config` or `model_spec=` is not read at all (most Python files are not configurations).
 */
export function torchtitanConfigFunctions(text: string): readonly ConfigFunction[] {
  // Detection, the module's lenses and every function's reading ask on each edit: listed once per text.
  if (listed?.text === text) return listed.functions;
  const functions = configFunctionsOf(text);
  listed = { text, functions };
  return functions;
}

/** The last text listed and its configuration functions (read-only). */
let listed: { readonly text: string; readonly functions: readonly ConfigFunction[] } | undefined;

const CONFIG_CLASS = /(^|\.)Config$/;
const TRAINER_CLASS = /Trainer\.Config$/;

/**
 * Whether a call's class is named `kind` (CONFIG_CLASS: `Trainer.Config`, `TrainingConfig`…; TRAINER_CLASS), or is a
 * class of this module derived from one (`class _KimiTrainerConfig(Trainer.Config)`, torchtitan's kimi_k2_7 registry).
 */
function isClass(m: PyModule, callee: string, kind: RegExp): boolean {
  return kind.test(callee) || (m.classes.get(callee) ?? []).some((b) => kind.test(b));
}

function configFunctionsOf(text: string): ConfigFunction[] {
  if (!/\bTrainer\.Config\b|\bmodel_spec\s*=/.test(text)) return [];
  const m = new PyModule(text);
  const out: ConfigFunction[] = [];
  for (const fn of m.functions.values()) {
    const v = m.returnOf(fn.name);
    // The reader's own test (readTorchtitanPython; ParallelismConfig(...) and the like are parts), and a trainer's:
    // named so, or holding one of Trainer.Config's own fields (a converter's or a model's Config holds none of them).
    if (v?.t === 'call' && isClass(m, v.callee, CONFIG_CLASS) && (isClass(m, v.callee, TRAINER_CLASS) || TRAINER_FIELDS.some((k) => v.fields.has(k)))) {
      out.push({ name: fn.name, at: fn.at });
      if (out.length >= MAX_CONFIG_FUNCTIONS) break;
    }
  }
  return out.sort((a, b) => a.at.start - b.at.start);
}

/** The ParallelismConfig fields the TOML's [parallelism] holds under the same names. */
const PARALLELISM = [
  'data_parallel_replicate_degree', 'data_parallel_shard_degree', 'fsdp_reshard_after_forward', 'tensor_parallel_degree',
  'pipeline_parallel_degree', 'pipeline_parallel_schedule', 'pipeline_parallel_layers_per_stage',
  'pipeline_parallel_first_stage_less_layers', 'pipeline_parallel_last_stage_less_layers', 'context_parallel_degree',
  'expert_parallel_degree', 'expert_tensor_parallel_degree',
];
const TRAINING = ['mixed_precision_param', 'mixed_precision_reduce', 'steps', 'enable_cpu_offload'];

/**
 * Reads function `fn` of a configuration module into `s` (facts located in that module). `family` is the model family
 * when the module's path says it (torchtitan/models/<family>/config_registry.py).
 */
export function readTorchtitanPython(s: FactSink, text: string, li: LineIndex, fn: string, family?: string): void {
  const mod = new PyModule(text);
  const range = (a: Span): TextRange => ({ start: li.position(a.start), end: li.position(a.end) });
  const top: TextRange = { start: li.position(0), end: li.position(0) };
  const v = mod.returnOf(fn);
  if (!v) {
    const names = [...mod.functions.keys()].slice(0, 8).join(', ');
    s.diag('torchtitan-python-config', 'warning', `No function "${fn}" in this module${names ? ` (it has ${names})` : ''}: nothing was read from it.`, top, ['model']);
    return;
  }
  // A Trainer.Config (or a trainer subclass's Config) built here or in a configuration it derives from.
  if (v.t !== 'call' || !isClass(mod, v.callee, CONFIG_CLASS)) {
    const what = v.t === 'call' ? `${v.callee}(…)` : v.t === 'unknown' ? v.why : 'a value';
    s.diag('torchtitan-python-config', 'warning', `${fn} returns ${what}, which ShardLens cannot follow without running it: nothing was read from it.`, range(v.at), ['model']);
    return;
  }
  const unread: string[] = [];
  const scalar = (x: Value): KNode | undefined => {
    if (x.t === 'num' || x.t === 'str' || x.t === 'bool') return { kind: 'scalar', value: x.v, range: range(x.at) };
    if (x.t === 'list') {
      const items = x.items.map(scalar).filter((n): n is KNode => !!n);
      return items.length === x.items.length ? { kind: 'list', range: range(x.at), items } : undefined;
    }
    return undefined;
  };
  const entry = (key: string, f: Field, name = key): KEntry | undefined => {
    const node = scalar(f.value);
    if (!node) { unread.push(`${name} (${f.value.t === 'unknown' ? f.value.why : 'a call'})`); return undefined; }
    return { key, keyRange: range(f.key), value: node };
  };
  const num = (key: string, n: number, f: Field): KEntry => ({ key, keyRange: range(f.key), value: { kind: 'scalar', value: n, range: range(f.at) } });
  const section = (key: string, entries: (KEntry | undefined)[], at: Span): KEntry | undefined => {
    const list = entries.filter((e): e is KEntry => !!e);
    return list.length ? { key, keyRange: range(at), value: { kind: 'map', range: range(at), entries: list } } : undefined;
  };
  const fields = v.fields;
  const call = (k: string) => { const f = fields.get(k); return f?.value.t === 'call' ? f : undefined; };
  const sections: (KEntry | undefined)[] = [];

  // model_spec = model_registry("8B", converters=[Float8LinearConverter.Config(...)]): the family and flavour.
  const spec = fields.get('model_spec');
  if (spec?.value.t === 'call' && /(^|\.)model_registry$|registry/.test(spec.value.callee)) {
    const fam = family ?? familyOf(mod.imports.get(spec.value.callee.split('.')[0]!), spec.value.callee);
    const flavor = spec.value.args[0];
    const model: (KEntry | undefined)[] = [];
    if (fam) model.push({ key: 'name', keyRange: range(spec.key), value: { kind: 'scalar', value: fam, range: range(spec.value.at) } });
    if (flavor?.t === 'str') model.push({ key: 'flavor', keyRange: range(spec.key), value: { kind: 'scalar', value: flavor.v, range: range(flavor.at) } });
    // Trainer.Config.hf_assets_path: the Hugging Face folder with the model's config.json (the TOML's model.hf_assets_path).
    const hf = fields.get('hf_assets_path');
    if (hf?.value.t === 'str') model.push({ key: 'hf_assets_path', keyRange: range(hf.key), value: { kind: 'scalar', value: hf.value.v, range: range(hf.at) } });
    const conv = spec.value.fields.get('converters');
    if (conv?.value.t === 'list') {
      const names = conv.value.items.map((c) => (c.t === 'call' ? converterOf(c.callee) : undefined));
      if (names.some((n) => n === 'nvfp4')) s.diag('torchtitan-fp4-timing', 'warning', 'NVFP4 linears are not modelled: timed at 16-bit rates, so the step time is likely too long.', range(conv.at), ['training.precision']);
      const known = names.filter((n): n is string => !!n && n !== 'nvfp4');
      if (known.length) model.push({ key: 'converters', keyRange: range(conv.key), value: { kind: 'list', range: range(conv.at), items: known.map((n) => ({ kind: 'scalar', value: n, range: range(conv.at) })) } });
    }
    sections.push(section('model', model, spec.key));
  } else if (spec) unread.push(`model_spec (${spec.value.t === 'unknown' ? spec.value.why : 'not a model_registry call'})`);

  // TrainingConfig: tokens per micro-batch per DP rank over the context length is the micro-batch in sequences.
  const tr = call('training');
  const par = call('parallelism');
  const pp = par?.value.t === 'call' && par.value.fields.get('pipeline_parallel_degree')?.value;
  const ppN = pp && pp.t === 'num' ? pp.v : 1;
  const training: (KEntry | undefined)[] = [];
  const parallelism: (KEntry | undefined)[] = [];
  if (tr?.value.t === 'call') {
    const tf = tr.value.fields;
    const ctx = tf.get('max_context_length');
    // TrainingConfig's max_context_length defaults to 2048; one ShardLens cannot read leaves the micro batch unread too.
    const seq = !ctx ? 2048 : ctx.value.t === 'num' ? ctx.value.v : undefined;
    if (ctx) training.push(entry('seq_len', ctx, 'training.max_context_length'));
    const tok = tf.get('num_tokens_per_microbatch_per_dp_rank');
    if (tok?.value.t === 'num' && seq === undefined) unread.push('training.num_tokens_per_microbatch_per_dp_rank (in sequences of a context length not read)');
    else if (tok?.value.t === 'num' && seq !== undefined) {
      const mb = tok.value.v / seq;
      if (Number.isInteger(mb) && mb >= 1) {
        const pm = par?.value.t === 'call' ? par.value.fields.get('num_pp_microbatches') : undefined;
        if (ppN > 1) {
          const m = pm?.value.t === 'num' ? pm.value.v : 1;
          parallelism.push(num('pipeline_parallel_microbatch_size', mb, tok));
          training.push(num('local_batch_size', mb * m, pm ?? tok));
        } else training.push(num('local_batch_size', mb, tok));
      } else s.diag('invalid-value', 'warning', `num_tokens_per_microbatch_per_dp_rank ${tok.value.v} is not a whole number of ${seq}-token sequences: the micro batch is not read.`, range(tok.at), ['training.microBatch']);
    } else if (tok) unread.push(`training.num_tokens_per_microbatch_per_dp_rank (${tok.value.t === 'unknown' ? tok.value.why : tok.value.t})`);
    const step = tf.get('num_tokens_per_train_step');
    if (step?.value.t === 'num' && step.value.v > 0 && seq !== undefined) {
      const g = step.value.v / seq;
      if (Number.isInteger(g)) training.push(num('global_batch_size', g, step));
    }
    for (const k of TRAINING) { const f = tf.get(k); if (f) training.push(entry(k, f, `training.${k}`)); }
  }
  if (par?.value.t === 'call') for (const k of PARALLELISM) { const f = par.value.fields.get(k); if (f) parallelism.push(entry(k, f, `parallelism.${k}`)); }

  // activation_checkpoint: FullAC, SelectiveAC (Trainer.Config's default), MemoryBudgetAC(memory_budget=…) or None.
  const ac = fields.get('activation_checkpoint');
  const acMode = !ac ? undefined : ac.value.t === 'none' ? 'none' : ac.value.t === 'call'
    ? (/FullAC/.test(ac.value.callee) ? 'full' : /SelectiveAC/.test(ac.value.callee) ? 'selective' : /MemoryBudgetAC/.test(ac.value.callee) ? 'memory_budget' : undefined) : undefined;
  if (ac && acMode) {
    const budget = acMode === 'memory_budget' && ac.value.t === 'call' ? ac.value.fields.get('memory_budget') : undefined;
    sections.push(section('activation_checkpoint', [
      { key: 'mode', keyRange: range(ac.key), value: { kind: 'scalar', value: acMode, range: range(ac.at) } },
      budget && entry('memory_budget', budget, 'activation_checkpoint.memory_budget'),
    ], ac.key));
  } else if (ac) unread.push(`activation_checkpoint (${ac.value.t === 'call' ? ac.value.callee : ac.value.t === 'unknown' ? ac.value.why : ac.value.t})`);

  // compile = CompileConfig(enable=…, components=[…], enable_async_tensor_parallel=…).
  const comp = call('compile');
  if (comp?.value.t === 'call') {
    const cf = comp.value.fields;
    const en = cf.get('enable'), cs = cf.get('components'), atp = cf.get('enable_async_tensor_parallel');
    sections.push(section('compile', [en && entry('enable', en, 'compile.enable'), cs && entry('components', cs, 'compile.components')], comp.key));
    if (atp) parallelism.push(entry('enable_async_tensor_parallel', atp, 'compile.enable_async_tensor_parallel'));
  }
  const opt = fields.get('optimizer');
  if (opt?.value.t === 'call' && /adamw/i.test(opt.value.callee)) sections.push(section('optimizer', [{ key: 'name', keyRange: range(opt.key), value: { kind: 'scalar', value: 'AdamW', range: range(opt.at) } }], opt.key));
  sections.push(section('training', training, tr?.key ?? v.at), section('parallelism', parallelism, par?.key ?? v.at));

  const entries = sections.filter((e): e is KEntry => !!e);
  readTorchtitan(s, { kind: 'map', range: range(v.at), entries });
  for (const sk of mod.skipped.get(fn) ?? []) s.diag('torchtitan-python-branch', 'info', 'Statements inside a branch or loop are not read (the configuration is read without running it).', range(sk), []);
  if (unread.length) s.diag('torchtitan-python-unread', 'info', `${fn}: not read statically: ${unread.slice(0, 6).join('; ')}${unread.length > 6 ? ' …' : ''}. The estimate uses torchtitan's defaults or the assumptions listed for them.`, range(v.at), []);
}

/** The model family of a `model_registry` import: torchtitan.models.<family>. */
function familyOf(module: string | undefined, callee: string): string | undefined {
  const m = /torchtitan\.models\.(\w+)/.exec(module ?? '') ?? /^(\w+)\.model_registry$/.exec(callee);
  return m?.[1];
}

/** A converter class → the TOML's converter name (torchtitan/components/quantization). */
function converterOf(callee: string): string | undefined {
  if (/Float8/.test(callee)) return 'float8';
  if (/MXFP8|MX/.test(callee)) return 'mx';
  if (/NVFP4/.test(callee)) return 'nvfp4';
  return undefined;
}
