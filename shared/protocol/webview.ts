/**
 * The webview section of the protocol (extension ↔ dashboards). The extension turns the server's analysis into a
 * `DashboardModel`: what it derives (the sharding variants, the data-parallel sweep) in plain numbers, and what the
 * server computed (collectives, the simulation, assumptions) in the core's own types, neither renamed nor re-parsed.
 * Type guards for every message live in webview/protocol/guards.ts. Type-only imports: this file bundles no code.
 */
import type { Collective } from '../comm/types';
import type { Problem } from '../plan/types';
import type { Simulation } from '../sim/types';
import type { AnalysisAssumption, VerdictText } from './lsp';

/** Version of the webview message schema; a webview ignores messages of another version. @since 0.1.0 */
export const WEBVIEW_PROTOCOL_VERSION = 1;

/** The dashboards a webview can show. */
export type DashboardView = 'memory' | 'communication' | 'simulation' | 'validation' | 'layouts';
export const DASHBOARD_VIEWS: readonly DashboardView[] = ['memory', 'communication', 'simulation', 'validation', 'layouts'];

/** Components of a memory bar, in stacking order (bottom first). */
export type MemoryComponent =
  | 'parameters' | 'gradients' | 'optimizer' | 'activations' | 'logits' | 'buffers' | 'overhead';
export const MEMORY_COMPONENTS: readonly MemoryComponent[] = [
  'parameters', 'gradients', 'optimizer', 'activations', 'logits', 'buffers', 'overhead',
];

/** Bytes per component of one rank of one pipeline stage. */
export interface StageBar {
  /** Zero-based pipeline stage. */
  readonly stage: number;
  /** Bytes per memory component (missing = 0). */
  readonly bytes: Readonly<Partial<Record<MemoryComponent, number>>>;
  /** Peak bytes allocated by tensors (the CLI's `stages[].peakAllocatedBytes`). */
  readonly peakAllocatedBytes: number;
  /** Peak bytes reserved from the device (allocated + fragmentation). */
  readonly peakReservedBytes: number;
}

/** One sharding variant of the current file (replicated DP, ZeRO-1/2/3, FSDP, HSDP, or the file as written). */
export interface MemoryVariant {
  /** Stable id, e.g. "current", "replicated", "zero1", "zero2", "zero3", "fsdp-full", "hsdp". */
  readonly id: string;
  /** Label for the chart axis, e.g. "ZeRO-2". */
  readonly label: string;
  /** True for the variant the file configures. */
  readonly current: boolean;
  readonly stages: readonly StageBar[];
}

/** Per-GPU model-state bytes over data-parallel sizes (the ZeRO paper's Table 1 picture). */
export interface DpSweep {
  readonly dpSizes: readonly number[];
  /** One series per variant: bytes per GPU at each dp size (same order as dpSizes). */
  readonly series: readonly { readonly label: string; readonly bytes: readonly number[] }[];
}

/** How the peak stage's memory is computed: each term with its formula and source, then every symbol once. */
export interface DerivationView {
  readonly stage: number;
  readonly terms: readonly { readonly label: string; readonly bytes: number; readonly formula: string; readonly citation: string }[];
  readonly symbols: readonly { readonly symbol: string; readonly meaning: string; readonly value?: string; readonly source?: string }[];
}

/** Everything the dashboards draw for one config file. All figures are finite and non-negative. */
export interface DashboardModel {
  readonly uri: string;
  /** File name for titles. */
  readonly fileName: string;
  readonly format: string;
  /** GPU name, count and memory the estimate is for. */
  readonly cluster: { readonly gpuName: string; readonly gpuMemoryBytes: number; readonly gpusPerNode: number; readonly nodes: number };
  readonly modelName: string;
  readonly parameters: number;
  readonly fits: boolean;
  /** The verdict as every surface words it (conditional when it rests on assumed inputs or a missing file). */
  readonly verdict: VerdictText;
  /** Highest peak reserved bytes over the stages (what must fit in GPU memory). */
  readonly peakReservedBytes: number;
  /** Peak allocated bytes of the same stage (tensors only, without the caching allocator's cached blocks). */
  readonly peakAllocatedBytes: number;
  readonly peakStage: number;
  /** Units for labels: binary (GiB) or decimal (GB). */
  readonly units: 'GiB' | 'GB';
  readonly variants: readonly MemoryVariant[];
  readonly sweep?: DpSweep;
  /** The step's collectives per rank, as the core lists them (the Communication tab draws them as they are). */
  readonly communication: readonly Collective[];
  /** Step time in seconds, when known. */
  readonly stepSeconds?: number;
  /** The run's length when the file plans its steps (shared/wording/runLength.ts): steps, wall-clock seconds, GPUs, GPU-hours. */
  readonly run?: { readonly steps: number; readonly seconds: number; readonly gpus: number; readonly gpuHours: number };
  /** Inputs the estimate assumed because no file or setting gave them. */
  readonly assumptions: readonly AnalysisAssumption[];
  /** The derivation of the peak stage (the hovers' "More" link opens it). */
  readonly derivation?: DerivationView;
  readonly problems: readonly Pick<Problem, 'severity' | 'message'>[];
}

