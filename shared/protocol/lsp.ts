/**
 * The LSP section of the protocol (server ↔ extension): every custom request and notification declared once as a
 * typed `RequestType`/`NotificationType` (vscode-eslint's `customMessages.ts` idiom), which the server registers and
 * the client sends. vscode-jsonrpc's common entry is pure (no Node or DOM), so shared/ may import it; the webview
 * imports `./webview` directly and never bundles this file.
 */
import { NotificationType, RequestType } from 'vscode-jsonrpc';
import type { FormatId } from '../plan/facts';
import type { MemoryEstimate } from '../plan/result';
import type { ResolvedInputs } from '../plan/inputs';
import type { Plan, Problem, TextRange } from '../plan/types';
import type { Collective } from '../comm/types';
import type { StepTimeEstimate } from '../time/types';
import type { Simulation } from '../sim/types';
import type { Layout, PlanResult } from '../planner/types';
import type { PlanPath } from '../plan/paths';
import type { ServerCommand, SettingId } from './commands';

/** An input ShardLens assumed because no file or setting gave it; the user should confirm or change it. */
export interface AnalysisAssumption {
  /** Dotted plan path, e.g. "cluster.gpu" or "cluster.worldSize". */
  readonly path: PlanPath;
  /** Short text, e.g. "8×H100-SXM". */
  readonly value: string;
  /** Why it was assumed, e.g. "no world size in the file or settings". */
  readonly detail: string;
  /** The setting that replaces it, e.g. "shardlens.worldSize". */
  readonly setting?: SettingId;
  /** The command that changes it, e.g. "shardlens.selectCluster". */
  readonly command?: ServerCommand;
  /** How to set it: a picker command or edits that write the key into the file (filled in `shardlens/analysis`). */
  readonly fix?: AssumptionFix;
}

/** The fix of one assumed input: run `command` with the document URI, or apply `edits` to the document. */
export interface AssumptionFix {
  readonly title: string;
  readonly command?: string;
  readonly edits?: readonly LayoutTextEdit[];
}

/** One collective of a step, per rank (the core's type: bytesPerRank is already × countPerStep). */
export type AnalysisCollective = Collective;

/** The closed-form step time (the core's type: stepSeconds, bubbleFraction, mfu, tokensPerSecond, terms, …). */
export type AnalysisStepTime = StepTimeEstimate;

/** The step simulation (the core's Simulation), or the problems that stopped it (no timeline then). */
export type AnalysisSimulation =
  | { readonly ok: true; readonly result: Simulation }
  | { readonly ok: false; readonly problems: readonly Problem[] };

/** Params of `shardlens/analysis` and `shardlens/simulate`. */
export interface AnalysisParams {
  /** Document URI as the client knows it. */
  readonly uri: string;
}

/** The fit verdict in words (shared/wording/verdict.ts), computed once by the server for every surface. */
export interface VerdictText {
  /** The full line, e.g. "needs ~164 GiB/GPU of 79.6 GiB if micro batch 8 (assumed) — set it". */
  readonly headline: string;
  /** The one-line form for lenses and the status bar (more than two assumptions counted, not listed). */
  readonly short: string;
  /** True when the verdict rests on assumed inputs or a missing referenced file. */
  readonly conditional: boolean;
}

/** The full traceable estimate of one document. */
export interface AnalysisResult {
  readonly uri: string;
  /** Document version the result was computed from (null for files read from disk). */
  readonly version: number | null;
  readonly format: FormatId | null;
  /** In a module of configuration functions (torchtitan's Python configurations): the function analysed. */
  readonly symbol?: string;
  /** Absent when the file does not say enough to build a plan; `problems` says why. */
  readonly plan?: Plan;
  /** What the estimate read: training, model and cluster inputs, each with its source as the hover shows it. */
  readonly inputs?: ResolvedInputs;
  readonly memory?: MemoryEstimate;
  /** Replicated (plain data parallel) baseline; the same as `memory.replicated`, repeated for convenience. */
  readonly replicated?: MemoryEstimate['replicated'];
  readonly collectives: readonly AnalysisCollective[];
  readonly stepTime?: AnalysisStepTime;
  /** The verdict in words; absent without a memory estimate. */
  readonly verdict?: VerdictText;
  readonly assumptions: readonly AnalysisAssumption[];
  readonly problems: readonly (Problem & { readonly range?: TextRange })[];
}

/** Params of `shardlens/planLayouts`. */
export interface PlanLayoutsParams {
  readonly uri: string;
  /** Layouts to return (default 5, at most 20). */
  readonly topK?: number;
}

/** One text edit in LSP shape (zero-based lines and UTF-16 characters). */
export interface LayoutTextEdit {
  readonly range: TextRange;
  readonly newText: string;
}

