/**
 * Types of the torchrun probe: the plan exported to Python, the report it writes (schemas/probe-report.schema.json),
 * failures, comparisons with the estimate and the per-cluster calibration. Plain data only.
 */
import type { ModelSpec, OptimizerKind, Precision } from '../../shared/plan/types';

/** Wrapping modes of the probe (probe/wrap.py MODES). */
export type ProbeMode =
  | 'ddp' | 'zero1' | 'fsdp-full-shard' | 'fsdp-shard-grad-op' | 'fsdp-no-shard' | 'fsdp-hybrid-shard' | 'deepspeed';
export const PROBE_MODES: readonly ProbeMode[] = [
  'ddp', 'zero1', 'fsdp-full-shard', 'fsdp-shard-grad-op', 'fsdp-no-shard', 'fsdp-hybrid-shard', 'deepspeed',
];

/**
 * The model the probe builds (a dense GPT-style decoder; see probe/gpt_model.py): the dense part of ModelSpec, with
 * `vocabSize` the rows allocated (Megatron padding already applied).
 */
export type ProbeModel = Pick<ModelSpec, 'name' | 'layers' | 'hiddenSize' | 'heads' | 'kvHeads' | 'headDim' | 'ffnSize' | 'gatedMlp' | 'attnBias'
  | 'mlpBias' | 'tiedEmbeddings' | 'positions' | 'maxPositions' | 'norm' | 'qkNorm' | 'vocabSize'>;

/** How the plan's model was scaled for the probe (absent dimensions were kept). */
export interface ProbeScaling {
  readonly scaled: boolean;
  /** The plan's dimensions before scaling. */
  readonly original: { readonly layers: number; readonly hiddenSize: number; readonly parameters: number };
  readonly parameters: number;
  /** One sentence that states what was changed, shown next to every result. */
  readonly note: string;
}

/** The JSON file the probe reads (`--plan`). */
export interface ProbePlan {
  readonly kind: 'shardlens-probe-plan';
  readonly schemaVersion: 1;
  readonly name: string;
  readonly model: ProbeModel;
  readonly scaling: ProbeScaling;
  readonly training: {
    readonly microBatch: number;
    readonly seqLen: number;
    readonly precision: Precision;
    readonly optimizer: OptimizerKind;
  };
  readonly parallel: {
    readonly dp: number;
    readonly tp: number;
    readonly pp: number;
    readonly cp: number;
    readonly ep: number;
    readonly mode: ProbeMode;
    /** ZeRO stage the mode shards to (DeepSpeed: the JSON's stage). */
    readonly zeroStage: 0 | 1 | 2 | 3;
    readonly bucketCapMb: number;
    readonly gradientAsBucketView: boolean;
  };
  readonly steps: number;
  /** 'cpu' forces gloo on CPU even where CUDA exists. */
  readonly device: 'auto' | 'cpu';
  /** The user's DeepSpeed JSON, for mode 'deepspeed'. */
  readonly deepspeedConfig?: Readonly<Record<string, unknown>>;
}

/** Calls, unsharded payload and ring-estimated bytes sent of one collective, per step. */
export interface CollectiveCount {
  readonly calls: number;
  readonly payloadBytes: number;
  readonly wireBytesSent: number;
}

export interface ProbeRankError { readonly code: string; readonly message: string }

/** What one rank measured. Memory fields are absent when the rank failed. */
export interface ProbeRankReport {
  readonly rank: number;
  readonly ok: boolean;
  readonly host: string;
  readonly parametersBytes?: number;
  readonly gradientsBytes?: number;
  readonly optimizerStatesBytes?: number;
  readonly modelStatesBytes?: number;
  /** DDP buckets that are not shared with gradients. */
  readonly commBuffersBytes?: number;
  /** Payload bytes of every counted collective per step (steps ≥ 1). */
  readonly commBytesPerStep?: number;
  readonly commWireBytesPerStep?: number;
  readonly collectives?: Readonly<Record<string, CollectiveCount>>;
  readonly peakAllocatedBytes?: number;
  readonly peakAllocatedSource?: 'cuda' | 'cpu-profiler' | 'tensor-accounting';
  readonly peakReservedBytes?: number | null;
  readonly allocatedAtStepStartBytes?: number;
  readonly stepSeconds?: number;
  readonly stepSecondsAll?: readonly number[];
  readonly loss?: number;
  readonly peakRssBytes: number;
  /** FSDP: parameters of the root unit (everything outside the decoder blocks). */
  readonly fsdpRootParameters?: number;
  readonly notes?: readonly string[];
  readonly error?: ProbeRankError;
  /** The estimate for this rank, attached by withEstimates (not written by the probe). */
  readonly estimated?: Readonly<Record<string, number>>;
}

/** The report rank 0 writes. */
export interface ProbeReport {
  readonly schemaVersion: 1;
  readonly kind: 'shardlens-probe-report';
  readonly ok: boolean;
  readonly engine: { readonly name: 'torch' | 'deepspeed'; readonly versions: Readonly<Record<string, string>> };
  readonly backend: 'gloo' | 'nccl';
  readonly device: string;
  readonly worldSize: number;
  readonly nnodes: number;
  readonly mode: ProbeMode;
  /** sdpa: fused attention (torch ≥ 2.0); eager: scores materialised. */
  readonly attention?: 'sdpa' | 'eager';
  /** Ψ of the model the probe built, or null when no rank built it. */
  readonly parameters: number | null;
  /** Elements of every distinct parameter tensor, in module order. */
  readonly parameterNumels?: readonly number[] | null;
  readonly steps: number;
  readonly measuredSteps: number;
  readonly plan: Pick<ProbePlan, 'name' | 'model' | 'training' | 'parallel' | 'scaling'>;
  readonly errors: readonly (ProbeRankError & { readonly rank: number })[];
  readonly ranks: readonly ProbeRankReport[];
  readonly createdAt: string;
}

export type ProbeFailureCode =
  | 'python-not-found' | 'torch-missing' | 'torch-too-old' | 'layout-mismatch' | 'unsupported-plan'
  | 'launch-failed' | 'cancelled' | 'timeout' | 'no-report' | 'invalid-report' | 'probe-failed' | 'too-many-ranks';

/** A run that produced no usable report, or a report whose ranks failed (then `report` is set). */
export interface ProbeFailure {
  readonly ok: false;
  readonly kind: 'shardlens-probe-failure';
  readonly code: ProbeFailureCode;
  readonly message: string;
  readonly report?: ProbeReport;
  /** Last lines of the launcher's output, for the log. */
  readonly outputTail?: string;
}

export type ProbeProgress =
  | { readonly phase: 'python'; readonly message: string }
  | { readonly phase: 'launch'; readonly message: string; readonly argv: readonly string[] }
  | { readonly phase: 'output'; readonly message: string }
  | { readonly phase: 'done'; readonly message: string };
