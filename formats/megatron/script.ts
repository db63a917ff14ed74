/**
 * Megatron-LM / Megatron-DeepSpeed launch scripts: finds the launcher line (torchrun, python -m
 * torch.distributed.run/launch, deepspeed, python pretrain_*.py), expands its arguments, reads the flags,
 * the world size (nproc_per_node × nnodes) and a DeepSpeed JSON written by a heredoc.
 */
import type { FactSink } from '../common/sink';
import { LineIndex, toNumber } from '../common/text';
import { jsonTree } from '../common/jsonTree';
import { readDeepSpeed } from '../deepspeed/reader';
import { ShellEnv, type EvalCommand } from '../common/shell/evaluate';
import { applyHfTrainerArgs, hasHfTrainerArgs } from '../hf-trainer/args';
import { applyMegatronArgs, type FlagArg, MEGATRON_FLAGS } from './args';
import { span, splitWords, unresolved, type SV } from '../common/shell/sval';
import { statements } from '../common/shell/statementCache';
import { lastChange, parseCached } from '../common/shell/treeCache';
import { shellParser } from '../common/shell/treeSitter';

const LAUNCHERS = new Set(['torchrun', 'deepspeed', 'python', 'python3', 'srun', 'bash', 'sh', 'mpirun', 'accelerate']);
const ARGVAR = /--(num-layers|tensor-model-parallel-size|hidden-size|micro-batch-size|per_device_train_batch_size|deepspeed)\b/;

function base(w: string): string {
  return w.slice(w.lastIndexOf('/') + 1);
}

/** Flattens wrappers: `bash -c "…"` and `srun … bash -c "…"` are split into words. */
function flatten(words: SV[]): SV[] {
  const out: SV[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w.t === '-c' && i > 0 && ['bash', 'sh'].includes(base(words[i - 1]!.t)) && words[i + 1]) {
      out.push(...splitWords(words[i + 1]!, true));
      i++;
    } else out.push(w);
  }
  return out;
}

/** Index of the training script word, or -1. */
function scriptIndex(words: SV[]): number {
  return words.findIndex((w, i) => i > 0 && /\.py$/.test(w.t) && !w.t.startsWith('-'));
}

function toArgs(words: SV[], li: LineIndex): FlagArg[] {
  const args: FlagArg[] = [];
  const range = (w: SV) => { const sp = span(w); return sp ? li.range(sp[0], sp[1]) : undefined; };
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (!w.t.startsWith('--')) continue;
    const eq = w.t.indexOf('=');
    if (eq > 0) {
      const f = { ...w, t: w.t.slice(0, eq) };
      const v: SV = { t: w.t.slice(eq + 1), o: w.o.slice(eq + 1), e: w.e.slice(eq + 1), s: w.s.slice(eq + 1), u: w.u.slice(eq + 1) };
      args.push({ flag: f.t, value: v.t, flagRange: range({ ...f, o: w.o.slice(0, eq), e: w.e.slice(0, eq), s: [], u: [] }), valueRange: range(v), unresolved: unresolved(v) });
      continue;
    }
    const spec = MEGATRON_FLAGS[w.t.replace(/_/g, '-')] ?? MEGATRON_FLAGS[w.t];
    const next = words[i + 1];
    const takesValue = spec?.type !== 'flag' || (w.t === '--deepspeed' && !!next && /\.json$/.test(next.t)) || (!!next && /^(true|false)$/i.test(next.t));
    if (takesValue && next && (!next.t.startsWith('--') || /^--?\d/.test(next.t))) {
      args.push({ flag: w.t, value: next.t, flagRange: range(w), valueRange: range(next), unresolved: unresolved(next) });
      i++;
    } else args.push({ flag: w.t, flagRange: range(w) });
  }
  return args;
}

/** torchrun / deepspeed launcher options → cluster facts. */
function readLauncher(s: FactSink, words: SV[], li: LineIndex): void {
  const args = toArgs(words, li);
  const get = (...names: string[]) => args.find((a) => names.includes('--' + a.flag.slice(2).replace(/-/g, '_')));
  for (const [names, path] of [[['--nproc_per_node', '--num_gpus'], 'cluster.gpusPerNode'], [['--nnodes', '--num_nodes'], 'cluster.nodes']] as const) {
    const a = get(...names);
    if (!a?.value) continue;
    if (a.unresolved) { s.diag('launcher-unresolved', 'info', `${a.flag} uses a variable ShardLens could not evaluate.`, a.valueRange, [path]); continue; }
    const n = toNumber(a.value.includes(':') ? a.value.split(':').pop() : a.value);
    if (n !== undefined && Number.isInteger(n) && n > 0) s.explicit(path, n, { key: a.flag, keyRange: a.flagRange, valueRange: a.valueRange });
  }
}

