/**
 * Inputs and outputs of the layout planner. Every output is a plain JSON-serialisable object, so the CLI's
 * `shardlens plan --json` can print a `PlanResult` as it is.
 */
import type { FormatId } from '../plan/facts';
import type { FsdpStrategy, OffloadTarget, Plan, Problem, RecomputeKind, ShardingStyle } from '../plan/types';

/** The values the search may try per axis; every field is optional and replaces the default candidates. */
export interface SearchSpace {
  readonly tp?: readonly number[];
  readonly pp?: readonly number[];
  readonly vpp?: readonly number[];
  readonly cp?: readonly number[];
  readonly ep?: readonly number[];
  /** ZeRO-equivalent stages (0–3); mapped to the base plan's framework (DeepSpeed stage, FSDP strategy, distributed optimizer). */
  readonly zero?: readonly (0 | 1 | 2 | 3)[];
  readonly microBatch?: readonly number[];
  readonly recompute?: readonly RecomputeKind[];
  /** Optimizer-state offload targets. */
  readonly offload?: readonly OffloadTarget[];
  /** Try FSDP hybrid sharding (HSDP: shard within a node, replicate across nodes) besides full sharding (default true). */
  readonly hybridShard?: boolean;
  /** Allow tensor parallelism across nodes (default false: TP stays within a node). */
  readonly tpAcrossNodes?: boolean;
  /** Allow uneven pipeline splits (first and last stage hold fewer layers) when PP does not divide the layers (default true). */
  readonly unevenPipeline?: boolean;
  /**
   * How the engine splits layers over stages: 'torchtitan' deals L + first + last layer-equivalents over pp·vpp stages
   * (`torchtitanStageLayers`) and builds only the virtual stages its settings can name (2 per rank, or
   * ⌈(L + first + last) / layers_per_stage⌉); default: the planner's own split (`stageSplit`).
   */
  readonly stageRule?: 'torchtitan';
}

export interface PlannerOptions {
  /** GPUs to plan for (default: the base plan's cluster). */
  readonly gpus?: number;
  /** A layout fits when its peak is at most GPU memory × this (default 0.9). */
  readonly safetyMargin?: number;
  /** Layouts returned (default 5). */
  readonly topK?: number;
  readonly space?: SearchSpace;
  /** The config format the layout will be written to: limits the space to what it can express (`spaceForFormat`); `space` wins. */
  readonly format?: FormatId;
  /** Most layouts evaluated before the search stops; the result says so when it stops (default 50,000,000). */
  readonly maxEvaluations?: number;
  /** Disable the safe micro-batch memory pruning (for checks against brute force). */
  readonly exhaustive?: boolean;
}

/** One parallel layout with its predicted cost. */
export interface Layout {
  readonly tp: number;
  readonly pp: number;
  readonly vpp: number;
  readonly cp: number;
  readonly ep: number;
  readonly dp: number;
  /** Sequence parallelism (on whenever TP > 1 in the frameworks the planner writes). */
  readonly sp: boolean;
  /** ZeRO-equivalent stage: 0 replicated, 1 optimizer states, 2 + gradients, 3 + parameters. */
  readonly zero: 0 | 1 | 2 | 3;
  /** The framework's name for the sharding: DeepSpeed/DDP/Megatron distributed optimizer/FSDP. */
  readonly sharding: ShardingStyle;
  readonly fsdpStrategy?: FsdpStrategy;
  /** HSDP: ranks each state is sharded over (the rest replicate); absent when states shard over all of DP. */
  readonly shardGroup?: number;
  readonly distributedOptimizer: boolean;
  readonly microBatch: number;
  readonly gradAccum: number;
  readonly recompute: RecomputeKind;
  /** Optimizer-state offload target. */
  readonly offload: OffloadTarget;
  /** Layers per pipeline stage when the split is uneven; absent when even. */
  readonly stageLayers?: readonly number[];
  readonly stepSeconds: number;
  /** Peak bytes allocated by tensors on the worst rank (the full estimate's; the fast path's reserved bytes before refinement). */
  readonly peakAllocatedBytes: number;
  /** Peak bytes reserved from the device (allocated + the caching allocator's cached blocks); this is what must fit. */
  readonly peakReservedBytes: number;
  readonly fits: boolean;
  /**
   * Which estimate the figures come from: 'full' (traceable estimateMemory + estimateStepTime, the top layouts) or
   * 'fast' (the numeric fast paths; peakAllocatedBytes then holds the fast path's reserved peak too).
   */
  readonly estimate: 'fast' | 'full';
  /**
   * Variants that tie this layout's step time exactly and differ from it in one choice, named with their peak, e.g.
   * "recompute selective (53.9 GiB)": what does not matter for time (selective vs no recomputation under flash attention).
   */
  readonly equivalent?: readonly string[];
}

