/** Loads a config file for the CLI: parse, follow references, apply --gpus/--model, resolve the Plan. */
import { isAbsolute, resolve } from 'node:path';
import { resolveSettings } from '../server/analysis/resolveAdapter';
import { findGpu, isMigSlice, suggestGpus } from '../shared/hardware/gpus';
import type { ResolveSettings, ResolvedPlan } from '../shared/plan/resolve';
import type { ConfigFacts } from '../shared/plan/facts';
import { initFormats, MAX_CONFIG_CHARS, tooLarge } from '../formats/index';
import { torchtitanConfigFunctions } from '../formats/torchtitan/python';
import { isConfigurationName } from '../shared/protocol';
import { detectWithHost, launchedConfiguration, loadConfigGraph } from '../server/formats/workspace';
import { checkFile, readTextFile } from '../server/io/read';
import { parseGpusArg, stringFlag, type Flags } from './args';
import { readProfileFile } from '../validation/torch/profile';
import { nodeHost } from './host';
import { workspaceSettings } from './settings';
import { locateWorkspace, type CliWorkspace } from './workspace';
import { within } from '../server/io/roots';

export interface Loaded {
  readonly path: string;
  readonly primary: ConfigFacts;
  readonly resolved: ResolvedPlan;
  readonly workspace: CliWorkspace;
  /** A module of configuration functions (torchtitan's Python configurations): the one read, and every one's name. */
  readonly configuration?: { readonly name: string; readonly all: readonly string[] };
}

/** A usage or input error: printed with its message, exit code 2. */
export class InputError extends Error {}

/** Turns `--gpus` and `--model` into resolver settings over the workspace's, or throws InputError with what is wrong. */
export function settingsFromFlags(flags: Flags, base: ResolveSettings = {}): ResolveSettings {
  const settings: { -readonly [K in keyof ResolveSettings]: ResolveSettings[K] } = { ...base };
  const g = stringFlag(flags, 'gpus', '16xH100');
  if (typeof g === 'object') throw new InputError(g.error);
  if (g !== undefined) {
    const parsed = parseGpusArg(g);
    if ('error' in parsed) throw new InputError(parsed.error);
    if (!findGpu(parsed.gpuName)) {
      const hint = suggestGpus(parsed.gpuName);
      const what = isMigSlice(parsed.gpuName) ? `"${parsed.gpuName}" is a MIG slice, which ShardLens does not model` : `unknown GPU "${parsed.gpuName}"`;
      throw new InputError(`--gpus: ${what}.${hint.length ? ` Did you mean ${hint.join(', ')}?` : ''} Run \`shardlens gpus\` for the catalog.`);
    }
    settings.gpu = parsed.gpuName;
    if (parsed.worldSize) settings.worldSize = parsed.worldSize;
    if (parsed.nodes) settings.nodes = parsed.nodes;
    if (parsed.gpusPerNode) settings.gpusPerNode = parsed.gpusPerNode;
  }
  const prof = stringFlag(flags, 'profile', 'shardlens-profile.json');
  if (typeof prof === 'object') throw new InputError(prof.error);
  if (prof !== undefined) {
    const read = readProfileFile(resolve(prof));
    if (!read.profile) throw new InputError(`--profile: ${read.message}`);
    settings.profile = read.profile;
  }
  const m = stringFlag(flags, 'model', 'llama-3.1-8b');
  if (typeof m === 'object') throw new InputError(m.error);
  if (m !== undefined) settings.model = checkFile(m).ok || checkFile(resolve(m, 'config.json')).ok ? resolve(m) : m;
  return settings;
}

/** The workspace of a target, honouring --workspace; throws InputError when the target lies outside it. */
export function workspaceOf(target: string, flags: Flags): CliWorkspace {
  const explicit = stringFlag(flags, 'workspace', '.');
  if (typeof explicit === 'object') throw new InputError(explicit.error);
  if (explicit !== undefined && !checkFolder(explicit)) throw new InputError(`--workspace ${explicit}: not a folder`);
  const ws = locateWorkspace(target, explicit);
  if (!within(resolve(target), ws.boundary)) throw new InputError(`${target} is outside the workspace ${ws.boundary}`);
  return ws;
}

function checkFolder(p: string): boolean {
  const c = checkFile(p);
  return !c.ok && c.reason === 'not-a-file' && /a folder/.test(c.detail);
}

/** Prints what the workspace settings file held that was not taken (once per file per run). */
const warned = new Set<string>();
function warnIgnored(file: string | undefined, ignored: readonly string[]): void {
  const key = file ?? '';
  if (!ignored.length || warned.has(key)) return;
  warned.add(key);
  for (const i of ignored) process.stderr.write(`shardlens: ${file ?? '.vscode/settings.json'}: ignored ${i}\n`);
}

/** Checks the file the user named: it exists, is a regular file within the size cap, and is a training config. */
function checkTarget(file: string, path: string): string {
  const read = readTextFile(path);
  if (!read.ok) {
    if (read.reason === 'missing') throw new InputError(`${file}: no such file`);
    throw new InputError(read.detail);
  }
  return read.text;
}

/** Loads one config file and resolves its plan; throws InputError for files that are not training configs. */
export async function loadConfig(file: string, flags: Flags): Promise<Loaded> {
  const path = resolve(file);
  const text = checkTarget(file, path);
  await initFormats();
  if (text.length > MAX_CONFIG_CHARS) throw new InputError(`${file}: ${tooLarge(text.length)}`);
  const workspace = workspaceOf(file, flags);
  if (!detectWithHost(path, text, nodeHost(workspace, path))) throw new InputError(`${file}: not a training config ShardLens reads (DeepSpeed JSON, Megatron-LM script or YAML, torchtitan TOML or Python configurations, Accelerate, nanotron, Axolotl, LLaMA-Factory, Lightning/LitGPT/torchtune YAML, Hugging Face config.json)`);
  const ws = workspaceSettings(workspace.root, workspace.roots);
  warnIgnored(ws.file, ws.ignored);
  const settings = settingsFromFlags(flags, resolveSettings(ws.settings));
  const host = nodeHost(workspace, path);
  // A model the user named on the command line is read wherever it is (bounded); one from settings stays inside.
  if (typeof flags.model === 'string' && settings.model && isAbsolute(settings.model)) nodeHost(workspace, settings.model.endsWith('.json') ? settings.model : resolve(settings.model, 'config.json'));
  // --config F: the configuration function of a torchtitan Python module to read (its first by default).
  const all = /\.py$/i.test(path) ? torchtitanConfigFunctions(text).map((f) => f.name) : [];
  const asked = flags.config;
  if (asked !== undefined && !isConfigurationName(asked)) throw new InputError('--config needs the name of a configuration function, e.g. --config llama3_8b');
  if (asked !== undefined && !all.length) throw new InputError(`--config ${asked}: ${file} is not a module of torchtitan configuration functions`);
  if (asked !== undefined && !all.includes(asked)) throw new InputError(`--config ${asked}: ${file} has no such configuration (it has ${all.slice(0, 12).join(', ')})`);
  // None asked: the one a launch script of the workspace runs, else the first.
  const launched = asked === undefined ? launchedConfiguration(path, all, host) : undefined;
  const name = asked ?? launched?.name ?? all[0];
  const graph = loadConfigGraph(path, host, { settings }, name);
  if (launched) graph.resolved.problems.push(launched.problem);
  return { path, primary: graph.primary, resolved: graph.resolved, workspace, ...(name ? { configuration: { name, all } } : {}) };
}