/** Picks the command that runs training: a launcher or python with a *.py script, preferring pretrain_*.py. */
function trainingCommand(cmds: EvalCommand[]): { cmd: EvalCommand; words: SV[]; script: number } | undefined {
  let best: { cmd: EvalCommand; words: SV[]; script: number; score: number } | undefined;
  for (const cmd of cmds) {
    const words = flatten(cmd.words);
    if (!words[0] || !LAUNCHERS.has(base(words[0].t)) && !words.some((w) => /\.py$/.test(w.t))) continue;
    const script = scriptIndex(words);
    if (script < 0) continue;
    const rest = words.slice(script + 1);
    const score = (/pretrain|train/.test(words[script]!.t) ? 2 : 0) + (rest.some((w) => ARGVAR.test(w.t)) ? 4 : 0);
    if (!best || score >= best.score) best = { cmd, words, script, score };
  }
  return best;
}

/** Reads the DeepSpeed JSON a heredoc writes (Megatron-DeepSpeed), with ranges mapped back into the script. */
function readHeredocJson(s: FactSink, cmds: EvalCommand[], li: LineIndex): void {
  for (const c of cmds) {
    const body = c.heredoc?.body;
    if (!body || !/^\s*\{/.test(body.t) || !/zero_optimization|train_micro_batch_size_per_gpu|train_batch_size/.test(body.t)) continue;
    const mapper = { range: (a: number, b: number) => li.range(body.o[Math.min(a, body.o.length - 1)] ?? 0, body.e[Math.max(0, Math.min(b, body.e.length) - 1)] ?? 0) };
    const tree = jsonTree(body.t, mapper as unknown as LineIndex);
    const before = new Set(Object.keys(s.facts).filter((k) => s.facts[k]!.source.kind === 'explicit'));
    const saved = { ...s.facts };
    readDeepSpeed(s, tree.root);
    for (const [k, f] of Object.entries(saved)) if (before.has(k) && !k.startsWith('parallel.sharding.')) s.facts[k] = f;
    return;
  }
}

/** Reads a Megatron launch script into facts. Requires `initShellParser()` to have completed. */
export function readMegatronScript(s: FactSink, text: string, li: LineIndex): void {
  const parser = shellParser();
  if (!parser) { s.diag('shell-parser-not-ready', 'info', 'The shell parser is still loading; open the file again in a moment.', undefined); return; }
  const tree = parseCached(parser, s.uri, text);
  if (!tree) { s.diag('shell-parse-timeout', 'info', 'The script is too complex to read in time.', undefined); return; }
  const env = new ShellEnv(text);
  env.runAll(statements(s.uri, tree, text, lastChange(s.uri, text)));
  const found = trainingCommand(env.commands);
  let args: FlagArg[] = [];
  if (found) {
    readLauncher(s, found.words.slice(0, found.script), li);
    args = toArgs(found.words.slice(found.script + 1), li);
  } else {
    for (const [, v] of env.varEntries()) if (ARGVAR.test(v.t)) args.push(...toArgs(splitWords(v, true), li));
    for (const [, arr] of env.arrays) if (arr.some((w) => ARGVAR.test(w.t))) args.push(...toArgs(arr.flatMap((w) => splitWords(w, true)), li));
  }
  if (hasHfTrainerArgs(args) && !args.some((a) => a.flag === '--num-layers')) applyHfTrainerArgs(s, args);
  else applyMegatronArgs(s, args);
  readHeredocJson(s, env.commands, li);
  if (!s.has('cluster.gpusPerNode')) readWorldVars(s, env, li);
  const g = s.num('cluster.gpusPerNode');
  const nodesUnknown = s.diagnostics.some((d) => d.code === 'launcher-unresolved' && d.paths.includes('cluster.nodes'));
  const n = s.num('cluster.nodes') ?? (g && !nodesUnknown ? 1 : undefined);
  if (g && n) s.derived('cluster.worldSize', g * n, 'launcher: nproc_per_node × nnodes');
}

/** GPUS_PER_NODE / NNODES / WORLD_SIZE variables when the launcher line did not say. */
function readWorldVars(s: FactSink, env: ShellEnv, li: LineIndex): void {
  const pick = (names: string[], path: string) => {
    for (const name of names) {
      const v = env.getVar(name);
      const n = v && !unresolved(v) ? toNumber(v.t) : undefined;
      const sp = v ? span(v) : undefined;
      if (n !== undefined && n > 0 && Number.isInteger(n) && sp) { s.explicit(path, n, { key: name, valueRange: li.range(sp[0], sp[1]) }); return; }
    }
  };
  pick(['GPUS_PER_NODE', 'NPROC_PER_NODE', 'NUM_GPUS', 'N_GPUS', 'NGPUS'], 'cluster.gpusPerNode');
  pick(['NNODES', 'NUM_NODES', 'N_NODES'], 'cluster.nodes');
  pick(['WORLD_SIZE'], 'cluster.worldSize');
}
