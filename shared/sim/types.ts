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

/**
 * Passes of a stage that ran but are not drawn: the steady state between the drawn first and last passes of a long
 * step (its blocks would make the timeline too large to send and draw). Their seconds are in the stage's totals.
 */
export interface ElidedSpan {
  /** Seconds from the step start where the first pass not drawn starts (its bubble included). */
  readonly start: number;
  /** Where the compute of the last pass not drawn ends (its sends, on the communication lane, may end later). */
  readonly end: number;
  /** Passes not drawn (forward, backward and weight-gradient passes). */
  readonly passes: number;
}

/** Bytes allocated on one rank of a stage at a point in time (a step function). */
export interface MemoryPoint {
  readonly t: number;
  readonly bytes: number;
}

export interface StageTimeline {
  readonly stage: number;
  readonly blocks: readonly Block[];
  /** Seconds of each block kind on the compute stream over the whole step, the passes not drawn included. */
  readonly computeSeconds: Readonly<Record<BlockKind, number>>;
  /** The steady-state passes not drawn (absent when every pass has its blocks). */
  readonly elided?: ElidedSpan;
  /** Allocated bytes over time; no points inside `elided`. */
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
