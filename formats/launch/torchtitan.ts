/**
 * A launch script that runs torchtitan's trainer (`-m torchtitan.train`, or a `train.py` given `--job.config_file`):
 * the plan is torchtitan's (FSDP2 engine, its pipeline split and defaults: shared/plan/gather.ts reads the dialect),
 * its `--section.key value` options override the job TOML as torchtitan's CLI does (torchtitan/config/manager.py), and
 * a configuration chosen as a Python function (`--module M --config F`, torchtitan ≥ 2026-02, pytorch/torchtitan#2386)
 * is a reference to that function in M's file, read statically (formats/torchtitan/python.ts): ShardLens never runs a
 * repository's code.
 */
import { FactSink } from '../common/sink';
import type { FlagArg, Invocation } from '../common/shell/commandLine';
import { toNumber } from '../common/text';
import type { KEntry, KNode } from '../common/tree';
import { readTorchtitan } from '../torchtitan/reader';
import { torchtitanModulePath } from '../torchtitan/python';
import type { TextRange } from '../../shared/plan/types';
import type { ConfigFacts } from '../../shared/plan/facts';
import type { PlanPath } from '../../shared/plan/paths';
import { applyOffsetEdits, type OffsetEdit } from '../common/edit/shellFlags';
import { replaceFactValue } from '../common/edit/factEdit';
import type { LayoutTarget, Rewrite } from '../common/edit/types';

/** torchtitan's trainer as a module or as the repository's script. */
const TRAINER = /^torchtitan\.train$|(^|\/)torchtitan\/train\.py$/;

/** Whether a launch runs torchtitan's trainer. */
export function isTorchtitanLaunch(inv: Invocation, args: readonly FlagArg[]): boolean {
  return TRAINER.test(inv.program) || args.some((a) => a.flag === '--job.config_file');
}

/** A `--section.key` option of torchtitan's CLI (tyro), with its section and key. */
const DOTTED = /^--([a-z][a-z0-9_]*)\.([a-z][a-z0-9_.]*)$/;

const NONE: TextRange = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

