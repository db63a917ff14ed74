/**
 * The one place the server binds to the estimation core and the format readers. Features call only this interface,
 * so tests can swap it.
 */
import type { ConfigFacts, FormatId } from '../../shared/plan/facts';
import type { MemoryEstimate } from '../../shared/plan/result';
import type { Plan, Problem, TextRange } from '../../shared/plan/types';
import { LineIndex } from '../../formats/common/text';
import { torchtitanConfigFunctions } from '../../formats/torchtitan/python';
import type { AnalysisAssumption, AnalysisSimulation, AnalysisStepTime, ShardLensSettings } from '../../shared/protocol';
import { estimateMemory } from '../../shared/memory/estimate';
import { estimateStepTime } from '../../shared/time/estimate';
import { simulateStep } from '../../shared/sim/simulate';
import { detectFormat, initFormats } from '../../formats/index';
import { detectWithHost, launchedConfiguration, loadConfigGraph, modelLookup, toPath, type WorkspaceHost } from '../formats/workspace';
import { resolvePlan, type FactOverrides } from '../../shared/plan/resolve';
import { resolveSettings } from './resolveAdapter';

/** Reads files for the reference graph: open buffers first, then disk. */
export type LoaderHost = WorkspaceHost;

/** A document with the files it references (or that reference it), resolved into a plan. */
export interface LoadedGraph {
  /** Facts of every file, the document first. */
  readonly files: readonly ConfigFacts[];
  /** URIs of every other file read (a change to one of them re-analyses the document). */
  readonly referenced: readonly string[];
  readonly plan?: Plan;
  readonly problems: readonly Problem[];
  readonly assumptions: readonly AnalysisAssumption[];
  /** The plan with some facts replaced (a what-if), resolved again from the same files and settings. */
  readonly whatIf?: (overrides: FactOverrides) => Plan | undefined;
}

/** Everything the server needs from formats and the core. No function may throw for bad input. */
export interface CoreApi {
  /** The format of a document; with a host, also a YAML recipe recognised by the bases its `defaults:` names. */
  detectFormat(uri: string, text: string, host?: LoaderHost): FormatId | null;
  /** Reads the document (through the host) and its references, and resolves the plan; `symbol` as loadConfigGraph's. */
  load(uri: string, host: LoaderHost, settings: ShardLensSettings, symbol?: string): LoadedGraph;
  /** The configuration functions of a module of them (torchtitan's Python configurations), in file order; else none. */
  configFunctions?(uri: string, text: string): readonly { readonly name: string; readonly range: TextRange }[];
  /** Which of those functions a launch script of the workspace runs (the module opens on it), with the info that says so. */
  launchedConfiguration?(uri: string, names: readonly string[], host: LoaderHost): { readonly name: string; readonly problem: Problem } | undefined;
  estimateMemory(plan: Plan): MemoryEstimate;
  /**
   * The what-if of an analysis rebuilt from its facts graph (document first) and settings, as `load` makes it: an
   * analysis that crossed from a worker thread arrives without the function.
   */
  whatIf(files: readonly ConfigFacts[], host: LoaderHost, settings: ShardLensSettings): ((overrides: FactOverrides) => Plan | undefined) | undefined;
  /** Closed-form step time, with the collectives of the step (per rank, per stage). */
  stepTime(plan: Plan): AnalysisStepTime | undefined;
  simulate(plan: Plan): AnalysisSimulation;
}

/** File URI of an absolute path (paths from the loader). */
function uriOf(path: string): string {
  return path.startsWith('file:') ? path : `file://${path.split('/').map(encodeURIComponent).join('/')}`;
}

export const realCore: CoreApi = {
  detectFormat: (uri, text, host) => (host ? detectWithHost(uri, text, host) : detectFormat(uri, text)) ?? null,
  load(uri, host, settings, symbol) {
    const ctx = { settings: resolveSettings(settings), lookupModel: modelLookup(host) };
    const g = loadConfigGraph(uri, host, ctx, symbol);
    return {
      files: [g.primary, ...g.related], referenced: g.dependencies.map(uriOf), plan: g.resolved.plan,
      problems: g.resolved.problems, assumptions: g.resolved.assumptions,
      whatIf: (overrides) => resolvePlan(g.primary, g.related, ctx, overrides).plan,
    };
  },
  whatIf(files, host, settings) {
    const [primary, ...related] = files;
    if (!primary) return undefined;
    const ctx = { settings: resolveSettings(settings), lookupModel: modelLookup(host) };
    return (overrides) => resolvePlan(primary, related, ctx, overrides).plan;
  },
  configFunctions(uri, text) {
    if (!/\.py$/i.test(uri)) return [];
    const li = new LineIndex(text);
    return torchtitanConfigFunctions(text).map((f) => ({ name: f.name, range: { start: li.position(f.at.start), end: li.position(f.at.end) } }));
  },
  launchedConfiguration: (uri, names, host) => launchedConfiguration(toPath(uri), names, host),
  estimateMemory,
  stepTime: estimateStepTime,
  simulate(plan) {
    const sim = simulateStep(plan);
    return sim.ok ? { ok: true, result: sim } : { ok: false, problems: sim.problems };
  },
};

/** The core the server uses. */
export function core(): CoreApi {
  return realCore;
}

/** One-time asynchronous set-up of the format readers (the tree-sitter bash grammar). */
export async function initCore(): Promise<void> {
  await initFormats();
}