/** Measured vs estimated bytes of one rank in one validation run (the runner's and probe's JSON, normalised). */
export interface ValidationRankView {
  readonly rank: number;
  readonly measured: Readonly<Record<string, number>>;
  readonly estimated: Readonly<Record<string, number>>;
}

/** A finished validation run (tfjs runner or torchrun probe). */
export interface ValidationRunView {
  /** Sharding mode, e.g. "ddp", "zero1", "fsdp-full". */
  readonly mode: string;
  readonly ranks: readonly ValidationRankView[];
  /** Label for charts, e.g. "ZeRO-2" (tfjs runner). */
  readonly label?: string;
  /** ‖θ_mode − θ_replicated‖/‖θ_replicated‖ after the run (tfjs runner; absent for the replicated run). */
  readonly relativeL2?: number;
  /** Mean loss over ranks per step (tfjs runner). */
  readonly losses?: readonly number[];
  /** Bytes sent per rank per step by collective, measured (rank 0) and by the core's formula (tfjs runner). */
  readonly collectives?: readonly { readonly label: string; readonly measured: number; readonly estimated: number }[];
}

/** One check of a validation run as the dashboard lists it; `passed` null = shown, not checked. */
export interface ValidationCheckView {
  readonly label: string;
  readonly passed: boolean | null;
  readonly detail: string;
}

/** Results of one validation launch. */
/** One category of the fake-tensor oracle beside the estimate (validation/torch/oracleCompare.ts). */
export interface OracleRowView {
  readonly category: string;
  /** torch's peak of the category (bytes). */
  readonly oracle: number;
  /** ShardLens's estimate of the same (bytes). */
  readonly estimate: number;
  /** estimate / oracle − 1 (may be negative). */
  readonly relError: number;
  readonly ok: boolean;
}

/** "Exact memory on this machine": torch's peaks per category and pipeline stage beside the estimate. */
export interface OracleResultView {
  /** e.g. "torch 2.13.0+cpu". */
  readonly torch: string;
  readonly model: string;
  /** The model implementation and precision regime the oracle reproduced, e.g. "torchtitan model, fsdp2 precision". */
  readonly reproduced: string;
  /** Layers built (the estimate is of the same depth). */
  readonly layers: number;
  readonly notes: readonly string[];
  readonly stages: readonly { readonly label: string; readonly ok: boolean; readonly rows: readonly OracleRowView[] }[];
  readonly ok: boolean;
}

export interface ValidationResultView {
  /** "tfjs" runner, "torch" probe, or the fake-tensor "oracle". */
  readonly source: 'tfjs' | 'torch' | 'oracle';
  /** The oracle's figures (source "oracle"). */
  readonly oracle?: OracleResultView;
  /** Backend label as the runner states it, e.g. "wasm (measured tensor bytes; GPU memory is estimated)". */
  readonly backend: string;
  readonly parameters: number;
  readonly runs: readonly ValidationRunView[];
  /** Where the JSON report was saved, if it was. */
  readonly reportPath?: string;
  /** tfjs runner: why each backend was or was not used. */
  readonly backends?: readonly { readonly name: string; readonly ok: boolean; readonly reason: string }[];
  /** tfjs runner: how the config's model was scaled down, in one sentence. */
  readonly scaling?: string;
  /** tfjs runner: layers of the scaled model the run trained. */
  readonly scaledLayers?: number;
  /** tfjs runner: the checks (model states exact, traffic = formulas, ranks identical, sharded vs replicated). */
  readonly checks?: readonly ValidationCheckView[];
  /** tfjs runner: "ok", "failed-checks", "error", "cancelled" or "refused". */
  readonly status?: string;
  /** When the run started (ISO 8601), to tell saved reports apart. */
  readonly startedAt?: string;
  /** An earlier saved report of the same config, for comparison. */
  readonly previous?: { readonly startedAt: string; readonly reportPath: string; readonly runs: readonly ValidationRunView[] };
  /** The config file (URI) the run was for: after a reload the results stay with that file. */
  readonly configUri?: string;
}

/** One planner layout as the Layouts dashboard shows it (figures finite and non-negative). */
export interface LayoutRowView {
  /** Rank in the planner's result (0 = fastest); the Apply button sends it back. */
  readonly index: number;
  readonly tp: number;
  readonly pp: number;
  readonly vpp: number;
  readonly cp: number;
  readonly ep: number;
  readonly dp: number;
  /** E.g. "ZeRO-2", "FSDP FULL_SHARD", "dist-opt". */
  readonly sharding: string;
  readonly microBatch: number;
  readonly gradAccum: number;
  readonly recompute: string;
  readonly offload: string;
  readonly stepSeconds: number;
  /** Peak reserved bytes per GPU. */
  readonly peakBytes: number;
  /** What applying it changes, e.g. "peak 71.2 → 54.3 GiB, step 9.8 → 7.1 s; TP 1 → 8". */
  readonly delta: string;
  readonly notes: readonly string[];
  /** True when the file can take this layout (a rewriter exists, it writes every key the figures rest on, and it changes the file). */
  readonly applicable: boolean;
  /** Why the layout cannot be written into the file (e.g. a key is "auto" there), when it cannot. */
  readonly refusal?: string;
}

