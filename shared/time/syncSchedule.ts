/**
 * When a stage's data-parallel collectives run during an accumulating step, decided once for the numbers
 * (stageCommInto) and the listing (stageComm): in every micro-batch or once per step, by the engine's schedule
 * (shared/comm/volumes.ts cites each rule).
 */
import type { Plan } from '../plan/types';
import type { StageTraffic } from '../comm/stageTraffic';
import * as V from '../comm/volumes';
import { pipelineEngineOf } from '../memory/pipeline';

export interface SyncSchedule {
  /** A torch.distributed.pipelining stage sharded by FSDP2: one reduce after its last backward, none behind it. */
  readonly pipelined: boolean;
  /** ZeRO-2/3 and FSDP reduce-scatter in every micro-batch. */
  readonly reduceEveryMicrobatch: boolean;
  /** FSDP's HSDP replica all-reduce follows each reduce-scatter in every micro-batch. */
  readonly hybridEveryMicrobatch: boolean;
  /** A replicated stage all-reduces in every micro-batch (torch replicate). */
  readonly replicaEveryMicrobatch: boolean;
  /** ZeRO-3/FSDP gathers once per step (a pipelined stage that keeps its parameters gathered). */
  readonly gatherOncePerStep: boolean;
}

/** The schedule of one stage on `pp` pipeline stages with its cached traffic `k`. */
export function syncSchedule(plan: Plan, pp: number, k: Pick<StageTraffic, 'dpSeconds' | 'hsdpLayerSeconds'>): SyncSchedule {
  const sh = plan.parallel.sharding;
  const zero = sh.stage;
  const sync = plan.training.syncEveryMicroBatch;
  const pipelined = V.torchPipelinedFsdp(pp, pipelineEngineOf(plan.engine), sh.style, zero);
  const reduceEveryMicrobatch = zero >= 2 && !pipelined && V.zeroGradReduceEveryMicrobatch(sh.style, sync);
  return {
    pipelined,
    reduceEveryMicrobatch,
    hybridEveryMicrobatch: reduceEveryMicrobatch && k.hsdpLayerSeconds > 0 && (sh.style === 'fsdp' || sh.style === 'fsdp2'),
    replicaEveryMicrobatch: k.dpSeconds > 0 && pp === 1 && V.replicaReduceEveryMicrobatch(sh.style, zero, sync),
    gatherOncePerStep: pipelined && V.gatherStage(sh.style, zero) >= 3 && !V.gatherReshards(sh.style, zero, sh.reshardAfterForward),
  };
}