/** One planner layout with what applying it to the document does. */
export interface PlannedLayout {
  readonly layout: Layout;
  /** Short label, e.g. "TP 2 · PP 1 · DP 4 · ZeRO-1 · micro 2×8 · recompute selective". */
  readonly summary: string;
  /** Edits that write the layout into the document; empty when the format cannot hold it. */
  readonly edits: readonly LayoutTextEdit[];
  /** Costs and settings that change, e.g. "peak 71.2 → 54.3 GiB, step 9.8 → 7.1 s; TP 1 → 8". */
  readonly delta: string;
  /** What the file cannot hold and where to set it instead. */
  readonly notes: readonly string[];
  /**
   * Why the edits cannot deliver the promised figures (a key the figures rest on cannot be written, e.g. it is "auto"),
   * when they cannot: then `edits` is empty and Apply refuses with this sentence.
   */
  readonly refusal?: string;
}

/** Result of `shardlens/planLayouts`: the search and the top layouts, best first, with their edits. */
export interface PlanLayoutsResult {
  readonly uri: string;
  readonly version: number | null;
  readonly format: FormatId | null;
  /** True when ShardLens can rewrite this format. */
  readonly canApply: boolean;
  /** Absent when the file does not resolve to a plan; `problems` says why. */
  readonly result?: PlanResult;
  readonly layouts: readonly PlannedLayout[];
  readonly problems: readonly Problem[];
}

/** Params of `shardlens/ready`. */
export interface ReadyParams {
  readonly version: string;
  readonly protocolVersion: number;
}

/** Params of `shardlens/analysisChanged`: a summary for the status bar; fetch the rest with `shardlens/analysis`. */
export interface AnalysisChangedParams {
  readonly uri: string;
  readonly version: number | null;
  readonly fits: boolean | null;
  /** Peak reserved bytes per GPU over stages; null when unknown. */
  readonly peakBytes: number | null;
  readonly gpuMemoryBytes: number | null;
  readonly gpuName: string | null;
  readonly stepSeconds: number | null;
  /** The verdict in words, null when unknown. */
  readonly verdict: VerdictText | null;
  /** True for a script that runs no training command (data preprocessing, conversion): nothing to estimate. */
  readonly noTraining?: boolean;
}

/** Whether an analysis is of a script that trains nothing: no plan, and the reader's `no-training-command` info. */
export function trainsNothing(plan: unknown, problems: readonly { readonly code: string }[]): boolean {
  return !plan && problems.some((p) => p.code === 'no-training-command');
}

/**
 * Notification server → client after `initialized`, once the server can answer requests.
 * @since 0.1.0
 */
export const ReadyNotification = new NotificationType<ReadyParams>('shardlens/ready');

/**
 * Request client → server: the full analysis of a document, without the step simulation (ask `SimulateRequest`).
 * Null when the document is not a training config.
 * @since 0.1.0
 */
export const AnalysisRequest = new RequestType<AnalysisParams, AnalysisResult | null, void>('shardlens/analysis');

/**
 * Request client → server: the step simulation of a document, fetched only when a view shows it.
 * @since 0.1.0
 */
export const SimulateRequest = new RequestType<AnalysisParams, AnalysisSimulation | null, void>('shardlens/simulate');

/**
 * Notification server → client when a document's analysis changed: the status bar summary.
 * @since 0.1.0
 */
export const AnalysisChangedNotification = new NotificationType<AnalysisChangedParams>('shardlens/analysisChanged');

/**
 * Request client → server: the planner's best layouts for a document and the edits that write each one.
 * @since 0.1.0
 */
export const PlanLayoutsRequest = new RequestType<PlanLayoutsParams, PlanLayoutsResult | null, void>('shardlens/planLayouts');

/** Which configuration function of a module of them (torchtitan's Python configurations) to analyse. */
export interface SelectConfigurationParams {
  readonly uri: string;
  /** The function's name; the module's first configuration when it has no such function any more. */
  readonly symbol: string;
}

/** A configuration function's name as a selection (or the CLI's --config) carries it: a Python identifier, ≤ 200 characters. */
export function isConfigurationName(x: unknown): x is string {
  return typeof x === 'string' && /^[A-Za-z_]\w{0,199}$/.test(x);
}

/**
 * The arguments of the server's `shardlens.selectConfiguration` command as its code lens carries them, `[document URI,
 * function name]`, or undefined for anything else (the command may be run by any client with any arguments).
 */
export function configurationSelection(args: readonly unknown[] | undefined): SelectConfigurationParams | undefined {
  const [uri, symbol] = Array.isArray(args) ? args : [];
  if (typeof uri !== 'string' || uri.length > 4096 || !/^[a-z][a-z0-9+.-]*:/i.test(uri)) return undefined;
  return isConfigurationName(symbol) ? { uri, symbol } : undefined;
}

/** The method names of the messages above (for raw JSON-RPC clients such as the Neovim test and the server tests). */
export const LspMethods = {
  ready: ReadyNotification.method,
  analysis: AnalysisRequest.method,
  simulate: SimulateRequest.method,
  analysisChanged: AnalysisChangedNotification.method,
  planLayouts: PlanLayoutsRequest.method,
} as const;

