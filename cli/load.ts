/** Loads a config file for the CLI: parse, follow references, apply --gpus/--model, resolve the Plan. */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { parse as parseJsonc } from 'jsonc-parser';
import { normalizeSettings } from '../server/settings';
import { resolveSettings } from '../server/analysis/resolveAdapter';
import { dirname, resolve } from 'node:path';
import { findGpu, suggestGpus } from '../shared/hardware/gpus';
import type { ResolveSettings, ResolvedPlan } from '../shared/plan/resolve';
import type { ConfigFacts } from '../shared/plan/facts';
import { initFormats } from '../formats/index';
import { loadConfigGraph } from '../server/formats/workspace';
import { parseGpusArg, type ParsedArgs } from './args';
import { readProfileFile } from '../validation/torch/profile';
import { nodeHost } from './host';

export interface Loaded {
  readonly path: string;
  readonly primary: ConfigFacts;
  readonly resolved: ResolvedPlan;
}

/** A usage or input error: printed with its message, exit code 2. */
export class InputError extends Error {}

/** Finds the workspace root of a file: the nearest folder above it holding .git, .vscode or package.json, else its folder. */
function workspaceRoot(file: string): string {
  let dir = dirname(file);
  for (let i = 0; i < 8; i++) {
    if (['.git', '.vscode', 'package.json'].some((m) => existsSync(resolve(dir, m)))) return dir;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return dirname(file);
}

/**
 * The `shardlens.*` settings of the workspace (`.vscode/settings.json`, JSON with comments), as the editor would
 * send them to the language server, so the CLI and the editor show the same numbers for the same file.
 */
export function workspaceSettings(root: string): ResolveSettings {
  const nested: Record<string, unknown> = {};
  try {
    const flat = parseJsonc(readFileSync(resolve(root, '.vscode', 'settings.json'), 'utf8')) as Record<string, unknown>;
    for (const [key, value] of Object.entries(flat ?? {})) {
      if (!key.startsWith('shardlens.')) continue;
      const parts = key.slice('shardlens.'.length).split('.');
      let o = nested;
      for (const part of parts.slice(0, -1)) o = (o[part] ??= {}) as Record<string, unknown>;
      o[parts[parts.length - 1]] = value;
    }
  } catch {
    // No settings file (or an unreadable one): the editor's defaults apply.
  }
  return resolveSettings(normalizeSettings(nested));
}

/** Turns `--gpus` and `--model` into resolver settings over the workspace's, or throws InputError with what is wrong. */
export function settingsFromFlags(flags: ParsedArgs['flags'], base: ResolveSettings = {}): ResolveSettings {
  const settings: { -readonly [K in keyof ResolveSettings]: ResolveSettings[K] } = { ...base };
  const g = flags.gpus;
  if (g !== undefined) {
    if (g === true) throw new InputError('--gpus needs a value such as 16xH100');
    const parsed = parseGpusArg(g);
    if ('error' in parsed) throw new InputError(parsed.error);
    if (!findGpu(parsed.gpuName)) {
      const hint = suggestGpus(parsed.gpuName);
      throw new InputError(`--gpus: unknown GPU "${parsed.gpuName}".${hint.length ? ` Did you mean ${hint.join(', ')}?` : ''} Run \`shardlens gpus\` for the catalog.`);
    }
    settings.gpu = parsed.gpuName;
    if (parsed.worldSize) settings.worldSize = parsed.worldSize;
    if (parsed.nodes) settings.nodes = parsed.nodes;
    if (parsed.gpusPerNode) settings.gpusPerNode = parsed.gpusPerNode;
  }
  const prof = flags.profile;
  if (prof !== undefined) {
    if (prof === true) throw new InputError('--profile needs the path of a profile written by `shardlens profile`');
    const read = readProfileFile(resolve(prof));
    if (!read.profile) throw new InputError(`--profile: ${read.message}`);
    settings.profile = read.profile;
  }
  const m = flags.model;
  if (m !== undefined) {
    if (m === true) throw new InputError('--model needs a preset name or a path to a config.json');
    settings.model = existsSync(m) ? resolve(m) : m;
  }
  return settings;
}

/** Loads one config file and resolves its plan. */
export async function loadConfig(file: string, flags: ParsedArgs['flags']): Promise<Loaded> {
  const path = resolve(file);
  if (!existsSync(path)) throw new InputError(`${file}: no such file`);
  if (!statSync(path).isFile()) throw new InputError(`${file}: not a file`);
  const root = workspaceRoot(path);
  const settings = settingsFromFlags(flags, workspaceSettings(root));
  await initFormats();
  const graph = loadConfigGraph(path, nodeHost(root), { settings });
  return { path, primary: graph.primary, resolved: graph.resolved };
}
