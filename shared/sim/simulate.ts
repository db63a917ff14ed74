/**
 * Discrete-event simulation of one optimizer step: every pipeline stage runs its schedule's passes in order, a pass
 * starts when its stage is free and its inputs have arrived (the previous stage's pass plus one pipeline send), the
 * gradient sync overlaps the last backward, then the optimizer and post-step traffic run. Ranks of one stage are
 * symmetric, so one timeline per stage is simulated (a 16,384-GPU run is p timelines).
 */
import type { Plan } from '../plan/types';
import { activationBytesPerMicrobatch, staticBytes } from '../memory/fast';
import { interleavedGroupSize, pipelineEngineOf } from '../memory/pipeline';
import { TimeCache } from '../time/cache';
import { timeContext } from '../time/context';
import { operatorTerms, stepFlops } from '../time/estimate';
import { layoutProblems, timeAssumptionWarnings } from '../time/problems';
import { chunksPerStage, microbatchesPerStep, peakFlops, posInt } from '../time/shape';
import { allStageTimings, type StageTiming } from '../time/stage';
import { stageMicrobatchSeconds } from '../time/stepTime';
import { stageOps, type Op } from './schedule';
import type { Block, MemoryPoint, Simulation, StageTimeline } from './types';

/** Collectives that make up the gradient sync after the last backward. */
const GRAD_SYNC: ReadonlySet<string> = new Set(['dp-grad-allreduce', 'edp-grad-allreduce', 'hsdp-replicate-allreduce', 'zero-grad-reduce-scatter']);

/** Exposed communication inside one forward / backward pass of a stage (all chunks): in-layer plus ZeRO-3/offload. */
const forwardComm = (T: StageTiming): number => T.work.parts.forward.comm + T.comm.perMicrobatchForward;
const backwardComm = (T: StageTiming): number => T.work.parts.backward.comm + T.comm.perMicrobatchBackward;

/** Mutable state of one stage during the run. */
interface Lane {
  ops: Op[];
  pos: number;
  t: number;
  blocked: boolean;
  pendingW: Op[];
  blocks: Block[];
  mem: [number, number][];
  busy: number;
  /** Micro-batch chunks started and not yet fully backpropagated. */
  live: number;
  /** Duration of the last backward pass. */
  lastB: number;
  /** End of each chunk's last backward pass (interleaved schedules launch each chunk's gradient sync there). */
  chunkEnd: number[];
}

/** Simulation with no timeline, for layouts that cannot run. */
function failed(plan: Plan, problems: Simulation['problems']): Simulation {
  return {
    ok: false, schedule: plan.parallel.schedule, pp: posInt(plan.parallel.pp), vpp: chunksPerStage(plan), microbatches: microbatchesPerStep(plan),
    stepSeconds: 0, bubbleFraction: 0, exposedCommSeconds: 0, mfu: 0, hfu: 0, tokensPerSecond: 0, stages: [], collectives: [],
    operatorTerms: [], provenance: [], problems,
  };
}

/**
 * Megatron's interleaved gradient sync on one lane: each chunk's reduce (t/v) is launched when the chunk's last backward
 * ends (chunk 0's inside its last backward, behind the bucket window), and the reduces run one after another on the
 * communication stream (shared/time/syncExposure.ts interleavedSyncHidden). Returns when the lane's gradients are ready.
 */
function chunkedSync(L: Lane, T: StageTiming, v: number, cost: number): number {
  const d = T.gradSync / v;
  const arrivals = L.chunkEnd.map((e, c) => (c === 0 ? L.t - Math.min(T.gradSyncWindow, L.lastB) : e)).sort((a, b) => a - b);
  let free = -Infinity;
  let hidden = 0;
  for (const a of arrivals) {
    const start = Math.max(free, a);
    free = start + d;
    hidden += Math.max(0, Math.min(free, L.t) - start);
    L.blocks.push({ kind: 'comm', microbatch: -1, chunk: -1, start, end: free, label: 'gradient sync (DP, one chunk)', lane: 'comm' });
  }
  return Math.max(L.t, free) + cost * hidden;
}

