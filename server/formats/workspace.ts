/**
 * Loads a config file with the files it references (DeepSpeed JSON, model config.json) or that reference it,
 * and resolves the Plan. File access goes through a host so the server can overlay open documents.
 */
import { basename, dirname, isAbsolute, join, normalize, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConfigFacts, ConfigReference, FormatId } from '../../shared/plan/facts';
import { MODEL_NOTE_CODES, modelFromHfConfig } from '../../shared/model/hfConfig';
import { findPreset } from '../../shared/model/presets';
import { presetCandidates, resolvePlan, type ModelLookup, type ModelLookupInvalid, type ResolveContext, type ResolvedPlan } from '../../shared/plan/resolve';
import type { Problem } from '../../shared/plan/types';
import { detectFormat, parseConfig, parsePythonConfig } from '../../formats/index';
import { torchtitanConfigFunctions } from '../../formats/torchtitan/python';
import type { SourceReader } from '../../formats/megatron/script';
import { SCAN_EXT, mentionedConfigNames } from '../io/referenceIndex';
import { withProfileFile } from './profileSetting';
import { withBitsandbytesPin } from './workspacePins';
import { read } from './hostRead';
import { bundledDeepSpeedFacts } from './bundledDeepSpeed';

export interface WorkspaceHost {
  /** Text of a file by path or file:// URI; undefined when it cannot be read. */
  readFile(pathOrUri: string): string | undefined;
  exists?(path: string): boolean;
  /** Entries (names) of a folder; undefined when it is not one (in-memory hosts; Node hosts give `mentioning`). */
  listDir?(path: string): readonly string[] | undefined;
  /**
   * Files of the workspace that mention a file name (the reverse-reference index, built once and kept current from
   * file events); `truncated` says why some files may not be indexed.
   */
  mentioning?(name: string): { readonly files: readonly string[]; readonly truncated?: string };
  /** Why a path could not be read (outside the workspace, a device, too large…), when it exists but was refused. */
  refusal?(path: string): string | undefined;
  /** Workspace folder that relative references are also tried against (the usual CWD of a launch). */
  readonly root?: string;
}

export interface ConfigGraph {
  readonly primary: ConfigFacts;
  /** Referenced files first (DeepSpeed JSON), then files that reference the primary one. */
  readonly related: ConfigFacts[];
  readonly resolved: ResolvedPlan;
  /** Absolute paths of every file read for this graph (for refreshing dependants). */
  readonly dependencies: string[];
}

export function toPath(pathOrUri: string): string {
  if (pathOrUri.startsWith('file://')) {
    try { return fileURLToPath(pathOrUri); } catch { return pathOrUri; }
  }
  return pathOrUri;
}

/**
 * Candidate absolute paths of a reference: the folder a launch script `cd`ed into (`cwd`, relative to the file's
 * folder), the file's folder, its parents (the repository root a launcher runs from) and the workspace root.
 */
