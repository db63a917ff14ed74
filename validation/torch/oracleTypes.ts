/**
 * Types of the fake-tensor memory oracle (probe/shardlens_oracle.py): the plan ShardLens exports and the report torch
 * writes back. Plain data only.
 */
import type { EngineId, ModelImpl, ModelSpec, OptimizerImpl, OptimizerKind, PipelineSchedule, Precision, PrecisionRegime } from '../../shared/plan/types';

/** Activation-checkpointing policy as the oracle applies it (probe/oracle/checkpointing.py). */
export type OracleAcMode = 'none' | 'full' | 'selective-layer' | 'selective-op' | 'hf' | 'megatron-selective';

export interface OraclePlan {
  readonly kind: 'shardlens-oracle-plan';
  readonly schemaVersion: 1;
  readonly name: string;
  readonly engine: EngineId;
  readonly regime: PrecisionRegime;
  readonly impl: ModelImpl;
  readonly attention: 'flash' | 'eager';
  readonly model: Pick<ModelSpec, 'layers' | 'hiddenSize' | 'heads' | 'kvHeads' | 'headDim' | 'ffnSize' | 'gatedMlp' | 'attnBias' | 'mlpBias'
    | 'tiedEmbeddings' | 'vocabSize' | 'norm' | 'qkNorm' | 'moe'>;
  /** config.json of a transformers model (impl 'hf'). */
  readonly hfConfig?: Readonly<Record<string, unknown>>;
  readonly training: {
    readonly microBatch: number;
    readonly seqLen: number;
    /** Micro-batches per step (pipeline micro-batches, or accumulation steps; the oracle runs at most 2 without PP). */
    readonly gradAccum: number;
    readonly precision: Precision;
    readonly optimizer: OptimizerKind;
    readonly optimizerImpl: OptimizerImpl;
    readonly paramDtype: 'bf16' | 'fp32';
    readonly reduceDtype: 'bf16' | 'fp32';
    readonly gradReduceInBf16: boolean;
    readonly distributedOptimizer: boolean;
    readonly zeroStage: 0 | 1 | 2 | 3;
    readonly reduceBucketElems: number;
    readonly overlapComm: boolean;
    /** Dropout probability of Megatron's hidden/attention dropout (0: no masks). */
    readonly dropout: number;
    /** false: every micro-batch but the last runs without the gradient sync (HF Trainer / Accelerate no_sync). */
    readonly syncEveryMicroBatch: boolean;
  };
  /** The DeepSpeed JSON keys the plan states (engine 'deepspeed': the oracle runs DeepSpeed's own engine with them). */
  readonly deepspeed?: Readonly<Record<string, unknown>>;
  readonly ac: { readonly mode: OracleAcMode; readonly every?: number };
  readonly parallel: {
    readonly pp: number; readonly vpp: number; readonly schedule: PipelineSchedule;
    readonly dpReplicate: number; readonly dpShard: number; readonly cp: number; readonly tp: number; readonly sp: boolean;
    readonly sharding: 'fsdp2' | 'ddp' | 'deepspeed' | 'none';
    readonly reshardAfterForward: boolean;
  };
  /** Pipeline stages to measure (default: all). */
  readonly stages?: readonly number[];
  /**
   * The caching allocator the trace is replayed with: `PYTORCH_CUDA_ALLOC_CONF` options (max_split_size_mb,
   * roundup_power2_divisions, max_non_split_rounding_mb; expandable segments are always replayed both ways) and the
   * bytes it may reserve (default: unlimited; with a limit the replay frees its cache and retries as torch does).
   */
  readonly allocator?: { readonly conf?: string; readonly capacityBytes?: number };
}

/** torch's categories (MemTracker) plus the total, in bytes. */
export const ORACLE_CATEGORIES = ['parameters', 'buffers', 'gradients', 'activations', 'temporaries', 'optimizer', 'other', 'total'] as const;
export type OracleCategory = (typeof ORACLE_CATEGORIES)[number];
export type CategoryBytes = Readonly<Record<OracleCategory, number>>;

/** One replay of the rank's allocation trace through the caching-allocator simulation (probe/oracle/allocator.py), bytes. */
export interface OracleAllocatorReplay {
  /** torch.cuda.max_memory_allocated: the largest sum of live blocks (requests rounded to 512 B, unsplit remainders). */
  readonly peakAllocated: number;
  /** torch.cuda.max_memory_reserved: the largest sum of segments (or mapped pages) held from the device. */
  readonly peakReserved: number;
  /** The largest sum of requested bytes (the tensors). */
  readonly peakRequested: number;
  /** Each stream's reserved bytes at the peak of the total ("default", "fsdp all-gather-copy-in", …). */
  readonly reservedByStream: Readonly<Record<string, number>>;
  /** Segments held at the end (0 with expandable segments), cudaMalloc retries after freeing the cache, out of memory. */
  readonly segments: number;
  readonly retries: number;
  readonly oom: boolean;
}

/** The rank's allocation trace (warm-up and tracked step) replayed with the native allocator and expandable segments. */
export interface OracleAllocator {
  /** Allocation and free events recorded. */
  readonly events: number;
  /** Peak of the requested bytes during the tracked step (equals MemTracker's total peak when the trace is complete). */
  readonly stepPeakRequested: number;
  readonly native: OracleAllocatorReplay;
  readonly expandable: OracleAllocatorReplay;
}

/** One simulated rank (one per pipeline stage). */
export interface OracleRank {
  readonly stage: number;
  readonly rank: number;
  /** The peak of each category on its own, and the peak of the total. */
  readonly peaks: CategoryBytes;
  /** Every category at the moment of the total's peak. */
  readonly atPeak: CategoryBytes;
  /** Bytes that stay for the whole step, counted directly (parameters, optimizer states, main grads, master weights). */
  readonly static: Readonly<Record<string, number>>;
  readonly notes: readonly string[];
  readonly seconds: number;
  /** The caching allocator replayed on the rank's allocation trace (absent in reports of older oracles). */
  readonly allocator?: OracleAllocator;
}

export interface OracleReport {
  readonly kind: 'shardlens-oracle-report';
  readonly schemaVersion: 1;
  readonly ok: boolean;
  readonly versions: Readonly<Record<string, string>>;
  readonly name: string | null;
  readonly seconds: number;
  readonly ranks: readonly OracleRank[];
  readonly error?: { readonly code: string; readonly message: string };
}
