/**
 * What the estimation core says one rank of the scaled run holds and sends, per mode: the plan of the scaled model
 * (fp32, Adam, DP = ranks, ZeRO stage of the mode) is built with the core's makePlan and given to the core's memory
 * and communication functions, so the run checks the core itself.
 */
import { makePlan } from '../../shared/plan/defaults';
import type { ModelSpec, Plan } from '../../shared/plan/types';
import { countParams } from '../../shared/model/params';
import { stageComm } from '../../shared/time/stageComm';
import { busFactor } from '../../shared/comm/links';
import { MODE_STAGE, type ValidationMode } from '../types';
import { coreModelStates } from './memory';

export interface ModeEstimate {
  readonly parameters: number;
  readonly parametersBytes: number;
  readonly gradientsBytes: number;
  readonly optimizerStatesBytes: number;
  readonly activationBytes: number | null;
  /** Bytes sent per rank per step, by collective kind (all-reduce, reduce-scatter, all-gather). */
  readonly collectives: Readonly<Record<string, number>>;
  readonly sentBytes: number;
  readonly sources: readonly string[];
}

/** The plan of the scaled run in one mode. */
export function scaledPlan(base: Plan, model: ModelSpec, seqLen: number, microBatch: number, ranks: number, mode: ValidationMode): Plan {
  const stage = MODE_STAGE[mode];
  return makePlan({
    model,
    training: {
      microBatch, seqLen, gradAccum: 1, globalBatch: microBatch * ranks,
      precision: 'fp32', gradDtype: 'fp32', fp32GradAccum: false, optimizer: 'adam',
      // The runner recomputes each layer's forward in backward (checkpoints at layer boundaries).
      recompute: 'full', flashAttention: false,
    },
    parallel: {
      dp: ranks, tp: 1, pp: 1, cp: 1, ep: 1, etp: 1,
      sharding: {
        style: stage === 0 ? 'ddp' : 'deepspeed', stage, shardGroupSize: ranks, reshardAfterForward: true,
        offloadOptimizer: 'none', offloadParams: 'none', overlapComm: false,
      },
    },
    cluster: { gpu: base.cluster.gpu, gpusPerNode: ranks, nodes: 1 },
    overhead: { cudaContextBytes: 0, allocatorFragmentation: 0 },
  });
}

/**
 * Sent bytes per rank of every data-parallel collective the core lists, by kind: busFactor(kind, N) × message × count
 * (the ring's wire volume: 2(N−1)/N for all-reduce, (N−1)/N for reduce-scatter and all-gather).
 */
function coreComm(plan: Plan): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of stageComm(plan, 0).collectives) {
    if (c.group !== 'dp') continue;
    out[c.kind] = (out[c.kind] ?? 0) + busFactor(c.kind, c.groupSize) * c.bytesPerRank;
  }
  return out;
}

/** The core's figures for one rank of the scaled run in `mode`. */
export function estimateMode(base: Plan, model: ModelSpec, seqLen: number, microBatch: number, ranks: number, mode: ValidationMode): ModeEstimate {
  const plan = scaledPlan(base, model, seqLen, microBatch, ranks, mode);
  const states = coreModelStates(plan);
  const collectives = coreComm(plan);
  return {
    parameters: countParams(model).parameters,
    ...states,
    collectives,
    sentBytes: Object.values(collectives).reduce((a, b) => a + b, 0),
    sources: [...states.sources, 'shared/time/stageComm.ts stageComm × shared/comm/links.ts busFactor'],
  };
}