/** An option's value as the TOML reader would see it: a number, a boolean, a comma list, or the string. */
function scalarOf(a: FlagArg): KNode {
  const range = a.valueRange ?? a.flagRange ?? NONE;
  if (a.value === undefined) return { kind: 'scalar', value: true, range };
  const v = a.value.replace(/^["']|["']$/g, '');
  if (/^(true|false)$/i.test(v)) return { kind: 'scalar', value: v.toLowerCase() === 'true', range };
  const n = toNumber(v);
  if (n !== undefined && v.trim() !== '') return { kind: 'scalar', value: n, range };
  if (v.includes(',')) return { kind: 'list', range, items: v.split(',').map((x) => ({ kind: 'scalar', value: x.trim(), range })) };
  return { kind: 'scalar', value: v, range };
}

/** The `--section.key value` options as the tree of the TOML they override (a later option wins). */
function overrideTree(args: readonly FlagArg[]): KNode | undefined {
  const sections = new Map<string, KEntry[]>();
  const ranges = new Map<string, TextRange>();
  for (const a of args) {
    const m = DOTTED.exec(a.flag);
    if (!m || m[1] === 'job' || a.unresolved) continue;
    const [, section, key] = m;
    const list = sections.get(section!) ?? [];
    list.push({ key: key!, keyRange: a.flagRange ?? NONE, value: scalarOf(a) });
    sections.set(section!, list);
    if (!ranges.has(section!)) ranges.set(section!, a.flagRange ?? NONE);
  }
  if (!sections.size) return undefined;
  const entries: KEntry[] = [...sections].map(([section, list]) => ({
    key: section, keyRange: ranges.get(section)!, value: { kind: 'map', range: ranges.get(section)!, entries: list },
  }));
  return { kind: 'map', range: NONE, entries };
}

/**
 * Reads a torchtitan launch into `s`: the dialect, the values its options state (only those: what they leave to the job
 * TOML or to torchtitan's defaults comes from there), and the Python configuration it cannot read.
 */
export function readTorchtitanLaunch(s: FactSink, inv: Invocation, args: readonly FlagArg[]): void {
  s.derived('launch.dialect', 'torchtitan', `arguments of ${inv.program} (torchtitan's trainer)`);
  const toml = args.some((a) => a.flag === '--job.config_file');
  const config = args.find((a) => a.flag === '--config');
  const module = args.find((a) => a.flag === '--module');
  // --module M --config F: the function F of module M, read statically (formats/torchtitan/python.ts) when the module's
  // file is in the workspace.
  const python = !toml && !!config?.value && !config.unresolved && !!module?.value && !module.unresolved;
  if (python) s.ref('config', torchtitanModulePath(module!.value!), module!.valueRange, inv.command.cwd, config!.value);
  const tree = overrideTree(args);
  // With a job TOML the options override what they state and the TOML gives the rest (its defaults and what it derives);
  // without one, torchtitan's defaults stand in for the configuration (as assumptions, the warning below says why).
  if (tree || !toml) {
    const read = new FactSink('torchtitan', s.uri);
    readTorchtitan(read, tree ?? { kind: 'map', range: NONE, entries: [] });
    // What the TOML or the Python configuration derives is theirs; torchtitan's defaults lose to any stated value.
    const own = toml || python;
    for (const [path, fact] of Object.entries(read.facts)) if (!own || fact.source.kind !== 'derived') s.facts[path] = fact;
    for (const d of read.diagnostics) s.diag(d.code, d.severity, d.message, d.range, d.paths);
  }
  if (python) {
    s.diag('torchtitan-python-config', 'info',
      `torchtitan's configuration "${module!.value}.${config!.value}" is a Python function: ShardLens reads it from ${torchtitanModulePath(module!.value!)} without running it (literal values, keyword calls, and the module's other configurations it derives from).`,
      config!.flagRange, []);
  } else if (config && !toml) {
    s.diag('torchtitan-python-config', 'warning',
      `torchtitan's configuration is chosen by values ShardLens cannot evaluate (--module ${module?.value ?? '?'} --config ${config.value ?? '?'}): the model, batch and layout come from this script's --section.key options, torchtitan's defaults and the assumptions below.`,
      config.flagRange, ['model']);
  }
}

/** The torchtitan options "Apply layout" writes for a layout's degrees (torchtitan/config/configs.py ParallelismConfig). */
const DEGREES: readonly [PlanPath, string, keyof LayoutTarget][] = [
  ['parallel.tp', '--parallelism.tensor_parallel_degree', 'tp'],
  ['parallel.pp', '--parallelism.pipeline_parallel_degree', 'pp'],
  ['parallel.cp', '--parallelism.context_parallel_degree', 'cp'],
  ['parallel.ep', '--parallelism.expert_parallel_degree', 'ep'],
];

/** Where torchtitan's trainer is named on a line: options go right after it (tyro reads them in any order, a later one wins). */
const PROGRAM = /(-m[ \t]+torchtitan\.train|\S*torchtitan\/train\.py|\S*train\.py(?=[^\n]*--job\.config_file))/g;

/**
 * "Apply layout" for a torchtitan launch script: each degree the script states is rewritten where it is written, the
 * others are added as `--parallelism.*` options right after the trainer (they override the job TOML, whatever it
 * says); the micro batch as `--training.local_batch_size` without a pipeline. What torchtitan keeps in its job TOML or
 * Python configuration (the pipeline micro-batches, the FSDP2 sharding) is said, not written.
 */
export function rewriteTorchtitanScript(text: string, t: LayoutTarget, facts: ConfigFacts): Rewrite {
  const notes: string[] = [];
  const unwritable: PlanPath[] = [];
  const edits: OffsetEdit[] = [];
  const add: string[] = [];
  const want: [PlanPath, string, number][] = DEGREES.map(([path, flag, k]) => [path, flag, Number(t[k] ?? 1)]);
  if (t.pp <= 1) want.push(['training.microBatch', '--training.local_batch_size', t.microBatch]);
  else {
    notes.push(`Micro batch ${t.microBatch} with PP ${t.pp}: set training.local_batch_size and the pipeline micro-batches in the job configuration.`);
    unwritable.push('training.microBatch');
  }
  for (const [path, flag, value] of want) {
    const e = replaceFactValue(text, facts, path, value);
    if (e === 'same') continue;
    if (e) { edits.push(e); continue; }
    if (facts.facts[path]?.source.kind === 'explicit') {
      notes.push(`${flag} ${value}: the value in this script is computed or set elsewhere; change it there.`);
      unwritable.push(path);
      continue;
    }
    // Expert parallelism 1 needs no option (torchtitan's default), unless the job configuration says otherwise.
    if (path === 'parallel.ep' && value <= 1) continue;
    add.push(`${flag} ${value}`);
  }
  if (t.zero !== 3) {
    notes.push(`ZeRO-${t.zero}: torchtitan shards with FSDP2 (data_parallel_shard_degree, fsdp_reshard_after_forward); set it in the job configuration.`);
    unwritable.push('parallel.sharding.stage');
  }
  if (add.length) {
    let found = false;
    for (const m of text.matchAll(PROGRAM)) {
      found = true;
      const at = (m.index ?? 0) + m[0].length;
      edits.push({ from: at, to: at, text: ` ${add.join(' ')}` });
    }
    if (!found) {
      notes.push(`Add ${add.join(' ')} to the torchtitan command.`);
      for (const [path, flag] of want) if (add.some((a) => a.startsWith(flag))) unwritable.push(path);
    }
  }
  return { text: applyOffsetEdits(text, edits), notes, unwritable };
}
