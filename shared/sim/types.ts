/** Outputs of the step simulator: a timeline per pipeline stage (symmetric ranks are simulated once). */
import type { Collective } from '../comm/types';
import type { PipelineSchedule, Problem } from '../plan/types';
import type { Parts } from '../time/parts';
import type { OperatorTerm } from '../time/types';

export type BlockKind = 'forward' | 'backward' | 'recompute' | 'comm' | 'idle' | 'optimizer';

/** One block of a stage's timeline, seconds from the start of the step. */
export interface Block {
  readonly kind: BlockKind;
  /** Micro-batch index (−1 for step-level blocks). */
  readonly microbatch: number;
  /** Virtual pipeline chunk (0 without interleaving; −1 for step-level blocks). */
  readonly chunk: number;
  readonly start: number;
  readonly end: number;
  readonly label: string;
  /** 'compute' for the GPU's compute stream, 'comm' for communication on a link. */
  readonly lane: 'compute' | 'comm';
}

/** Bytes allocated on one rank of a stage at a point in time (a step function). */
export interface MemoryPoint {
  readonly t: number;
  readonly bytes: number;
}

export interface StageTimeline {
  readonly stage: number;
  readonly blocks: readonly Block[];
  readonly memory: readonly MemoryPoint[];
  readonly staticBytes: number;
  readonly peakBytes: number;
  /** Most micro-batches (in whole-stage units) whose activations were alive at once. */
  readonly maxInFlight: number;
  readonly busySeconds: number;
  readonly idleSeconds: number;
  readonly exposedCommSeconds: number;
  /** The operator-level terms of one micro-batch of this stage, per pass (GEMM, attention, memory-bound, FP8, launch, comm). */
  readonly parts: { readonly forward: Parts; readonly backward: Parts; readonly recompute: Parts };
}

export interface Simulation {
  /** False when problems prevent a timeline. */
  readonly ok: boolean;
  readonly schedule: PipelineSchedule;
  readonly pp: number;
  readonly vpp: number;
  readonly microbatches: number;
  readonly stepSeconds: number;
  /** Pipeline idle over ideal compute of the busiest stage. */
  readonly bubbleFraction: number;
  readonly exposedCommSeconds: number;
  readonly mfu: number;
  readonly hfu: number;
  readonly tokensPerSecond: number;
  readonly stages: readonly StageTimeline[];
  readonly collectives: readonly Collective[];
  /** The busiest stage's operator-level terms with formula, source and provenance (for hovers and the timeline). */
  readonly operatorTerms: readonly OperatorTerm[];
  /** Where the kernel and collective curves came from (catalog and fitted parameters, or a measured profile). */
  readonly provenance: readonly string[];
  readonly problems: readonly Problem[];
}
