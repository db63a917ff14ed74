/**
 * Launch scripts (bash, Slurm): evaluates the script as it runs without arguments (sourced files, `cd`, arrays,
 * `${VAR:-default}`, heredocs, `$SLURM_*` from `#SBATCH`), finds the command that runs training (torchrun,
 * deepspeed, accelerate launch, python -m, srun, ray job submit, swift/megatron/llamafactory-cli), reads its
 * launcher options, and hands its arguments to the dialect they speak: Megatron-LM flags, Hugging Face Trainer
 * arguments, DeepSpeed-Chat, OpenRLHF or verl's Hydra overrides (launch/trainerArgs.ts, verl/hydra.ts). A DeepSpeed JSON
 * written by a heredoc is read too. What the script leaves unsaid stays unset (the resolver says it assumed it).
 */
import type { FactSink } from '../common/sink';
import { LineIndex } from '../common/text';
import { jsonTree } from '../common/jsonTree';
import { applyTable, type DialectTable } from '../common/keyTable';
import { invocation, SourceMap, toArgs, type FlagArg, type Invocation } from '../common/shell/commandLine';
import { ShellEnv, type EvalCommand, type Included } from '../common/shell/evaluate';
import { maskPlaceholders, reportPlaceholders } from '../common/shell/placeholders';
import { statements } from '../common/shell/statementCache';
import { slice, splitWords, span, unresolved } from '../common/shell/sval';
import { lastChange, parseCached } from '../common/shell/treeCache';
import { shellParser } from '../common/shell/treeSitter';
import { readDeepSpeed } from '../deepspeed/reader';
import { readLauncher } from '../launch/launcher';
import rayActor from '../launch/ray-actor.json';
import { readSedTemplates } from '../launch/sedTemplate';
import { applyDeepSpeedScript, applyFlagDialect, flagDialect, isDeepSpeedScript, lookupFlags, recognised } from '../launch/trainerArgs';
import { describeUnread } from '../launch/unread';
import { isTorchtitanLaunch, readTorchtitanLaunch } from '../launch/torchtitan';
import { applySlurm, sbatchCommand, sbatchDirectives, slurmEnv } from '../slurm/directives';
import { applyHydra, hasOverrides, overrides } from '../verl/hydra';
import type { PlanPath } from '../../shared/plan/paths';
import { applyMegatronArgs } from './args';
import { applyBridge, isBridgeOverrides } from './bridge';
import { readConfigWithOverrides } from '../easyr1/launch';

const RAY_ACTOR = rayActor as DialectTable;
const ARGVAR = /--(num-layers|tensor-model-parallel-size|hidden-size|micro-batch-size|per_device_train_batch_size|deepspeed)\b/;

/** Reads a file a script sources: its text from the caller, its statements from the (cached) shell parser. */
export type SourceReader = (target: string, cwd: string) => { uri: string; text: string } | undefined;

/** The command that runs training: the invocation whose arguments the dialects recognise most (later wins ties). */
function trainingCommand(cmds: readonly EvalCommand[], map: SourceMap): { inv: Invocation; args: FlagArg[] } | undefined {
  let best: { inv: Invocation; args: FlagArg[]; score: number } | undefined;
  for (const cmd of cmds) {
    const inv = invocation(cmd);
    if (!inv) continue;
    const args = toArgs(inv.args, map);
    const hydra = hasOverrides(inv.args) ? inv.args.filter((w) => w.t.includes('=') && !w.t.startsWith('-')).length : 0;
    const score = recognised(args) + hydra + (/pretrain|train|sft|main/.test(inv.program) ? 1 : 0);
    if (!best || score >= best.score) best = { inv, args, score };
  }
  return best && best.score > 0 ? best : undefined;
}

