/**
 * Types of a local validation run: the options, the report the runner returns, and the messages between the caller,
 * the runner process and the rank workers. Plain data only, so every message can cross a process or thread boundary.
 */
import type { ModelSpec, Plan } from '../shared/plan/types';

/** Sharding modes the runner trains with; each maps to a ZeRO stage. */
export type ValidationMode = 'ddp' | 'zero1' | 'zero2' | 'zero3';
export const VALIDATION_MODES: readonly ValidationMode[] = ['ddp', 'zero1', 'zero2', 'zero3'];
/** ZeRO stage of each mode (DDP is stage 0, replicated). */
export const MODE_STAGE: Readonly<Record<ValidationMode, 0 | 1 | 2 | 3>> = { ddp: 0, zero1: 1, zero2: 2, zero3: 3 };
export const MODE_LABEL: Readonly<Record<ValidationMode, string>> = {
  ddp: 'DDP (replicated)', zero1: 'ZeRO-1', zero2: 'ZeRO-2', zero3: 'ZeRO-3',
};

/** TensorFlow.js backends in order of preference. */
export type BackendName = 'tensorflow-gpu' | 'tensorflow' | 'wasm' | 'cpu';
export const BACKEND_ORDER: readonly BackendName[] = ['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'];

/** Result of probing one backend in a short-lived child process. */
export interface BackendProbe {
  readonly name: BackendName;
  readonly ok: boolean;
  /** Why it is usable or not, in words (e.g. "not installed: optional dependency @tensorflow/tfjs-node-gpu absent"). */
  readonly reason: string;
  /** Extra facts, e.g. SIMD support of wasm. */
  readonly detail?: string;
}

/** Overrides of the scaled-down model (tests use tiny models; the default aims at about 0.5 M parameters). */
export interface ScaleOverrides {
  readonly hiddenSize?: number;
  readonly layers?: number;
  readonly heads?: number;
  readonly vocabSize?: number;
  readonly seqLen?: number;
  readonly microBatch?: number;
}

/** How the model of the config was scaled down for the local run. */
export interface Scaling {
  /** Each dimension: the config's value and the value trained here. */
  readonly layers: { readonly config: number; readonly run: number };
  readonly hiddenSize: { readonly config: number; readonly run: number };
  readonly heads: { readonly config: number; readonly run: number };
  readonly kvHeads: { readonly config: number; readonly run: number };
  readonly ffnSize: { readonly config: number; readonly run: number };
  readonly vocabSize: { readonly config: number; readonly run: number };
  readonly seqLen: { readonly config: number; readonly run: number };
  readonly microBatch: { readonly config: number; readonly run: number };
  /** Family traits kept from the config, as sentences. */
  readonly kept: readonly string[];
  /** Traits not reproduced, as sentences. */
  readonly dropped: readonly string[];
  /** One-line summary, e.g. "Llama-3-8B scaled to 2 layers × 128 hidden (4 heads, 1 KV head) …". */
  readonly summary: string;
}

export interface RunValidationOptions {
  /** The resolved plan of the config. */
  readonly plan: Plan;
  /** Data-parallel ranks (worker threads); default 4. */
  readonly ranks?: number;
  readonly modes?: readonly ValidationMode[];
  /** Optimizer steps per mode; default 5. */
  readonly steps?: number;
  /** 'auto' picks the first backend whose probe succeeds. */
  readonly backend?: 'auto' | BackendName;
  readonly scale?: ScaleOverrides;
  /** Seed of the initialisation and data. */
  readonly seed?: number;
  readonly onProgress?: (p: ValidationProgress) => void;
  readonly signal?: AbortSignal;
  /** Folder holding validation-runner.js (default: the bundle's folder, or ./dist). */
  readonly distDir?: string;
  /** Called with the runner's process id once it is started (its process group id too, outside Windows). */
  readonly onSpawn?: (pid: number) => void;
  /** How long the rank threads may take to start their backend, ms (default 120 000): a rank that never starts is an error, not a wait. */
  readonly readyTimeoutMs?: number;
}

export interface ValidationProgress {
  /** 0..1 over all modes and steps. */
  readonly fraction: number;
  readonly message: string;
  readonly mode?: ValidationMode;
  readonly step?: number;
}

/** Bytes sent and received by one rank in one kind of collective, and how many calls. */
export interface CollectiveBytes {
  readonly sentBytes: number;
  readonly receivedBytes: number;
  readonly calls: number;
}

