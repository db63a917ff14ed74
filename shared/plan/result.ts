/**
 * The outputs of the memory estimate. Every figure carries its formula, its inputs and where each input came from,
 * so that hovers, dashboards and the CLI's `--json` can explain it.
 */
import type { TERM_INFO } from '../memory/termInfo';
import type { InputSource, Problem } from './types';

/** One input as used by a term: its value and where it came from. */
export interface TermInput {
  readonly value: number | string | boolean;
  readonly source: InputSource;
}

/**
 * Names of the per-GPU memory terms, each computed by one function in shared/memory/: the keys of TERM_INFO
 * (shared/memory/termInfo.ts), so a new term is named where its label, formula and source are written.
 */
export type MemoryTermName = keyof typeof TERM_INFO;

/** One labelled memory term of one pipeline stage. */
export interface Term {
  readonly name: MemoryTermName;
  /** Short label for UIs, e.g. "Optimizer states". */
  readonly label: string;
  readonly bytes: number;
  /** The formula as text, e.g. "12·Ψ_stage / N_shard". */
  readonly formula: string;
  /** Citation of the formula, e.g. "Rajbhandari et al. 2020 (ZeRO), §5.1". */
  readonly citation: string;
  /** Symbol → value and source, for every symbol in the formula. */
  readonly inputs: Readonly<Record<string, TermInput>>;
}

export type StageKind = 'only' | 'first' | 'middle' | 'last';

/** Memory of one rank in one pipeline stage. */
export interface StageMemory {
  /** Zero-based pipeline stage. */
  readonly stage: number;
  readonly kind: StageKind;
  /** Transformer layers held by this stage (all virtual chunks together). */
  readonly layers: number;
  /** Parameters held by one rank of this stage before ZeRO/FSDP sharding (after TP/PP/EP splits). */
  readonly parametersPerRank: number;
  /** Micro-batches whose activations are alive at the peak. */
  readonly inFlightMicrobatches: number;
  readonly terms: Readonly<Partial<Record<MemoryTermName, Term>>>;
  /** parameters + gradients + optimizer states + master weights (+ fp32 grad buffer). */
  readonly modelStatesBytes: number;
  /**
   * Gradient bytes the step holds once its backward is done (sharded as configured, with an fp32 accumulation buffer):
   * the static gradients, whatever moment the stage peaks at (terms.gradients is what is live at the peak).
   */
  readonly gradientBytes: number;
  /** activations + embedding activations + logits. */
  readonly activationBytes: number;
  /**
   * What the micro batch drives: the activations the in-flight micro-batches keep for their backward (layers and
   * embedding) and the largest logits of the step (the loss's copies included). The terms show what is live at the
   * stage's peak, which may come after the backward (the optimizer step) or hold other transients.
   */
  readonly activationPeak?: { readonly activations: number; readonly logits: number };
  /** The moment of the step the stage peaks at ("loss forward", "layers backward", "optimizer step", …). */
  readonly peakMoment?: string;
  /** Peak bytes allocated by tensors (everything but fragmentation). */
  readonly peakAllocatedBytes: number;
  /** Peak bytes reserved from the device (allocated + fragmentation). */
  readonly peakReservedBytes: number;
  /**
   * torch's memory categories with the peak of each on its own and of the total (tensor bytes, no CUDA context), as
   * the fake-tensor oracle reports them (shared/memory/categories.ts).
   */
  readonly peaks?: {
    readonly parameters: number; readonly gradients: number; readonly optimizer: number;
    readonly activations: number; readonly temporaries: number; readonly other: number; readonly total: number;
  };
}

export interface ParameterCounts {
  /** Every parameter of the model (integer). */
  readonly parameters: number;
  /** Parameters that receive gradients (LoRA: adapter parameters only). */
  readonly trainableParameters: number;
  /** Parameters used per token (MoE: shared + top-k experts). */
  readonly activeParameters: number;
}

export interface MemoryEstimate {
  readonly model: ParameterCounts;
  /** True when every stage's peak reserved bytes fit in GPU memory. */
  readonly fits: boolean;
  readonly gpuMemoryBytes: number;
  /** Stages in order, one entry per pipeline stage. */
  readonly stages: readonly StageMemory[];
  /** Index into `stages` of the stage with the highest peak. */
  readonly peakStage: number;
  /** The same model and batch with plain data parallelism (no ZeRO/FSDP sharding, no offload). */
  readonly replicated: { readonly stages: readonly StageMemory[] };
  /** Host (CPU) memory needed per node for offload, bytes; 0 without offload. */
  readonly hostBytesPerNode: number;
  readonly problems: readonly Problem[];
}
