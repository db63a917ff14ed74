/**
 * Model-state and activation bytes of one rank, read from the estimation core's `estimateMemory` for the scaled plan
 * (single pipeline stage): the terms `parameters`, `gradients`, `optimizerStates` and the stage's `activationBytes`.
 */
import { estimateMemory } from '../../shared/memory/estimate';
import type { Plan } from '../../shared/plan/types';

export interface ModelStateEstimate {
  readonly parametersBytes: number;
  readonly gradientsBytes: number;
  readonly optimizerStatesBytes: number;
  /** Activations + embedding activations + logits of the core, for the ratio with the tfjs tape peak. */
  readonly activationBytes: number | null;
  readonly sources: readonly string[];
}

/** Model states of the plan's rank (fp32, Adam, one pipeline stage), as the core estimates them. */
export function coreModelStates(plan: Plan): ModelStateEstimate {
  const stage = estimateMemory(plan).stages[0];
  const bytes = (x: number | undefined) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);
  return {
    parametersBytes: bytes(stage?.terms.parameters?.bytes),
    gradientsBytes: bytes(stage?.gradientBytes),
    optimizerStatesBytes: bytes(stage?.terms.optimizerStates?.bytes),
    activationBytes: stage ? bytes(stage.activationBytes) : null,
    sources: ['shared/memory/estimate.ts estimateMemory: terms parameters and optimizerStates, gradientBytes and activationBytes of stage 0'],
  };
}
