/** Outputs of the step-time model: every figure with its formula, citation and inputs, like the memory terms. */
import type { TermInput } from '../plan/result';
import type { Problem } from '../plan/types';
import type { Collective } from '../comm/types';

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

/** Per-stage timing summary. */
export interface StageTimeSummary {
  readonly stage: number;
  readonly layers: number;
  readonly forwardSeconds: number;
  readonly recomputeSeconds: number;
  readonly backwardSeconds: number;
  readonly optimizerSeconds: number;
  readonly exposedCommSeconds: number;
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
  readonly stages: readonly StageTimeSummary[];
  readonly collectives: readonly Collective[];
  readonly problems: readonly Problem[];
}