/** Why layouts were not evaluated or not kept. */
export type PruneReason =
  | 'tp-heads'
  | 'tp-node'
  | 'pp-layers'
  | 'vpp-layers'
  | 'cp-sequence'
  | 'ep-experts'
  | 'world-size'
  | 'global-batch'
  | 'interleave-microbatches'
  | 'zero-offload'
  /** torchtitan without an FSDP mesh (dp_shard·cp = 1) under TP or PP trains in fp32: not the plan's precision. */
  | 'engine-unsharded'
  /** DeepSpeed's pipeline engine (PP > 1) refuses ZeRO-2 and ZeRO-3 (PipelineEngine asserts the stage is below 2). */
  | 'engine-pipeline-zero'
  | 'memory'
  | 'memory-monotone'
  | 'invalid-estimate'
  | 'tie'
  | 'cap';

export interface PlanResult {
  /** Layouts whose memory (and, when they fit, step time) was computed. */
  readonly evaluated: number;
  /** Candidate axis values or layouts skipped, by reason; 'memory-monotone' counts larger micro batches skipped after one did not fit. */
  readonly pruned: Readonly<Partial<Record<PruneReason, number>>>;
  /** The bounds of the default space that applied, e.g. "VPP ≤ 8", so no limit is silent. */
  readonly bounds: readonly string[];
  /** True when `maxEvaluations` stopped the search before the space was exhausted. */
  readonly truncated: boolean;
  /** Wall-clock seconds of the search. */
  readonly seconds: number;
  readonly gpus: number;
  /** Peak reserved bytes a layout may reach to fit (GPU memory × safety margin). */
  readonly memoryLimitBytes: number;
  /** Fitting layouts, fastest first (at most topK). */
  readonly layouts: readonly Layout[];
  /** Fitting layouts no other fitting layout beats in both peak memory and step time, by ascending memory. */
  readonly pareto: readonly Layout[];
  /** When nothing fits: the layout with the lowest peak, to say how far off the cluster is. */
  readonly lowestMemory?: Layout;
  readonly problems: readonly Problem[];
}

/** The estimators the planner calls: fast numeric paths for the search, full ones for the top layouts. */
export interface PlannerEstimators {
  /**
   * Peak reserved bytes of the worst rank (fast path); compared with GPU memory × margin. With `enough`, the search's
   * largest peak it needs exactly (a layout above it neither fits nor is the lowest), the estimator may return instead
   * any value above `enough` and at most the peak: shared/memory/fast.ts stops at the first stage past it.
   */
  peakBytes(plan: Plan, enough?: number): number;
  /**
   * Seconds per optimizer step (fast path). With `worth`, the search's test of whether a step time could still enter
   * its lists, the estimator may return instead any lower bound of the step for which `worth` is false (the layout
   * cannot enter them whatever its exact time): shared/time/stepTime.ts skips the pipeline schedule's run that way.
   */
  stepSeconds(plan: Plan, worth?: (lowerBound: number) => boolean): number;
  /** Full traceable estimate, used for the returned layouts only. */
  full?(plan: Plan): { peakAllocatedBytes: number; peakReservedBytes: number; stepSeconds: number };
}