/** Runs the passes of every stage; returns the lanes or undefined on a schedule deadlock. */
function runPipeline(st: readonly StageTiming[], ops: Op[][], m: number, v: number, zb: boolean, acts: number[]): Lane[] | undefined {
  const p = st.length;
  const n = p * m * v;
  const fEnd = new Float64Array(n).fill(-1);
  const bEnd = new Float64Array(n).fill(-1);
  const idx = (s: number, mb: number, c: number) => (s * m + mb) * v + c;
  const lanes: Lane[] = ops.map((o) => ({ ops: o, pos: 0, t: 0, blocked: false, pendingW: [], blocks: [], mem: [], busy: 0, live: 0, lastB: 0, chunkEnd: new Array<number>(v).fill(0) }));
  const total = ops.reduce((a, o) => a + o.length, 0);
  let done = 0;
  const push = (L: Lane, b: Block) => {
    L.blocks.push(b);
    if (b.lane === 'compute' && b.kind !== 'idle') L.busy += b.end - b.start;
  };
  /**
   * One pass on the compute stream: the compute part, then the communication it waits for (the exposed TP/EP/CP and
   * ZeRO-3/offload traffic counted in the pass's seconds), so the timeline shows what the Communication tab lists.
   */
  const pass = (L: Lane, kind: 'forward' | 'backward' | 'recompute', start: number, total: number, comm: number, mb: number, chunk: number, label: string): number => {
    const c = Math.min(total, Math.max(0, comm));
    push(L, { kind, microbatch: mb, chunk, start, end: start + total - c, label, lane: 'compute' });
    if (c > 0) push(L, { kind: 'comm', microbatch: mb, chunk, start: start + total - c, end: start + total, label: `${label}: exposed communication`, lane: 'compute' });
    return start + total;
  };
  const runW = (L: Lane, s: number) => {
    const w = L.pendingW.shift() as Op;
    const T = st[s];
    const d = T.backward / v / 2;
    pass(L, 'backward', L.t, d, backwardComm(T) / v / 2, w.mb, w.chunk, `W${w.mb}.${w.chunk} weight grad`);
    L.t += d;
    L.mem.push([L.t, -acts[s]]);
    L.live--;
  };
  let guard = 0;
  while (done < total) {
    if (++guard > 8 * total + 1000) return undefined;
    let s = -1;
    for (let i = 0; i < p; i++) {
      const L = lanes[i];
      if (L.pos < L.ops.length && !L.blocked && (s < 0 || L.t < lanes[s].t)) s = i;
    }
    if (s < 0) return undefined;
    const L = lanes[s];
    const op = L.ops[L.pos];
    const T = st[s];
    // Ready time of the pass: its inputs from the neighbouring stage plus one pipeline send (−1: not produced yet).
    let ready = 0;
    let known = true;
    let e1 = 0;
    let e2 = 0;
    if (op.kind === 'F') {
      if (s > 0) { e1 = fEnd[idx(s - 1, op.mb, op.chunk)]; e2 = e1 + st[s - 1].p2p; }
      else if (op.chunk > 0) { e1 = fEnd[idx(p - 1, op.mb, op.chunk - 1)]; e2 = e1 + st[p - 1].p2p; }
      if (e1 < 0) known = false;
      else ready = e2;
    } else {
      e1 = fEnd[idx(s, op.mb, op.chunk)];
      if (e1 < 0) known = false;
      else ready = e1;
      e1 = 0;
      if (s < p - 1) { e1 = bEnd[idx(s + 1, op.mb, op.chunk)]; e2 = e1 + st[s + 1].p2p; }
      else if (op.chunk < v - 1) { e1 = bEnd[idx(0, op.mb, op.chunk + 1)]; e2 = e1 + st[0].p2p; }
      if (e1 < 0) known = false;
      else if (e2 > ready) ready = e2;
    }
    // ZB-H1 keeps 1F1B's memory bound: no new forward while p − s chunks are alive (Qi et al. 2024 §3).
    const full = op.kind === 'F' && L.live >= (p - s) * v;
    if (zb && L.pendingW.length > 0 && (!known || ready > L.t || full)) {
      runW(L, s);
      continue;
    }
    if (!known) {
      L.blocked = true;
      continue;
    }
    const start = Math.max(L.t, ready);
    if (start > L.t) push(L, { kind: 'idle', microbatch: -1, chunk: -1, start: L.t, end: start, label: 'bubble', lane: 'compute' });
    let end = start;
    if (op.kind === 'F') {
      end = pass(L, 'forward', start, T.forward / v, forwardComm(T) / v, op.mb, op.chunk, `F${op.mb}.${op.chunk}`);
      fEnd[idx(s, op.mb, op.chunk)] = end;
      L.mem.push([start, acts[s]]);
      L.live++;
      if ((s < p - 1 || op.chunk < v - 1) && T.p2p > 0) {
        push(L, { kind: 'comm', microbatch: op.mb, chunk: op.chunk, start: end, end: end + T.p2p, label: `send activations F${op.mb}.${op.chunk}`, lane: 'comm' });
      }
    } else {
      const r = T.recompute / v;
      if (r > 0) pass(L, 'recompute', start, r, T.work.parts.recompute.comm / v, op.mb, op.chunk, `R${op.mb}.${op.chunk}`);
      const half = zb ? 0.5 : 1;
      end = pass(L, 'backward', start + r, (T.backward / v) * half, (backwardComm(T) / v) * half, op.mb, op.chunk, `B${op.mb}.${op.chunk}`);
      bEnd[idx(s, op.mb, op.chunk)] = end;
      L.lastB = end - start - r;
      L.chunkEnd[op.chunk] = end;
      if (zb) L.pendingW.push(op);
      else {
        L.mem.push([end, -acts[s]]);
        L.live--;
      }
      if ((s > 0 || op.chunk > 0) && T.p2p > 0) {
        push(L, { kind: 'comm', microbatch: op.mb, chunk: op.chunk, start: end, end: end + T.p2p, label: `send gradients B${op.mb}.${op.chunk}`, lane: 'comm' });
      }
    }
    L.t = end;
    L.pos++;
    done++;
    if (L.pos === L.ops.length) while (L.pendingW.length) runW(L, s);
    if (s > 0) lanes[s - 1].blocked = false;
    if (s < p - 1) lanes[s + 1].blocked = false;
    lanes[0].blocked = false;
    lanes[p - 1].blocked = false;
  }
  return lanes;
}

