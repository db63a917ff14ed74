/**
 * One pipeline stage's state while its schedule runs (shared/sim/run.ts): its pass order and clock, and when the run
 * records a timeline, its blocks, per-kind totals and activation memory.
 */
import type { StageTiming } from '../time/stage';
import type { Op } from './schedule';
import type { Block, BlockKind, ElidedSpan } from './types';

/**
 * What the run reads of a stage's timing: its per-micro-batch passes and sends, gradient sync, optimizer and post-step
 * seconds, and the communication inside its passes. The traceable StageTiming and the planner's scratch records
 * (shared/time/stage.ts StageTimingScratch) both are one, so the estimate and the fast path run the same schedule.
 */
export type RunStage = Pick<StageTiming, 'forward' | 'recompute' | 'backward' | 'p2p' | 'gradSync' | 'gradSyncWindow' | 'gradSyncCooldown' | 'optimizer' | 'postStep' | 'work'>
  & { readonly comm: Pick<StageTiming['comm'], 'perMicrobatchForward' | 'perMicrobatchBackward'> };

/** Exposed communication inside one forward / backward pass of a stage (all chunks): in-layer plus ZeRO-3/offload. */
export const forwardComm = (T: RunStage): number => T.work.parts.forward.comm + T.comm.perMicrobatchForward;
export const backwardComm = (T: RunStage): number => T.work.parts.backward.comm + T.comm.perMicrobatchBackward;

/** Mutable state of one stage during the run. */
export interface Lane {
  ops: Op[];
  pos: number;
  t: number;
  blocked: boolean;
  pendingW: Op[];
  /** The timeline's blocks (filled only when the run records; passes inside `elided` are not kept). */
  blocks: Block[];
  /**
   * Activation bytes over time as (time, bytes allocated after the event) points, in time order (filled only when the
   * run records; one point where the elided span starts, none inside it).
   */
  mem: [number, number][];
  /** Seconds of each block kind on the compute stream over every pass, drawn or not (filled only when the run records). */
  totals: Record<BlockKind, number>;
  /** Activation bytes allocated now and their most over the step (filled only when the run records). */
  act: number;
  actPeak: number;
  /** Most chunks alive at once (`live` at its highest). */
  maxLive: number;
  /** The steady-state passes run but not drawn (absent when every pass is drawn). */
  elided?: { -readonly [K in keyof ElidedSpan]: ElidedSpan[K] };
  busy: number;
  /** Micro-batch chunks started and not yet fully backpropagated. */
  live: number;
  /** Duration of the last backward pass. */
  lastB: number;
  /** End of each chunk's last backward pass (interleaved schedules launch each chunk's gradient sync there). */
  chunkEnd: number[];
}

/** The totals of a run that keeps no timeline: never written (frozen), one object for every such lane. */
const NO_TOTALS: Record<BlockKind, number> = Object.freeze({ forward: 0, backward: 0, recompute: 0, comm: 0, idle: 0, optimizer: 0 });

/**
 * A fresh lane over a stage's pass order. Only a recording run gets its own totals: the estimate and the planner's fast
 * path run the schedule for every plan they time and allocate nothing they do not fill.
 */
export function newLane(ops: Op[], v: number, record: boolean): Lane {
  return {
    ops, pos: 0, t: 0, blocked: false, pendingW: [], blocks: [], mem: [], busy: 0, live: 0, lastB: 0, chunkEnd: new Array<number>(v).fill(0),
    totals: record ? { forward: 0, backward: 0, recompute: 0, comm: 0, idle: 0, optimizer: 0 } : NO_TOTALS, act: 0, actPeak: 0, maxLive: 0,
  };
}

/** Adds a step-level block to a recording lane: kept, and counted in the lane's totals when on the compute stream. */
export function addBlock(L: Lane, b: Block): void {
  L.blocks.push(b);
  if (b.lane === 'compute') L.totals[b.kind] += b.end - b.start;
}

