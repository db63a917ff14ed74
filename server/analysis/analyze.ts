/**
 * One document's analysis: parse → reference graph → resolve → memory, communication and step time. Pure apart from
 * the loader host; never throws (an internal failure becomes a problem on the document).
 */
import type { ConfigDiagnostic, ConfigFacts, FormatId } from '../../shared/plan/facts';
import type { MemoryEstimate } from '../../shared/plan/result';
import type { Plan, Problem, TextRange } from '../../shared/plan/types';
import type { AnalysisAssumption, AnalysisCollective, AnalysisStepTime, ShardLensSettings } from '../../shared/protocol';
import type { CoreApi, LoaderHost } from './core';
import { toPath, toUri } from './host';
import { mergeProblems } from '../../shared/plan/problems';
import type { FactOverrides } from '../../shared/plan/resolve';
import { MAX_CONFIG_CHARS, tooLarge } from '../../formats/index';

/** Everything features need about one document version. */
export interface DocumentAnalysis {
  readonly uri: string;
  readonly version: number | null;
  readonly text: string;
  readonly settings: ShardLensSettings;
  readonly format: FormatId | null;
  /** Facts of the document itself (ranges point into `text`). */
  readonly facts?: ConfigFacts;
  /** Facts of every file in the reference graph, root first. */
  readonly graph: readonly ConfigFacts[];
  /** URIs of the files this document references. */
  readonly referenced: readonly string[];
  readonly plan?: Plan;
  readonly memory?: MemoryEstimate;
  readonly collectives: readonly AnalysisCollective[];
  readonly stepTime?: AnalysisStepTime;
  readonly assumptions: readonly AnalysisAssumption[];
  /** Parser diagnostics of this document (with ranges). */
  readonly fileDiagnostics: readonly ConfigDiagnostic[];
  /** Problems from resolution and the estimates (mapped to ranges through `facts`). */
  readonly problems: readonly Problem[];
  /** The plan with some facts replaced, resolved again from the same files and settings (hovers, quick fixes). */
  readonly whatIf?: (overrides: FactOverrides) => Plan | undefined;
  /** In a module of configuration functions (torchtitan's Python configurations): the one this analysis is of. */
  readonly symbol?: string;
  /** Every configuration function of such a module, each analysed on its own (this one's analysis included). */
  readonly sections?: readonly ConfigSection[];
}

/** One configuration function of a module and its analysis (without what-ifs or sections of its own). */
export interface ConfigSection {
  readonly symbol: string;
  /** Where the function's name is written. */
  readonly range: TextRange;
  /**
   * Undefined for the analysed function (the document's analysis is its own) and past MAX_ESTIMATED_SECTIONS (listed,
   * not estimated, until it is chosen).
   */
  readonly analysis?: DocumentAnalysis;
}

/** Configuration functions of one module estimated on every analysis (the chosen one always is). */
export const MAX_ESTIMATED_SECTIONS = 12;

export interface AnalyzeInput {
  readonly uri: string;
  readonly version: number | null;
  readonly text: string;
  readonly settings: ShardLensSettings;
  /** The configuration function to analyse in a module of them (default: its first). */
  readonly symbol?: string;
}

function internal(where: string, e: unknown): Problem {
  const msg = e instanceof Error ? e.message : String(e);
  return { code: 'internal-error', severity: 'info', message: `ShardLens could not ${where}: ${msg}`, paths: [] };
}

/** Runs `f`, turning a throw into a problem so one broken stage never hides the others. */
function guard<T>(problems: Problem[], where: string, f: () => T): T | undefined {
  try {
    return f();
  } catch (e) {
    problems.push(internal(where, e));
    return undefined;
  }
}

function enabled(format: FormatId, settings: ShardLensSettings): boolean {
  const list = settings.formats.enabled;
  return list.length === 0 || list.includes(format);
}

/** The host with this document's text in place of whatever the host has for its URI. */
function overlay(host: LoaderHost, input: AnalyzeInput): LoaderHost {
  const path = toPath(input.uri);
  const self = (p: string) => p === input.uri || p === path || toUri(p) === input.uri;
  return {
    ...host,
    readFile: (p: string) => (self(p) ? input.text : host.readFile(p)),
    // The document exists even when it is not saved (or not on disk at all).
    exists: (p: string) => self(p) || (host.exists ? host.exists(p) : true),
  };
}