/** Reads the DeepSpeed JSON a heredoc writes (Megatron-DeepSpeed), with ranges mapped back into the script. */
function readHeredocJson(s: FactSink, cmds: readonly EvalCommand[], li: LineIndex): void {
  for (const c of cmds) {
    const body = c.heredoc?.body;
    if (!body || !/^\s*\{/.test(body.t) || !/zero_optimization|train_micro_batch_size_per_gpu|train_batch_size/.test(body.t)) continue;
    const mapper = { range: (a: number, b: number) => li.range(body.o[Math.min(a, body.o.length - 1)] ?? 0, body.e[Math.max(0, Math.min(b, body.e.length) - 1)] ?? 0) };
    const tree = jsonTree(body.t, mapper as unknown as LineIndex);
    const saved = { ...s.facts };
    readDeepSpeed(s, tree.root);
    for (const [k, f] of Object.entries(saved)) if (f.source.kind === 'explicit' && !k.startsWith('parallel.sharding.')) s.facts[k] = f;
    // The launch line names the file this heredoc writes (`cat > "$DS_CONFIG" << EOF` … `--deepspeed_config $DS_CONFIG`):
    // it was just read, it is not a file to look for.
    const written = c.heredoc?.target?.replace(/^\.\//, '');
    if (written) for (let i = s.references.length - 1; i >= 0; i--) if (s.references[i]!.kind === 'deepspeed' && s.references[i]!.target.replace(/^\.\//, '') === written) s.references.splice(i, 1);
    return;
  }
}

const CONFIG_FILE = /\.(ya?ml|toml)$/i;

/**
 * The trainer's own config file a launch line names: `config=x.yaml` (EasyR1 / OmegaConf CLIs), `--config x.yaml`,
 * `--config-file x.yaml` (nanotron), `--job.config_file x.toml` (torchtitan), or a YAML as the first argument
 * (`llamafactory-cli train x.yaml`, `python train.py x.yaml`). Read as a reference, so its values join the estimate.
 */
function trainerConfigRef(s: FactSink, inv: Invocation, args: FlagArg[], map: SourceMap): void {
  const eq = inv.args.find((w) => /^config=/.test(w.t) && CONFIG_FILE.test(w.t) && !unresolved(w));
  if (eq) {
    const value = slice(eq, eq.t.indexOf('=') + 1, eq.t.length);
    s.ref('config', value.t, map.of(value).uri ? undefined : map.of(value).range, inv.command.cwd);
    return;
  }
  const flag = args.find((a) => /^--(config|config-file|job\.config_file)$/.test(a.flag) && a.value && CONFIG_FILE.test(a.value) && !a.unresolved);
  if (flag?.value) { s.ref('config', flag.value, flag.uri ? undefined : flag.valueRange, inv.command.cwd); return; }
  const first = inv.args[0];
  if (first && CONFIG_FILE.test(first.t) && !first.t.startsWith('-') && !first.t.includes('=') && !unresolved(first)) {
    s.ref('config', first.t, map.of(first).uri ? undefined : map.of(first).range, inv.command.cwd);
  }
}

/** Arguments of the training command in the dialect they speak. */
function readTrainer(s: FactSink, inv: Invocation, args: FlagArg[], map: SourceMap, readSource?: SourceReader): void {
  trainerConfigRef(s, inv, args, map);
  if (isTorchtitanLaunch(inv, args)) { readTorchtitanLaunch(s, inv, args); return; }
  if (readConfigWithOverrides(s, inv, map, readSource)) return;
  const hydra = hasOverrides(inv.args) && !args.some((a) => /^--(tensor-model-parallel-size|num-layers)$/.test(a.flag));
  const found = hydra || /run_recipe\.py$/.test(inv.program) ? overrides(inv.args, map) : undefined;
  if (found && isBridgeOverrides(found, inv.program)) { applyBridge(s, inv, found, args, map); return; }
  if (hydra && found) {
    const configName = args.find((a) => a.flag === '--config-name')?.value;
    applyHydra(s, found, inv.program, configName);
    s.derived('launch.dialect', 'verl', `Hydra overrides of ${inv.program}`);
    return;
  }
  applyTable(s, RAY_ACTOR, lookupFlags(RAY_ACTOR, args));
  const dialect = flagDialect(inv, args);
  if (!dialect && isDeepSpeedScript(inv, args)) {
    s.derived('launch.dialect', 'deepspeed-script', `arguments of ${inv.program} (a DeepSpeed-integrated script)`);
    applyDeepSpeedScript(s, args, inv.command.cwd);
    return;
  }
  if (!dialect) return;
  s.derived('launch.dialect', dialect, `arguments of ${inv.program}`);
  if (dialect === 'megatron') {
    // ms-swift's `megatron sft` spells the sequence length --max_length.
    const renamed = inv.program.startsWith('megatron ') ? args.map((a) => (a.flag === '--max_length' ? { ...a, flag: '--seq-length' } : a)) : args;
    applyMegatronArgs(s, renamed);
    return;
  }
  applyFlagDialect(s, dialect, swiftRlArgs(inv, args), inv.command.cwd, inv.program);
}

/**
 * ms-swift `swift rlhf` with an online RL type: "In PPO, GRPO, GKD and inference scenarios, `max_length` refers to
 * `max_prompt_length`" (ms-swift docs, Command-line-parameters), so the trained sequence is it plus
 * `--max_completion_length`.
 */
function swiftRlArgs(inv: Invocation, args: FlagArg[]): FlagArg[] {
  const type = args.filter((a) => a.flag === '--rlhf_type').pop()?.value;
  if (inv.program !== 'swift rlhf' || !type || !/^(grpo|ppo|gkd)$/.test(type)) return args;
  return args.map((a) => (a.flag === '--max_length' ? { ...a, flag: '--max_prompt_length' } : a));
}

/** Reads a launch script into facts. Requires `initShellParser()` to have completed. */
export function readMegatronScript(s: FactSink, original: string, li: LineIndex, readSource?: SourceReader): void {
  const parser = shellParser();
  if (!parser) { s.diag('shell-parser-not-ready', 'info', 'The shell parser is still loading; open the file again in a moment.', undefined); return; }
  const masked = maskPlaceholders(original);
  const text = masked.text;
  reportPlaceholders(s, masked, li);
  const tree = parseCached(parser, s.uri, text);
  if (!tree) { s.diag('shell-parse-timeout', 'info', 'The script is too complex to read in time.', undefined); return; }
  const slurm = sbatchDirectives(text, li);
  const indexes = new Map<string, LineIndex>();
  const include = (target: string, cwd: string): Included | undefined => {
    const raw = readSource?.(target, cwd);
    const got = raw ? { uri: raw.uri, text: maskPlaceholders(raw.text).text } : undefined;
    const t = got ? parseCached(parser, got.uri, got.text) : undefined;
    if (!got || !t) return undefined;
    indexes.set(got.uri, new LineIndex(got.text));
    return { ...got, statements: statements(got.uri, t, got.text) };
  };
  const env = new ShellEnv(text, slurmEnv(slurm), { include });
  env.runAll(statements(s.uri, tree, text, lastChange(s.uri, text)));
  const map = new SourceMap(li, env.segments, (u) => indexes.get(u), env.envDefaults);
  for (const seg of env.segments) {
    const more = seg.uri && indexes.get(seg.uri) ? sbatchDirectives(indexes.get(seg.uri)!.text, indexes.get(seg.uri)!) : {};
    for (const [k, v] of Object.entries(more)) if (!(k in slurm)) (slurm as Record<string, unknown>)[k] = v;
  }
  for (const c of env.commands) if (c.words[0]?.t === 'sbatch') sbatchCommand(slurm, toArgs(c.words.slice(1), map));
  const found = trainingCommand(env.commands, map);
  let perTask = false;
  if (found) {
    perTask = readLauncher(s, found.inv, map, slurm);
    readTrainer(s, found.inv, found.args, map, readSource);
  } else {
    const args: FlagArg[] = [];
    for (const [, v] of env.varEntries()) if (ARGVAR.test(v.t)) args.push(...toArgs(splitWords(v, true), map));
    for (const [, arr] of env.arrays) if (arr.some((w) => ARGVAR.test(w.t))) args.push(...toArgs(arr.flatMap((w) => splitWords(w, true)), map));
    if (args.length) args.push(...tokenizerVariable(env, map, args));
    if (args.length) applyMegatronArgs(s, args);
  }
  readHeredocJson(s, env.commands, li);
  readSedTemplates(s, env.commands, readSource);
  applySlurm(s, slurm, perTask);
  if (!s.has('cluster.gpusPerNode')) readWorldVars(s, env, map);
  const g = s.num('cluster.gpusPerNode');
  const nodesUnknown = s.diagnostics.some((d) => d.code === 'launcher-unresolved' && d.paths.includes('cluster.nodes'));
  const n = s.num('cluster.nodes') ?? (g && !nodesUnknown && !s.has('cluster.worldSize') ? 1 : undefined);
  // A node count that is only the script's fallback leaves the world size to the plan's assumption (shared/plan/gather.ts).
  const nodesFallback = s.facts['cluster.nodes']?.source.kind === 'assumed';
  if (g && n && !nodesFallback && !s.has('cluster.worldSize')) s.derived('cluster.worldSize', g * n, 'launcher: GPUs per node × nodes');
  describeUnread(s, found?.inv, env);
}

/**
 * A model file's TOKENIZER_MODEL as the --tokenizer-model it stands for: Megatron-LM's ModelOpt model files
 * (examples/post_training/modelopt/conf/<org>/<model>.sh) set it beside MODEL_ARGS, and the scripts that source them
 * pass `--tokenizer-model ${TOKENIZER_MODEL}` (finetune.sh, train.sh); the vocabulary then comes from that tokenizer.
 */
function tokenizerVariable(env: ShellEnv, map: SourceMap, args: readonly FlagArg[]): FlagArg[] {
  if (args.some((a) => /^--tokenizer[-_](model|name[-_]or[-_]path)$/.test(a.flag))) return [];
  const v = env.getVar('TOKENIZER_MODEL');
  if (!v || unresolved(v) || !span(v) || !v.t.trim()) return [];
  const where = map.of(v);
  return [{ flag: '--tokenizer-model', value: v.t.trim(), valueRange: where.range, uri: where.uri, spelled: 'TOKENIZER_MODEL' }];
}

/** GPUS_PER_NODE / NNODES / WORLD_SIZE variables when the launcher line did not say. */
function readWorldVars(s: FactSink, env: ShellEnv, map: SourceMap): void {
  const pick = (names: string[], path: PlanPath) => {
    if (s.has(path)) return;
    for (const name of names) {
      const v = env.getVar(name);
      const n = v && !unresolved(v) ? Number(v.t.trim()) : undefined;
      if (!v || n === undefined || !Number.isInteger(n) || n < 1 || !span(v)) continue;
      const where = map.of(v);
      const fallback = map.envDefaultOf(v);
      if (fallback) s.fallback(path, n, fallback, { key: name, valueRange: where.range, uri: where.uri });
      else s.explicit(path, n, { key: name, valueRange: where.range, uri: where.uri });
      return;
    }
  };
  pick(['GPUS_PER_NODE', 'NPROC_PER_NODE', 'NUM_GPUS', 'N_GPUS', 'NGPU', 'NGPUS', 'GPN'], 'cluster.gpusPerNode');
  pick(['NNODES', 'NUM_NODES', 'N_NODES', 'NODES'], 'cluster.nodes');
}