export function referenceCandidates(target: string, fromPath: string, root?: string, cwd?: string): string[] {
  const t = target.trim().replace(/^['"]|['"]$/g, '');
  if (!t || t.includes('$')) return [];
  if (isAbsolute(t)) return [normalize(t)];
  const out: string[] = [];
  if (cwd && !cwd.includes('$')) out.push(isAbsolute(cwd) ? join(cwd, t) : join(dirname(toPath(fromPath)), cwd, t));
  let d = dirname(toPath(fromPath));
  for (let i = 0; i < 5; i++) { out.push(join(d, t)); const up = dirname(d); if (up === d) break; d = up; }
  if (root) out.push(join(root, t));
  return [...new Set(out.map((p) => resolvePath(p)))];
}

/** The first existing file a reference points to. */
export function resolveReference(ref: ConfigReference, fromPath: string, host: WorkspaceHost): string | undefined {
  for (const c of referenceCandidates(ref.target, fromPath, host.root, ref.cwd)) if (read(host, c) !== undefined) return c;
  return undefined;
}

/** Why the candidates of a reference that exist were refused (outside the workspace, a device…), if any was. */
function refusalOf(ref: ConfigReference, fromPath: string, host: WorkspaceHost): string | undefined {
  if (!host.refusal) return undefined;
  for (const c of referenceCandidates(ref.target, fromPath, host.root, ref.cwd)) {
    const why = host.refusal(c);
    if (why) return why;
  }
  return undefined;
}

/** Model lookup: a config.json next to the reference (or in the folder it names), else a bundled preset. */
export function modelLookup(host: WorkspaceHost): (ref: string, fromUri: string) => ModelLookup | ModelLookupInvalid | undefined {
  return (ref, fromUri) => {
    const names = ref.endsWith('.json') ? [ref] : [join(ref, 'config.json')];
    let invalid: string | undefined;
    for (const n of names) {
      for (const c of referenceCandidates(n, fromUri || join(host.root ?? '.', 'x'), host.root)) {
        const text = read(host, c);
        if (text === undefined) continue;
        let obj: unknown;
        try {
          obj = JSON.parse(text);
        } catch (e) {
          invalid ??= `The model config ${c} is not valid JSON (${(e as Error).message}); fix it to get an estimate.`;
          continue;
        }
        const { model, problems } = modelFromHfConfig(obj, ref.replace(/\/config\.json$/, '').replace(/^.*\//, ''));
        if (model) return { model, source: { kind: 'referenced', detail: `${c}`, uri: c }, notes: problems.filter((p) => MODEL_NOTE_CODES.has(p.code)) };
        invalid ??= `The model config ${c} is not a usable Hugging Face config.json (${problems.map((p) => p.message).join('; ') || 'no model sizes'}); fix it to get an estimate.`;
      }
    }
    // The file the reference names exists but is broken: that is the answer, not a bundled model of a similar name.
    if (invalid) return { invalid };
    const p = presetCandidates(ref).map((c) => findPreset(c)).find(Boolean);
    return p ? { model: p.model, source: { kind: 'preset', detail: `bundled preset ${p.name} (for "${ref}"; ${p.source})` }, notes: p.notes } : undefined;
  };
}


/** Parses of the files around the edited one, by path: reused while their text is unchanged. */
const parsedFiles = new Map<string, { readonly text: string; readonly format: FormatId | undefined; readonly symbol?: string; readonly facts: ConfigFacts }>();
const PARSED_FILES_MAX = 256;

/**
 * Parses a referenced or referencing file, reusing the last parse of the same text: an edit in a DeepSpeed JSON
 * re-analyses that file, not the unchanged files that reference it (found, then read, on every keystroke).
 * ConfigFacts are immutable, so sharing them is safe.
 */
function parseFile(path: string, text: string, format?: FormatId, symbol?: string): ConfigFacts {
  const hit = parsedFiles.get(path);
  if (hit && hit.text === text && hit.format === format && hit.symbol === symbol) return hit.facts;
  // A function of a Python configuration module (torchtitan --module/--config) is read statically, never run.
  const facts = symbol ? parsePythonConfig(path, text, symbol) : parseConfig(path, text, format);
  parsedFiles.delete(path);
  parsedFiles.set(path, { text, format, symbol, facts });
  if (parsedFiles.size > PARSED_FILES_MAX) parsedFiles.delete(parsedFiles.keys().next().value as string);
  return facts;
}

/** Whether a text names the file `base`: by name, or as the Python module a torchtitan launch imports (--module a.b). */
function mentions(text: string | undefined, base: string): boolean {
  return !!text && (text.includes(base) || (base.endsWith('.py') && mentionedConfigNames(text).includes(base)));
}

/** Candidate files that mention `base`: the host's index, else a bounded walk of an in-memory host's folders. */
function mentioning(base: string, host: WorkspaceHost): { files: readonly string[]; truncated?: string } {
  if (host.mentioning) return host.mentioning(base);
  if (!host.root || !host.listDir) return { files: [] };
  const files: string[] = [];
  const queue: [string, number][] = [[host.root, 0]];
  for (let head = 0; head < queue.length && files.length < 100_000; head++) {
    const [dir, depth] = queue[head];
    for (const n of host.listDir(dir) ?? []) {
      if (n.startsWith('.') || n === 'node_modules') continue;
      const p = join(dir, n);
      if (SCAN_EXT.test(n)) {
        if (mentions(read(host, p), base)) files.push(p);
      } else if (depth < 16) queue.push([p, depth + 1]);
    }
  }
  return { files };
}

/** Files of the workspace whose references resolve to `target` (every one the index holds, wherever it lies). */
export function findReferencing(target: string, host: WorkspaceHost): string[] {
  return referencing(target, host).files.map((f) => f.path);
}

/** The files whose references resolve to `target` (one of them naming function `symbol` when given), each parsed once. */
function referencing(target: string, host: WorkspaceHost, symbol?: string): { files: { path: string; facts: ConfigFacts }[]; truncated?: string } {
  const base = target.replace(/^.*[\\/]/, '');
  const abs = resolvePath(target);
  const out: { path: string; facts: ConfigFacts }[] = [];
  const found = mentioning(base, host);
  for (const p of found.files) {
    if (resolvePath(p) === abs) continue;
    const text = read(host, p);
    if (!text || !mentions(text, base)) continue;
    const fmt = detectFormat(p, text);
    if (!fmt) continue;
    const facts = parseFile(p, text, fmt);
    // A function of a Python module is named with the module: a launcher of another function does not run this one.
    if (facts.references.some((r) => (symbol === undefined || r.symbol === symbol) && resolveReference(r, p, host) === abs)) out.push({ path: p, facts });
  }
  return found.truncated ? { files: out, truncated: found.truncated } : { files: out };
}

/** Launch scripts of one configuration read at most (a folder of generated sweep scripts can hold thousands). */
const MAX_LAUNCHERS = 16;

/**
 * The launch scripts that run `path` (its function `symbol` when given), the nearest first: the configuration's folder,
 * then by path; at most MAX_LAUNCHERS.
 */
function nearestLaunchers(path: string, host: WorkspaceHost, symbol?: string): { files: { path: string; facts: ConfigFacts }[]; truncated?: string } {
  const found = referencing(path, host, symbol);
  const near = (p: string) => (dirname(p) === dirname(path) ? 0 : 1);
  const files = found.files.sort((a, b) => near(a.path) - near(b.path) || a.path.localeCompare(b.path)).slice(0, MAX_LAUNCHERS);
  return found.truncated ? { files, truncated: found.truncated } : { files };
}

/** The cluster facts a launch script states: how many GPUs run what it launches. */
const CLUSTER_PATHS = /^cluster\.(gpusPerNode|nodes|worldSize|gpuName)$/;

/** How many GPUs a launch file runs on ("N GPUs": its world size, else nodes × GPUs per node), for messages. */
function clusterWords(f: ConfigFacts): string | undefined {
  const v = (k: string) => (f.facts as Record<string, { value: unknown } | undefined>)[k]?.value;
  const nodes = v('cluster.nodes'), per = v('cluster.gpusPerNode'), world = v('cluster.worldSize');
  if (typeof world === 'number') return `${world} GPUs`;
  if (typeof per === 'number') return `${(typeof nodes === 'number' ? nodes : 1) * per} GPUs`;
  return undefined;
}

/**
 * The launch script of a torchtitan job configuration (a TOML, or a function of a Python module) opened on its own:
 * the configuration does not say how many GPUs run it, the script that names it does (torchrun's --nnodes and
 * --nproc_per_node, NGPU, Slurm). Only its cluster facts are taken (the configuration is what this file says, whatever
 * the script overrides), from the nearest launcher that states any; launchers that disagree are named.
 */
function torchtitanLauncher(path: string, text: string, host: WorkspaceHost, symbol: string | undefined, problems: Problem[]): { path: string; facts: ConfigFacts } | undefined {
  const fn = /\.py$/i.test(path) ? symbol ?? torchtitanConfigFunctions(text)[0]?.name : undefined;
  if (/\.py$/i.test(path) && !fn) return undefined;
  const found = nearestLaunchers(path, host, fn);
  if (found.truncated) problems.push({ code: 'reference-index-truncated', severity: 'info', message: `Launch scripts that run this configuration may be missed: ${found.truncated}.`, paths: [] });
  const stated = found.files.flatMap(({ path: p, facts: all }) => {
    const facts = Object.fromEntries(Object.entries(all.facts).filter(([k]) => CLUSTER_PATHS.test(k)));
    const words = clusterWords({ ...all, facts });
    return words ? [{ path: p, facts: { ...all, facts, references: [], diagnostics: [] } as ConfigFacts, words }] : [];
  });
  const first = stated[0];
  if (!first) return undefined;
  const others = stated.filter((s) => s.words !== first.words);
  if (others.length) {
    problems.push({ code: 'launchers-disagree', severity: 'info', paths: ['cluster'],
      message: `${basename(first.path)} runs this configuration on ${first.words}, which the estimate uses; ${others.slice(0, 3).map((o) => `${basename(o.path)} on ${o.words}`).join(', ')}${others.length > 3 ? ', …' : ''}.` });
  }
  return first;
}

/**
 * The configuration function a module of them opens on when none is chosen: the one the nearest launch script runs
 * (`--module llama3 --config llama3_70b`, `MODULE=… CONFIG=…`; the module's folder first, then by path, at most
 * MAX_LAUNCHERS read), else undefined (the caller takes the module's first, as torchtitan's own scripts default to its
 * debug model). The info names the script, so a user who expected the first knows why.
 */
export function launchedConfiguration(path: string, names: readonly string[], host: WorkspaceHost): { name: string; problem: Problem } | undefined {
  if (!/\.py$/i.test(path) || !names.length) return undefined;
  const abs = resolvePath(path);
  for (const { path: p, facts } of nearestLaunchers(path, host).files) {
    const r = facts.references.find((x) => x.symbol !== undefined && names.includes(x.symbol) && resolveReference(x, p, host) === abs);
    if (r?.symbol) {
      return { name: r.symbol, problem: { code: 'configuration-from-launcher', severity: 'info', paths: [],
        message: `${r.symbol} is analysed first: ${basename(p)} runs it. Every configuration of the module has its own lens to analyse it.` } };
    }
  }
  return undefined;
}

/** Reverse map: referenced absolute path → files that reference it. */
export function reverseReferences(files: readonly { path: string; facts: ConfigFacts }[], host: WorkspaceHost): Map<string, Set<string>> {
  const m = new Map<string, Set<string>>();
  for (const f of files) {
    for (const r of f.facts.references) {
      const t = resolveReference(r, f.path, host);
      if (!t) continue;
      if (!m.has(t)) m.set(t, new Set());
      m.get(t)!.add(f.path);
    }
  }
  return m;
}

/** Largest file a launch script may source (bytes of text). */
const MAX_SOURCED = 1_000_000;

/** Reads the files a launch script sources, found like references (cd folder, file folder, parents, root). */
function sourceReader(path: string, host: WorkspaceHost, deps: string[]): SourceReader {
  return (target, cwd) => {
    for (const c of referenceCandidates(target, path, host.root, cwd)) {
      const text = read(host, c);
      if (text === undefined || text.length > MAX_SOURCED) continue;
      deps.push(c);
      return { uri: c, text };
    }
    return undefined;
  };
}

/**
 * The format of a file as the loader will read it: also a YAML file that is only overrides of the bases its
 * `defaults:` names (found like sourced files; formats/detect.ts).
 */
export function detectWithHost(pathOrUri: string, text: string, host: WorkspaceHost): FormatId | undefined {
  return detectFormat(pathOrUri, text, sourceReader(toPath(pathOrUri), host, []));
}

const REFERENCED: Partial<Record<ConfigReference['kind'], { format?: FormatId; what: string }>> = {
  deepspeed: { format: 'deepspeed', what: 'DeepSpeed config' },
  accelerate: { format: 'accelerate', what: 'Accelerate config' },
  config: { what: 'trainer config' },
};

/**
 * Parses a file, follows its references and resolves the plan. `symbol`: the configuration function to read when the
 * file is a torchtitan Python module (its first otherwise). Never throws.
 */
export function loadConfigGraph(pathOrUri: string, host: WorkspaceHost, ctx: ResolveContext = {}, symbol?: string): ConfigGraph {
  const path = toPath(pathOrUri);
  const problems: Problem[] = [];
  const text = read(host, path) ?? read(host, pathOrUri);
  const deps: string[] = [];
  const primary = parseConfig(pathOrUri, text ?? '', undefined, { readSource: sourceReader(path, host, deps), ...(symbol ? { symbol } : {}) });
  const related: ConfigFacts[] = [];
  if (text === undefined) {
    const why = host.refusal?.(path);
    problems.push({ code: 'file-unreadable', severity: 'error', message: `Cannot read ${path}${why ? `: ${why}` : ''}.`, paths: [] });
  }
  if (primary.diagnostics.some((d) => d.code === 'unknown-format')) return { primary, related, resolved: { problems, assumptions: [], factsUsed: {} }, dependencies: deps };
  for (const r of primary.references) {
    const kind = REFERENCED[r.kind];
    if (!kind) continue;
    const p = resolveReference(r, path, host);
    // A framework's own DeepSpeed file named by its fixed path (axolotl, LLaMA-Factory) and absent here: its values
    // that decide memory, as assumptions that say where they come from.
    const bundled = !p && r.kind === 'deepspeed' && !refusalOf(r, path, host)
      ? bundledDeepSpeedFacts(r.target, (t) => parseFile(`bundled:${r.target}`, t, 'deepspeed')) : undefined;
    if (bundled) {
      problems.push(bundled.problem);
      related.push(bundled.facts);
      continue;
    }
    if (!p) {
      const what = `${kind.what[0]!.toUpperCase()}${kind.what.slice(1)} "${r.target}"`;
      const why = refusalOf(r, path, host);
      const message = why ? `${what} was not read: ${why}.` : `${what} was not found next to the file${r.cwd ? `, in ${r.cwd}` : ''} or in the workspace.`;
      problems.push({ code: 'reference-missing', severity: 'warning', message, paths: [] });
      continue;
    }
    const refText = read(host, p) ?? '';
    // A torchtitan configuration function in a Python module: read statically, never imported or run.
    if (r.symbol && /\.py$/.test(p)) {
      deps.push(p);
      const facts = parseFile(p, refText, undefined, r.symbol);
      related.push(facts);
      // What the static reading could not follow is said with the plan of the file that names the function.
      const at = (d: { range: { start: { line: number } } }) => `${basename(p)}:${d.range.start.line + 1}`;
      for (const d of facts.diagnostics) problems.push({ code: d.code, severity: d.severity, message: `${at(d)} (${r.symbol}): ${d.message}`, paths: d.paths });
      continue;
    }
    const format = kind.format ?? detectFormat(p, refText);
    if (!format) continue;
    deps.push(p);
    const facts = parseFile(p, refText, format);
    related.push(facts);
    // An Accelerate config can name a DeepSpeed JSON in turn (deepspeed_config_file).
    for (const r2 of facts.references) {
      if (r2.kind !== 'deepspeed') continue;
      const p2 = resolveReference(r2, p, host);
      if (p2) { deps.push(p2); related.push(parseFile(p2, read(host, p2) ?? '', 'deepspeed')); }
    }
  }
  if (primary.format === 'deepspeed') {
    const near = (p: string) => (dirname(p) === dirname(path) ? 0 : 1);
    const found = referencing(path, host);
    if (found.truncated) problems.push({ code: 'reference-index-truncated', severity: 'info', message: `Launchers that use this file may be missed: ${found.truncated}.`, paths: [] });
    for (const { path: p, facts } of found.files.sort((a, b) => near(a.path) - near(b.path)).slice(0, 3)) {
      deps.push(p);
      related.push(facts);
    }
  }
  if (primary.format === 'torchtitan' && text !== undefined) {
    const launcher = torchtitanLauncher(path, text, host, symbol, problems);
    if (launcher) { deps.push(launcher.path); related.push(launcher.facts); }
  }
  const settings = withProfileFile(ctx.settings, host, deps, problems);
  // A 4-bit bitsandbytes base: the release the workspace pins decides what its linears keep (workspacePins.ts).
  const pinned = text === undefined ? primary : withBitsandbytesPin(primary, related, path, host, deps);
  const resolved = resolvePlan(pinned, related, { ...ctx, settings, lookupModel: ctx.lookupModel ?? modelLookup(host) });
  // The pinned facts are the graph's: a what-if resolves them again and must start from the same plan.
  return { primary: pinned, related, resolved: { ...resolved, problems: [...problems, ...resolved.problems] }, dependencies: deps };
}
