/**
 * Loads a config file with the files it references (DeepSpeed JSON, model config.json) or that reference it,
 * and resolves the Plan. File access goes through a host so the server can overlay open documents.
 */
import { dirname, isAbsolute, join, normalize, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConfigFacts, ConfigReference, FormatId } from '../../shared/plan/facts';
import { modelFromHfConfig } from '../../shared/model/hfConfig';
import { findPreset } from '../../shared/model/presets';
import { presetCandidates, resolvePlan, type ModelLookup, type ResolveContext, type ResolvedPlan } from '../../shared/plan/resolve';
import type { Problem } from '../../shared/plan/types';
import { detectFormat, parseConfig } from '../../formats/index';

export interface WorkspaceHost {
  /** Text of a file by path or file:// URI; undefined when it cannot be read. */
  readFile(pathOrUri: string): string | undefined;
  exists?(path: string): boolean;
  /** Entries (names) of a folder; undefined when it is not one. */
  listDir?(path: string): readonly string[] | undefined;
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

function read(host: WorkspaceHost, p: string): string | undefined {
  try {
    if (host.exists && !host.exists(p)) return undefined;
    return host.readFile(p);
  } catch {
    return undefined;
  }
}

/** Candidate absolute paths of a reference: the file's folder, its parents (launch CWDs) and the workspace root. */
export function referenceCandidates(target: string, fromPath: string, root?: string): string[] {
  const t = target.trim().replace(/^['"]|['"]$/g, '');
  if (!t || t.includes('$')) return [];
  if (isAbsolute(t)) return [normalize(t)];
  const out: string[] = [];
  let d = dirname(toPath(fromPath));
  for (let i = 0; i < 5; i++) { out.push(join(d, t)); const up = dirname(d); if (up === d) break; d = up; }
  if (root) out.push(join(root, t));
  return [...new Set(out.map((p) => resolvePath(p)))];
}

/** The first existing file a reference points to. */
export function resolveReference(ref: ConfigReference, fromPath: string, host: WorkspaceHost): string | undefined {
  for (const c of referenceCandidates(ref.target, fromPath, host.root)) if (read(host, c) !== undefined) return c;
  return undefined;
}

/** Model lookup: a config.json next to the reference (or in the folder it names), else a bundled preset. */
export function modelLookup(host: WorkspaceHost): (ref: string, fromUri: string) => ModelLookup | undefined {
  return (ref, fromUri) => {
    const names = ref.endsWith('.json') ? [ref] : [join(ref, 'config.json')];
    for (const n of names) {
      for (const c of referenceCandidates(n, fromUri || join(host.root ?? '.', 'x'), host.root)) {
        const text = read(host, c);
        if (text === undefined) continue;
        let obj: unknown;
        try { obj = JSON.parse(text); } catch { continue; }
        const { model } = modelFromHfConfig(obj, ref.replace(/\/config\.json$/, '').replace(/^.*\//, ''));
        if (model) return { model, source: { kind: 'referenced', detail: `${c}`, uri: c } };
      }
    }
    const p = presetCandidates(ref).map((c) => findPreset(c)).find(Boolean);
    return p ? { model: p.model, source: { kind: 'preset', detail: `bundled preset ${p.name} (for "${ref}"; ${p.source})` } } : undefined;
  };
}

const SCAN_EXT = /\.(ya?ml|sh|json|slurm|toml)$/i;

/** Parses of the files around the edited one, by path: reused while their text is unchanged. */
const parsedFiles = new Map<string, { readonly text: string; readonly format: FormatId | undefined; readonly facts: ConfigFacts }>();
const PARSED_FILES_MAX = 256;

/**
 * Parses a referenced or referencing file, reusing the last parse of the same text: an edit in a DeepSpeed JSON
 * re-analyses that file, not the unchanged files that reference it (found, then read, on every keystroke).
 * ConfigFacts are immutable, so sharing them is safe.
 */
function parseFile(path: string, text: string, format?: FormatId): ConfigFacts {
  const hit = parsedFiles.get(path);
  if (hit && hit.text === text && hit.format === format) return hit.facts;
  const facts = parseConfig(path, text, format);
  parsedFiles.delete(path);
  parsedFiles.set(path, { text, format, facts });
  if (parsedFiles.size > PARSED_FILES_MAX) parsedFiles.delete(parsedFiles.keys().next().value as string);
  return facts;
}

/** Files under the workspace root (bounded walk) that reference `target`. */
export function findReferencing(target: string, host: WorkspaceHost, limit = 400): string[] {
  if (!host.root || !host.listDir) return [];
  const base = target.replace(/^.*[\\/]/, '');
  const out: string[] = [];
  const queue: [string, number][] = [[host.root, 0]];
  let seen = 0;
  while (queue.length && seen < limit) {
    const [dir, depth] = queue.shift()!;
    const names = host.listDir(dir) ?? [];
    for (const n of names) {
      if (n.startsWith('.') || n === 'node_modules') continue;
      const p = join(dir, n);
      if (SCAN_EXT.test(n)) {
        if (++seen > limit) break;
        if (resolvePath(p) === resolvePath(target)) continue;
        const text = read(host, p);
        if (!text || !text.includes(base)) continue;
        const fmt = detectFormat(p, text);
        if (!fmt) continue;
        const facts = parseFile(p, text, fmt);
        if (facts.references.some((r) => resolveReference(r, p, host) === resolvePath(target))) out.push(p);
      } else if (depth < 4 && !n.includes('.') ) queue.push([p, depth + 1]);
    }
  }
  return out;
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

/** Parses a file, follows its references and resolves the plan. Never throws. */
export function loadConfigGraph(pathOrUri: string, host: WorkspaceHost, ctx: ResolveContext = {}): ConfigGraph {
  const path = toPath(pathOrUri);
  const problems: Problem[] = [];
  const text = read(host, path) ?? read(host, pathOrUri);
  const primary = parseConfig(pathOrUri, text ?? '');
  const related: ConfigFacts[] = [];
  const deps: string[] = [];
  if (text === undefined) problems.push({ code: 'file-unreadable', severity: 'error', message: `Cannot read ${path}.`, paths: [] });
  for (const r of primary.references) {
    if (r.kind !== 'deepspeed') continue;
    const p = resolveReference(r, path, host);
    if (!p) {
      problems.push({ code: 'reference-missing', severity: 'warning', message: `DeepSpeed config "${r.target}" was not found next to the file or in the workspace.`, paths: ['reference'] });
      continue;
    }
    deps.push(p);
    related.push(parseFile(p, read(host, p) ?? '', 'deepspeed'));
  }
  if (primary.format === 'deepspeed') {
    const near = (p: string) => (dirname(p) === dirname(path) ? 0 : 1);
    for (const p of findReferencing(path, host).sort((a, b) => near(a) - near(b)).slice(0, 3)) {
      deps.push(p);
      related.push(parseFile(p, read(host, p) ?? ''));
    }
  }
  const resolved = resolvePlan(primary, related, { ...ctx, lookupModel: ctx.lookupModel ?? modelLookup(host) });
  return { primary, related, resolved: { ...resolved, problems: [...problems, ...resolved.problems] }, dependencies: deps };
}
