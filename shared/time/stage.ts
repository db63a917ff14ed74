/**
 * Timing of one pipeline stage, the numbers every schedule needs: per-micro-batch forward, recompute and backward
 * (with the exposed ZeRO-3/offload traffic of each micro-batch), gradient sync and its overlap window, optimizer,
 * post-step traffic and one pipeline send. Shared by the closed form (stepTime.ts) and the simulator (shared/sim).
 */
import type { Plan } from '../plan/types';
import { stageComm, type StageComm } from '../comm/collectives';
import { stageLayerCount } from '../comm/stageParams';
import { microbatchWork, type MicrobatchWork } from './microbatch';
import { cachedOptimizerSeconds } from './optimizer';
import { timeContext, type TimeContext } from './context';

export interface StageTiming {
  readonly stage: number;
  readonly layers: number;
  /** Seconds per micro-batch for the whole stage (all chunks). */
  readonly forward: number;
  readonly recompute: number;
  readonly backward: number;
  readonly gradSync: number;
  readonly gradSyncWindow: number;
  readonly optimizer: number;
  readonly postStep: number;
  readonly p2p: number;
  readonly work: MicrobatchWork;
  readonly comm: StageComm;
}

/** Timing of one stage; `list` false skips listing the collectives (the planner's fast path); `work` when already known. */
export function stageTiming(
  plan: Plan, stage: number, list = true, ctx: TimeContext = timeContext(plan), work: MicrobatchWork = microbatchWork(plan, stage, ctx),
): StageTiming {
  const comm = stageComm(plan, stage, ctx, work, list);
  return {
    stage,
    layers: stageLayerCount(plan, stage),
    forward: work.forward + comm.perMicrobatchForward,
    recompute: work.recompute,
    backward: work.backward + comm.perMicrobatchBackward,
    gradSync: comm.gradSync,
    gradSyncWindow: comm.gradSyncWindow,
    optimizer: cachedOptimizerSeconds(plan, stage, comm.params),
    postStep: comm.postStep,
    p2p: comm.p2p,
    work,
    comm,
  };
}

/** Whether a stage's collectives are listed in results: the first, second and last (middle stages repeat the second). */
export function listedStage(stage: number, p: number): boolean {
  return p <= 3 || stage <= 1 || stage === p - 1;
}

/** Timings of every pipeline stage (collectives listed for the stages `listedStage` names). */
export function allStageTimings(plan: Plan): StageTiming[] {
  const ctx = timeContext(plan);
  const out: StageTiming[] = [];
  for (let s = 0; s < ctx.p; s++) out.push(stageTiming(plan, s, listedStage(s, ctx.p), ctx));
  return out;
}
