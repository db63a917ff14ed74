/**
 * Timing of one pipeline stage, the numbers every schedule needs: per-micro-batch forward, recompute and backward
 * (with the exposed ZeRO-3/offload traffic of each micro-batch), gradient sync and its overlap window, optimizer,
 * post-step traffic and one pipeline send. Shared by the closed form (stepTime.ts) and the simulator (shared/sim).
 */
import type { Plan } from '../plan/types';
import { stageLayerCount } from '../comm/stageParams';
import { TimeCache, type LayoutEntry } from './cache';
import { timeContext, type TimeContext } from './context';
import { microbatchWork, type MicrobatchWork } from './microbatch';
import { cachedOptimizerSeconds } from './optimizer';
import { newStageCommNumbers, stageComm, stageCommInto, type StageComm, type StageCommNumbers } from './stageComm';

export interface StageTiming {
  readonly stage: number;
  readonly layers: number;
  /** Seconds per micro-batch for the whole stage (all chunks). */
  readonly forward: number;
  readonly recompute: number;
  readonly backward: number;
  readonly gradSync: number;
  readonly gradSyncWindow: number;
  readonly gradSyncCooldown: number;
  readonly optimizer: number;
  readonly postStep: number;
  readonly p2p: number;
  readonly work: MicrobatchWork;
  readonly comm: StageComm;
}

/** Timing of one stage; `list` false skips listing the collectives; `work` when already known. */
export function stageTiming(
  plan: Plan, stage: number, list = true, cache: TimeCache = new TimeCache(), ctx: TimeContext = timeContext(plan, cache),
  work: MicrobatchWork = microbatchWork(plan, stage, ctx),
): StageTiming {
  const comm = stageComm(plan, stage, cache, ctx, work, list);
  return {
    stage,
    layers: stageLayerCount(plan, stage),
    forward: work.forward + comm.perMicrobatchForward,
    recompute: work.recompute,
    backward: work.backward + comm.perMicrobatchBackward,
    gradSync: comm.gradSync,
    gradSyncWindow: comm.gradSyncWindow,
    gradSyncCooldown: comm.gradSyncCooldown,
    optimizer: cachedOptimizerSeconds(plan, stage, comm.params, cache, ctx),
    postStep: comm.postStep,
    p2p: comm.p2p,
    work,
    comm,
  };
}

/** A StageTiming whose fields the planner's fast path overwrites in place (one per slot, see stageTimingInto). */
export type StageTimingScratch = { -readonly [K in keyof StageTiming]: StageTiming[K] } & { comm: StageCommNumbers };

/** A fresh scratch record for stageTimingInto. */
export function newStageTimingScratch(work: MicrobatchWork): StageTimingScratch {
  return {
    stage: 0, layers: 0, forward: 0, recompute: 0, backward: 0, gradSync: 0, gradSyncWindow: 0, gradSyncCooldown: 0, optimizer: 0, postStep: 0, p2p: 0,
    work, comm: newStageCommNumbers(),
  };
}

/**
 * stageTiming with `list` false written into a reused record: the same sums, without allocating a StageTiming and a
 * StageComm per stage (the planner's fast path). `entry` is the plan's layout cache entry.
 */
export function stageTimingInto(plan: Plan, stage: number, ctx: TimeContext, work: MicrobatchWork, cache: TimeCache, entry: LayoutEntry, out: StageTimingScratch): StageTimingScratch {
  const comm = stageCommInto(plan, stage, ctx, work, cache.stageTraffic(plan, stage, entry), cache.params, out.comm);
  out.stage = stage;
  out.layers = work.layers;
  out.forward = work.forward + comm.perMicrobatchForward;
  out.recompute = work.recompute;
  out.backward = work.backward + comm.perMicrobatchBackward;
  out.gradSync = comm.gradSync;
  out.gradSyncWindow = comm.gradSyncWindow;
  out.gradSyncCooldown = comm.gradSyncCooldown;
  out.optimizer = cachedOptimizerSeconds(plan, stage, comm.params, cache, ctx, entry);
  out.postStep = comm.postStep;
  out.p2p = comm.p2p;
  out.work = work;
  return out;
}

/** Whether a stage's collectives are listed in results: the first, second and last (middle stages repeat the second). */
export function listedStage(stage: number, p: number): boolean {
  return p <= 3 || stage <= 1 || stage === p - 1;
}

/** Timings of every pipeline stage (collectives listed for the stages `listedStage` names). */
export function allStageTimings(plan: Plan, cache: TimeCache = new TimeCache()): StageTiming[] {
  const ctx = timeContext(plan, cache);
  const out: StageTiming[] = [];
  for (let s = 0; s < ctx.p; s++) out.push(stageTiming(plan, s, listedStage(s, ctx.p), cache, ctx));
  return out;
}