/** The planner's answer for the dashboards' file: the top layouts and the Pareto front (memory vs step time). */
export interface LayoutsView {
  readonly uri: string;
  readonly gpus: number;
  /** Peak bytes a layout may reach to fit (GPU memory × the safety margin). */
  readonly memoryLimitBytes: number;
  /** Layouts the search evaluated and how long it took. */
  readonly evaluated: number;
  readonly seconds: number;
  readonly rows: readonly LayoutRowView[];
  /** Fitting layouts no other beats in both peak and step time, by ascending peak. */
  readonly pareto: readonly { readonly label: string; readonly stepSeconds: number; readonly peakBytes: number }[];
  /** Why there are no rows, or what the file cannot hold. */
  readonly message?: string;
}

/** Extension → webview: the dashboard model of the active config file. */
export interface ModelMessage { readonly v: 1; readonly type: 'model'; readonly model: DashboardModel }
/** Extension → webview: no model (no supported file open, or the analysis failed). */
export interface EmptyMessage { readonly v: 1; readonly type: 'empty'; readonly reason: string }
/** Extension → webview: show one dashboard (panel only). */
export interface ShowMessage { readonly v: 1; readonly type: 'show'; readonly view: DashboardView }
/** Extension → webview: validation progress (fraction 0..1) or state change. */
export interface ValidationProgressMessage {
  readonly v: 1; readonly type: 'validationProgress';
  readonly state: 'running' | 'done' | 'failed' | 'cancelled';
  readonly fraction: number;
  readonly message: string;
}
/** Extension → webview: validation results. */
export interface ValidationResultMessage { readonly v: 1; readonly type: 'validationResult'; readonly result: ValidationResultView }

/** Extension → webview: the planner's layouts for the dashboards' file (answer to `planLayouts`). */
export interface LayoutsMessage { readonly v: 1; readonly type: 'layouts'; readonly layouts: LayoutsView }

/** The step simulation as the server returns it (`shardlens/simulate`), or why there is none. */
export type SimulationAnswer =
  | { readonly ok: true; readonly result: Simulation }
  | { readonly ok: false; readonly message: string };

/** Extension → webview: the step simulation of `uri` (answer to `simulate`). */
export interface SimulationMessage { readonly v: 1; readonly type: 'simulation'; readonly uri: string; readonly simulation: SimulationAnswer }

/** Extension → webview: what the page may offer (runs launch processes only in a trusted workspace). */
export interface EnvironmentMessage { readonly v: 1; readonly type: 'environment'; readonly trusted: boolean }

/** Extension → webview: a request the page made got no usable answer (it shows the reason and a retry). */
export interface FailedMessage { readonly v: 1; readonly type: 'failed'; readonly what: 'model' | 'layouts' | 'simulation'; readonly reason: string }

export type HostToWebviewMessage =
  | ModelMessage | EmptyMessage | ShowMessage | ValidationProgressMessage | ValidationResultMessage | LayoutsMessage
  | SimulationMessage | EnvironmentMessage | FailedMessage;

/** Webview → extension: the page loaded and wants the current model. */
export interface ReadyMessage { readonly v: 1; readonly type: 'ready'; readonly view: DashboardView | 'all' }
/** Webview → extension: the user pressed a button that runs a ShardLens command. */
export interface CommandMessage {
  readonly v: 1; readonly type: 'command';
  readonly command: 'simulateStep' | 'runValidation' | 'cancelValidation' | 'runProbe' | 'runOracle' | 'selectCluster' | 'selectModel' | 'openDashboard';
}

/** Webview → extension: the Layouts dashboard is shown and wants the planner's layouts for the current file. */
export interface PlanLayoutsMessage { readonly v: 1; readonly type: 'planLayouts' }
/** Webview → extension: apply the layout of rank `index` to the file `uri` (after the user confirms the delta). */
export interface ApplyLayoutMessage { readonly v: 1; readonly type: 'applyLayout'; readonly uri: string; readonly index: number }
/** Webview → extension: the Simulate Step view is shown and wants the simulation of the current file. */
export interface SimulateMessage { readonly v: 1; readonly type: 'simulate' }

export type WebviewToHostMessage = ReadyMessage | CommandMessage | PlanLayoutsMessage | ApplyLayoutMessage | SimulateMessage;
export const WEBVIEW_COMMANDS: readonly CommandMessage['command'][] = [
  'simulateStep', 'runValidation', 'cancelValidation', 'runProbe', 'runOracle', 'selectCluster', 'selectModel', 'openDashboard',
];