/** What one rank measured. Tensor bytes come from tf.memory() deltas; traffic is counted at the sender. */
export interface MeasuredRank {
  readonly parametersBytes: number;
  readonly gradientsBytes: number;
  readonly optimizerStatesBytes: number;
  /** Bytes sent per optimizer step (all collectives). */
  readonly sentBytes: number;
  readonly receivedBytes: number;
  /** Per collective kind and phase, e.g. "all-gather (forward)", per optimizer step. */
  readonly collectives: Readonly<Record<string, CollectiveBytes>>;
  /** "tfjs tape peak": tf.profile() peakBytes of the last step (all live tensors). */
  readonly tapePeakBytes: number;
  /** Tape peak minus the tensors alive between steps (model states and constants). */
  readonly tapeActivationBytes: number;
  /** Constant tensors (causal mask, rotary tables) counted by tf.memory() but not model states. */
  readonly constantsBytes: number;
  /** Largest Float32Array a collective used on this rank (JavaScript memory, outside tf.memory()). */
  readonly jsCommBufferBytes: number;
  /** Median wall time of a step, ms. */
  readonly stepTimeMs: number;
  /** Local loss of each step. */
  readonly losses: readonly number[];
  readonly loss: number;
  /** Tensor bytes leaked by a step (0 when the step frees what it allocates). */
  readonly leakedBytes: number;
}

/** What the core estimates for the same rank. */
export interface EstimatedRank {
  readonly parametersBytes: number;
  readonly gradientsBytes: number;
  readonly optimizerStatesBytes: number;
  readonly sentBytes: number;
  /** Core activation estimate of the scaled model (fp32), for the ratio with the tape peak. */
  readonly activationBytes: number | null;
  /** Bytes sent per step by collective kind ("all-reduce", "reduce-scatter", "all-gather"); measured labels start with the kind. */
  readonly collectives: Readonly<Record<string, number>>;
}

/** A known difference between measurement and estimate, itemised (e.g. padding of shards to a multiple of N). */
export interface KnownExtra {
  readonly component: 'parametersBytes' | 'gradientsBytes' | 'optimizerStatesBytes' | 'sentBytes';
  readonly bytes: number;
  readonly reason: string;
}

export interface RankReport {
  readonly rank: number;
  readonly measured: MeasuredRank;
  readonly estimated: EstimatedRank;
  readonly extras: readonly KnownExtra[];
}

export interface ModeRun {
  readonly mode: ValidationMode;
  readonly label: string;
  readonly stage: 0 | 1 | 2 | 3;
  readonly ranks: readonly RankReport[];
  /** Mean loss over ranks per step. */
  readonly losses: readonly number[];
  /** ‖θ_mode − θ_ddp‖ / ‖θ_ddp‖ after the last step (null for DDP itself or without a DDP run). */
  readonly relativeL2VsReplicated: number | null;
  /** ‖θ_mode − θ_ddp‖ / ‖θ_ddp − θ_0‖: the difference relative to the update. */
  readonly relativeToUpdate: number | null;
  /** Ranks hold bitwise-identical full parameters. */
  readonly ranksIdentical: boolean;
}

export interface ValidationCheck {
  readonly id: string;
  readonly label: string;
  readonly mode?: ValidationMode;
  readonly rank?: number;
  /** null when skipped. */
  readonly passed: boolean | null;
  readonly measured: number;
  readonly expected: number;
  readonly detail: string;
}

export type ValidationStatus = 'ok' | 'failed-checks' | 'error' | 'cancelled' | 'refused';

export interface ValidationReport {
  readonly kind: 'shardlens-validation';
  readonly version: 1;
  readonly status: ValidationStatus;
  readonly error?: string;
  readonly backend: BackendName | null;
  /** Honest label, e.g. "measured tensor bytes on wasm (SIMD, 1 thread); GPU memory is estimated, not measured". */
  readonly backendLabel: string;
  /** Every backend probed, with the reason it was used or not. */
  readonly backends: readonly BackendProbe[];
  /** Ψ of the scaled model. */
  readonly parameters: number;
  readonly scaling: Scaling | null;
  readonly ranks: number;
  readonly steps: number;
  readonly modes: readonly ValidationMode[];
  readonly runs: readonly ModeRun[];
  readonly checks: readonly ValidationCheck[];
  /** Where the estimates came from (core functions, by name). */
  readonly estimateSources: readonly string[];
  readonly notes: readonly string[];
  readonly startedAt: string;
  readonly durationMs: number;
  /** Config file the run was made for (set by the caller). */
  readonly configPath?: string;
}

/** The scaled model and run shape every rank agrees on. */
export interface RunShape {
  readonly model: ModelSpec;
  readonly seqLen: number;
  readonly microBatch: number;
  readonly ranks: number;
  readonly seed: number;
  readonly learningRate: number;
}