/** Analyses one document version. */
export function analyzeDocument(input: AnalyzeInput, host: LoaderHost, api: CoreApi): DocumentAnalysis {
  const problems: Problem[] = [];
  const base = {
    uri: input.uri, version: input.version, text: input.text, settings: input.settings,
    graph: [], referenced: [], collectives: [], assumptions: [], fileDiagnostics: [], problems,
  };
  if (input.text.length > MAX_CONFIG_CHARS) {
    // Parse cost grows with size: above the cap nothing is parsed, and the document says why it has no estimate.
    problems.push({ code: 'too-large', severity: 'warning', message: tooLarge(input.text.length), paths: [] });
    return { ...base, format: null };
  }
  const format = guard(problems, 'detect the format', () => api.detectFormat(input.uri, input.text, overlay(host, input))) ?? null;
  if (!format || !enabled(format, input.settings)) return { ...base, format: null };
  const symbols = api.configFunctions ? guard(problems, 'list the configurations', () => api.configFunctions?.(input.uri, input.text)) ?? [] : [];
  if (!symbols.length) return analyzeGraph(input, host, api, format, base, problems);
  // A module of configuration functions: the chosen one is the document's analysis, every one has its own section.
  // None chosen: the one a launch script runs, else the first.
  const asked = symbols.find((f) => f.name === input.symbol);
  const launched = asked ? undefined : guard(problems, 'find the launched configuration', () => api.launchedConfiguration?.(input.uri, symbols.map((f) => f.name), overlay(host, input)));
  const chosen = asked ?? symbols.find((f) => f.name === launched?.name) ?? symbols[0]!;
  if (launched && chosen.name === launched.name) problems.push(launched.problem);
  const main = analyzeGraph({ ...input, symbol: chosen.name }, host, api, format, base, problems);
  const sections = symbols.map((f, i): ConfigSection => {
    if (f === chosen) return { symbol: f.name, range: f.range };
    if (i >= MAX_ESTIMATED_SECTIONS) return { symbol: f.name, range: f.range };
    const own: Problem[] = [];
    const a = analyzeGraph({ ...input, symbol: f.name }, host, api, format, { ...base, problems: own }, own);
    return { symbol: f.name, range: f.range, analysis: bare(a) };
  });
  return { ...main, symbol: chosen.name, sections };
}

/**
 * An analysis that crossed from a worker thread, given back its what-if (a function does not cross: the worker sends
 * the analysis without it), rebuilt from its facts graph as `load` builds it.
 */
export function withWhatIf(a: DocumentAnalysis, host: LoaderHost, api: CoreApi): DocumentAnalysis {
  if (a.whatIf || !a.graph.length) return a;
  const whatIf = api.whatIf(a.graph, host, a.settings);
  return whatIf ? { ...a, whatIf } : a;
}

/** An analysis without its what-if function and sections (a section's own, as features read it). */
function bare(a: DocumentAnalysis): DocumentAnalysis {
  const { whatIf: _w, sections: _s, ...rest } = a;
  return rest;
}

type AnalysisBase = Pick<DocumentAnalysis, 'uri' | 'version' | 'text' | 'settings' | 'graph' | 'referenced' | 'collectives' | 'assumptions' | 'fileDiagnostics' | 'problems'>;

/** The analysis of one document (or one configuration function of it): its reference graph, plan and estimates. */
function analyzeGraph(input: AnalyzeInput, host: LoaderHost, api: CoreApi, format: FormatId, base: AnalysisBase, problems: Problem[]): DocumentAnalysis {
  const graph = guard(problems, 'read the file', () => api.load(input.uri, overlay(host, input), input.settings, input.symbol));
  const facts = graph?.files[0];
  if (!graph || !facts) return { ...base, format };
  problems.push(...graph.problems);
  const plan = graph.plan;
  const memory = plan ? guard(problems, 'estimate memory', () => api.estimateMemory(plan)) : undefined;
  if (memory) problems.push(...memory.problems);
  const stepTime = plan ? guard(problems, 'estimate step time', () => api.stepTime(plan)) : undefined;
  if (stepTime) problems.push(...stepTime.problems);
  const collectives = stepTime?.collectives ?? [];
  return {
    ...base, format, facts, graph: graph.files, referenced: graph.referenced, plan, memory, collectives, stepTime,
    assumptions: graph.assumptions, fileDiagnostics: facts.diagnostics, problems: mergeProblems(problems),
    ...(graph.whatIf ? { whatIf: graph.whatIf } : {}),
  };
}