/** Memory step function from (time, delta) events on top of the static bytes; also the peak and most live micro-batches. */
function memoryCurve(events: [number, number][], base: number, act: number, v: number): { points: MemoryPoint[]; peak: number; live: number } {
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const points: MemoryPoint[] = [{ t: 0, bytes: base }];
  let cur = base;
  let peak = base;
  let live = 0;
  let maxLive = 0;
  for (const [t, d] of events) {
    cur += d;
    live += d > 0 ? 1 : -1;
    maxLive = Math.max(maxLive, live);
    peak = Math.max(peak, cur);
    points.push({ t, bytes: cur });
  }
  return { points, peak, live: act > 0 ? maxLive / v : 0 };
}

/** Simulates one optimizer step of a plan. Bad layouts give problems and no timeline. */
export function simulateStep(plan: Plan, cache: TimeCache = new TimeCache()): Simulation {
  const problems = layoutProblems(plan);
  if (problems.some((x) => x.severity === 'error')) return failed(plan, problems);
  problems.push(...timeAssumptionWarnings(plan));
  const p = posInt(plan.parallel.pp);
  const v = chunksPerStage(plan);
  const m = microbatchesPerStep(plan);
  const sched = plan.parallel.schedule;
  const st = allStageTimings(plan, cache);
  const cost = cache.params.overlapCost;
  // Chunk groups of the engine's interleaved schedule, as the memory model counts its in-flight passes.
  const g = interleavedGroupSize(pipelineEngineOf(plan.engine), p, m);
  const ops = st.map((_, s) => stageOps(sched, p, v, m, s, g));
  const acts = st.map((_, s) => activationBytesPerMicrobatch(plan, s) / v);
  const lanes = runPipeline(st, ops, m, v, sched === 'zb-h1' && p > 1, acts);
  if (!lanes) {
    return failed(plan, [...problems, { code: 'schedule-deadlock', severity: 'error', message: `The ${sched} schedule deadlocked for p=${p}, v=${v}, m=${m}.`, paths: ['parallel.schedule'] }]);
  }
  const pipeEnd = Math.max(...lanes.map((L) => L.t));
  const maxBusy = Math.max(...lanes.map((L) => L.busy));
  let step = 0;
  let exposedMax = 0;
  const syncExposed: number[] = [];
  // Each stage's gradient sync starts in its last backward; the optimizer waits for every stage (global gradient-norm
  // clipping all-reduces across the model-parallel group), then the post-step traffic runs.
  const ready = lanes.map((L, s) => {
    const T = st[s];
    if (!(T.gradSync > 0)) return L.t;
    if (T.gradSyncCooldown > 0) return chunkedSync(L, T, v, cost);
    const syncStart = L.t - Math.min(T.gradSyncWindow, L.lastB);
    L.blocks.push({ kind: 'comm', microbatch: -1, chunk: -1, start: syncStart, end: syncStart + T.gradSync, label: 'gradient sync (DP)', lane: 'comm' });
    // The hidden part of the sync still slows the backward it overlaps by overlapCost (shared/time/stepTime.ts).
    const hidden = T.gradSync - Math.max(0, syncStart + T.gradSync - L.t);
    return Math.max(L.t, syncStart + T.gradSync) + cost * hidden;
  });
  const R = Math.max(...ready);
  const timelines: StageTimeline[] = lanes.map((L, s) => {
    const T = st[s];
    const E = L.t;
    if (R > E) L.blocks.push({ kind: 'idle', microbatch: -1, chunk: -1, start: E, end: R, label: E < pipeEnd ? 'pipeline drain / gradient sync' : 'gradient sync', lane: 'compute' });
    const optEnd = R + T.optimizer;
    L.blocks.push({ kind: 'optimizer', microbatch: -1, chunk: -1, start: R, end: optEnd, label: 'optimizer step', lane: 'compute' });
    const postEnd = optEnd + T.postStep;
    if (T.postStep > 0) L.blocks.push({ kind: 'comm', microbatch: -1, chunk: -1, start: optEnd, end: postEnd, label: 'parameter all-gather / offload copies', lane: 'comm' });
    const end = postEnd + cache.params.stepOverhead;
    if (cache.params.stepOverhead > 0) L.blocks.push({ kind: 'optimizer', microbatch: -1, chunk: -1, start: postEnd, end, label: 'per-step overhead (fitted: grad-norm, clipping, data loading)', lane: 'compute' });
    step = Math.max(step, end);
    syncExposed[s] = ready[s] - E;
    const exposed = T.work.exposedCommSeconds * m + (T.forward + T.backward - T.work.forward - T.work.backward) * m + syncExposed[s] + T.postStep;
    exposedMax = Math.max(exposedMax, exposed);
    const base = staticBytes(plan, s);
    const mem = memoryCurve(L.mem, base, acts[s], v);
    return {
      stage: s, blocks: L.blocks, memory: mem.points, staticBytes: base, peakBytes: mem.peak, maxInFlight: mem.live,
      busySeconds: L.busy, idleSeconds: Math.max(0, pipeEnd - L.busy), exposedCommSeconds: exposed, parts: T.work.parts,
    };
  });
  const flops = stepFlops(plan, st);
  const provenance = timeContext(plan, cache).provenance;
  const world = posInt(plan.parallel.dp) * posInt(plan.parallel.tp) * p * posInt(plan.parallel.cp);
  const peak = peakFlops(plan);
  // Gradient-sync collectives carry the exposure this simulation found (their share of the sync that outlasted compute).
  const collectives = st.flatMap((T) => T.comm.collectives.map((c) => (GRAD_SYNC.has(c.id) && !(c.id === 'zero-grad-reduce-scatter' && c.countPerStep > 1)
    ? { ...c, exposedSeconds: T.gradSync > 0 ? Math.min(c.seconds, (syncExposed[T.stage] * c.seconds) / T.gradSync) : 0 } : c)));
  return {
    ok: true, schedule: sched, pp: p, vpp: v, microbatches: m, stepSeconds: step,
    bubbleFraction: maxBusy > 0 ? Math.max(0, pipeEnd - maxBusy) / maxBusy : 0, exposedCommSeconds: exposedMax,
    mfu: step > 0 ? flops.model / (step * world * peak) : 0, hfu: step > 0 ? flops.hardware / (step * world * peak) : 0,
    tokensPerSecond: step > 0 ? (plan.training.globalBatch * plan.training.seqLen) / step : 0,
    stages: timelines, collectives, problems, operatorTerms: operatorTerms(busiestStage(st), m, cache.params.stepOverhead, provenance), provenance,
  };
}

/** The stage with the longest micro-batch (forward + recompute + backward). */
function busiestStage(st: readonly StageTiming[]): StageTiming {
  return st.reduce((a, b) => (stageMicrobatchSeconds(b) > stageMicrobatchSeconds(a) ? b : a));
}
