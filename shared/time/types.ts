/** Outputs of the step-time model: every figure with its formula, citation and inputs, like the memory terms. */
import type { TermInput } from '../plan/result';
import type { Problem } from '../plan/types';
import type { Collective } from '../comm/types';
import type { PartName, Parts } from './parts';

export type TimeTermName =
  | 'forward' | 'backward' | 'recompute' | 'pipeline' | 'bubble' | 'exposedGradSync' | 'optimizer' | 'postStep' | 'step';

/** One labelled time term. */
export interface TimeTerm {
  readonly name: TimeTermName;
  readonly label: string;
  readonly seconds: number;
  readonly formula: string;
  readonly citation: string;
  readonly inputs: Readonly<Record<string, TermInput>>;
}

/**
 * One operator-level term of the step (issue 14 §1): GEMMs, core attention, memory-bound kernels, FP8 casts, launch
 * gaps, exposed in-layer communication, per micro-batch of the busiest stage and per step, with its formula, source
 * and where its curve came from (catalog, published kernel curve, fitted parameter or the cluster's measured profile).
 */
export interface OperatorTerm {
  readonly name: PartName | 'stepOverhead';
  readonly label: string;
  /** Seconds of this term in one micro-batch of the busiest stage, per pass. */
  readonly forward: number;
  readonly backward: number;
  readonly recompute: number;
  /** forward + backward + recompute per micro-batch × micro-batches (stepOverhead: once per step). */
  readonly stepSeconds: number;
  readonly formula: string;
  readonly citation: string;
  readonly provenance: string;
}

/** Per-stage timing summary. */
export interface StageTimeSummary {
  readonly stage: number;
  readonly layers: number;
  readonly forwardSeconds: number;
  readonly recomputeSeconds: number;
  readonly backwardSeconds: number;
  readonly optimizerSeconds: number;
  readonly exposedCommSeconds: number;
  /** The stage's per-micro-batch kernel terms, per pass. */
  readonly parts: { readonly forward: Parts; readonly backward: Parts; readonly recompute: Parts };
}

export interface StepTimeEstimate {
  readonly stepSeconds: number;
  readonly pipelineSeconds: number;
  /** Pipeline idle time over ideal compute time: (p−1)/m for 1F1B/GPipe, (p−1)/(v·m) interleaved. */
  readonly bubbleFraction: number;
  readonly exposedCommSeconds: number;
  readonly optimizerSeconds: number;
  readonly microbatches: number;
  /** Model FLOPs of one step over all GPUs: forward + backward, no recomputation. */
  readonly modelFlopsPerStep: number;
  /** Hardware FLOPs: model FLOPs + recomputation. */
  readonly hardwareFlopsPerStep: number;
  readonly mfu: number;
  readonly hfu: number;
  /** Hardware FLOP/s achieved per GPU (the "achieved TFLOP/s" of Narayanan et al. 2021 Table 1). */
  readonly achievedFlopsPerGpu: number;
  readonly tokensPerSecond: number;
  readonly flopConvention: string;
  readonly terms: Readonly<Record<TimeTermName, TimeTerm>>;
  /** The operator-level terms of the busiest stage's micro-batch (the Simulate Step timeline and hovers show them). */
  readonly operatorTerms: readonly OperatorTerm[];
  /** Where the kernel and collective curves came from (catalog and fitted parameters, or a measured profile). */
  readonly provenance: readonly string[];
  readonly stages: readonly StageTimeSummary[];
  readonly collectives: readonly Collective[];
  readonly problems: readonly Problem[];
}
