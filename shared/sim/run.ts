/**
 * The pipeline schedule run pass by pass, shared by the step simulator (shared/sim/simulate.ts, with its timeline) and
 * the step-time estimate (shared/time/estimate.ts, times only): every stage runs its schedule's passes in order, a
 * pass starts when its stage is free and its inputs have arrived (the previous stage's pass plus one pipeline send),
 * the gradient sync overlaps the last backward. One run, so the estimate and the Simulate Step timeline are the same
 * number; the planner's fast path (shared/time/stepTime.ts stepSecondsFast) runs it over its scratch stage records.
 */
import type { Plan } from '../plan/types';
import { groupOf } from '../time/shape';
import { backwardComm, forwardComm, newLane, type Lane, type RunStage } from './lane';
import { gradientsReady } from './gradientSync';
import { stageOps, type Op } from './schedule';
import type { Block } from './types';


/**
 * Passes drawn at each end of a stage's pass order when a timeline records: the rest run and count (step time, totals,
 * peak memory) but keep no blocks, so a step of 10⁶ micro-batches gives a timeline of bounded size.
 */
export interface DrawWindow {
  readonly head: number;
  readonly tail: number;
}

/** Pass orders of recent (schedule, p, v, m, group) shapes: the same shapes recur across a model's estimates (read-only). */
const OPS = new Map<string, Op[][]>();
const OPS_KEPT = 256;

/** Each stage's pass order for the plan's schedule (chunk groups of the engine's interleaved schedule, as the memory model counts them). */
export function planOps(plan: Plan, p: number, v: number, m: number): Op[][] {
  const g = groupOf(plan, m);
  const key = `${plan.parallel.schedule}|${p}|${v}|${m}|${g}`;
  let ops = OPS.get(key);
  if (!ops) {
    ops = Array.from({ length: p }, (_, s) => stageOps(plan.parallel.schedule, p, v, m, s, g));
    if (OPS.size >= OPS_KEPT) OPS.delete(OPS.keys().next().value as string);
    OPS.set(key, ops);
  }
  return ops;
}

/**
 * Runs the passes of every stage; returns the lanes, or undefined on a schedule deadlock. `record` fills the lanes'
 * blocks, totals and memory points (the timeline); without it only times are kept. With `window`, a lane keeps the
 * blocks of its first `head` and last `tail` passes only; the passes between run the same and are summed in `elided`. Schedules without deferred weight-gradient
 * passes are a longest path over a fixed pass order, so their lanes are advanced one after another (the same
 * arithmetic, the same numbers); ZB-H1 decides when to run a deferred pass from which inputs have arrived, so it keeps
 * the event order (the lane with the earliest clock moves first).
 */
export function runPipeline(
  st: readonly RunStage[], ops: Op[][], m: number, v: number, zb: boolean, acts: readonly number[], record: boolean, window?: DrawWindow,
): Lane[] | undefined {
  if (!zb && !record) return runFixedOrder(st, ops, m, v);
  const p = st.length;
  const n = p * m * v;
  const fEnd = new Float64Array(n).fill(-1);
  const bEnd = new Float64Array(n).fill(-1);
  const idx = (s: number, mb: number, c: number) => (s * m + mb) * v + c;
  const lanes: Lane[] = ops.map((o) => newLane(o, v, record));
  const total = ops.reduce((a, o) => a + o.length, 0);
  let done = 0;
  /** Whether the lane's current pass is drawn (its position in the pass order is inside the window's ends). */
  const drawn = (L: Lane): boolean => !window || L.pos < window.head || L.pos >= L.ops.length - window.tail;
  const push = (L: Lane, b: Block) => {
    if (b.lane === 'compute') {
      L.totals[b.kind] += b.end - b.start;
      if (b.kind !== 'idle') L.busy += b.end - b.start;
    }
    if (drawn(L)) L.blocks.push(b);
  };
  /** A pass that is not drawn opens the lane's elided span (with a memory point where it starts) or counts in it. */
  const elide = (L: Lane, start: number) => {
    if (!L.elided) {
      L.elided = { start, end: start, passes: 0 };
      L.mem.push([start, L.act]);
    }
    L.elided.passes++;
  };
  /** Activation bytes allocated (+) or freed (−) at time t: the running total, its peak and the live chunks. */
  const memEvent = (L: Lane, t: number, bytes: number) => {
    L.act += bytes;
    if (L.act > L.actPeak) L.actPeak = L.act;
    if (drawn(L)) L.mem.push([t, L.act]);
  };
  /**
   * One pass on the compute stream: the compute part, then the communication it waits for (the exposed TP/EP/CP and
   * ZeRO-3/offload traffic counted in the pass's seconds), so the timeline shows what the Communication tab lists.
   */
  const pass = (L: Lane, kind: 'forward' | 'backward' | 'recompute', start: number, dur: number, comm: number, mb: number, chunk: number, tag: 'F' | 'B' | 'R' | 'W'): number => {
    if (record) {
      const c = Math.min(dur, Math.max(0, comm));
      const l = drawn(L) ? `${tag}${mb}.${chunk}${tag === 'W' ? ' weight grad' : ''}` : '';
      push(L, { kind, microbatch: mb, chunk, start, end: start + dur - c, label: l, lane: 'compute' });
      if (c > 0) push(L, { kind: 'comm', microbatch: mb, chunk, start: start + dur - c, end: start + dur, label: l && `${l}: exposed communication`, lane: 'compute' });
    } else {
      L.busy += dur;
    }
    return start + dur;
  };
  const runW = (L: Lane, s: number) => {
    const w = L.pendingW.shift() as Op;
    const T = st[s];
    const d = T.backward / v / 2;
    if (record && !drawn(L)) elide(L, L.t);
    pass(L, 'backward', L.t, d, backwardComm(T) / v / 2, w.mb, w.chunk, 'W');
    L.t += d;
    if (L.elided && !drawn(L)) L.elided.end = L.t;
    if (record) memEvent(L, L.t, -acts[s]);
    L.live--;
  };
  /** Ready time of lane s's next pass (its inputs from the neighbouring stage plus one pipeline send), −1 when not produced yet. */
  const readyOf = (s: number, op: Op): number => {
    let ready = 0;
    let e1: number;
    if (op.kind === 'F') {
      if (s > 0) {
        e1 = fEnd[idx(s - 1, op.mb, op.chunk)];
        if (e1 < 0) return -1;
        ready = e1 + st[s - 1].p2p;
      } else if (op.chunk > 0) {
        e1 = fEnd[idx(p - 1, op.mb, op.chunk - 1)];
        if (e1 < 0) return -1;
        ready = e1 + st[p - 1].p2p;
      }
      return ready;
    }
    e1 = fEnd[idx(s, op.mb, op.chunk)];
    if (e1 < 0) return -1;
    ready = e1;
    if (s < p - 1) {
      e1 = bEnd[idx(s + 1, op.mb, op.chunk)];
      if (e1 < 0) return -1;
      if (e1 + st[s + 1].p2p > ready) ready = e1 + st[s + 1].p2p;
    } else if (op.chunk < v - 1) {
      e1 = bEnd[idx(0, op.mb, op.chunk + 1)];
      if (e1 < 0) return -1;
      if (e1 + st[0].p2p > ready) ready = e1 + st[0].p2p;
    }
    return ready;
  };
  /** Runs lane s's next pass from `start`. */
  const run = (L: Lane, s: number, op: Op, start: number) => {
    const T = st[s];
    if (record && !drawn(L)) elide(L, L.t);
    if (record && start > L.t) push(L, { kind: 'idle', microbatch: -1, chunk: -1, start: L.t, end: start, label: 'bubble', lane: 'compute' });
    let end = start;
    if (op.kind === 'F') {
      end = pass(L, 'forward', start, T.forward / v, forwardComm(T) / v, op.mb, op.chunk, 'F');
      fEnd[idx(s, op.mb, op.chunk)] = end;
      if (record) memEvent(L, start, acts[s]);
      L.live++;
      if (L.live > L.maxLive) L.maxLive = L.live;
      if (record && (s < p - 1 || op.chunk < v - 1) && T.p2p > 0) {
        push(L, { kind: 'comm', microbatch: op.mb, chunk: op.chunk, start: end, end: end + T.p2p, label: drawn(L) ? `send activations F${op.mb}.${op.chunk}` : '', lane: 'comm' });
      }
    } else {
      const r = T.recompute / v;
      if (r > 0) pass(L, 'recompute', start, r, T.work.parts.recompute.comm / v, op.mb, op.chunk, 'R');
      const half = zb ? 0.5 : 1;
      end = pass(L, 'backward', start + r, (T.backward / v) * half, (backwardComm(T) / v) * half, op.mb, op.chunk, 'B');
      bEnd[idx(s, op.mb, op.chunk)] = end;
      L.lastB = end - start - r;
      L.chunkEnd[op.chunk] = end;
      if (zb) L.pendingW.push(op);
      else {
        if (record) memEvent(L, end, -acts[s]);
        L.live--;
      }
      if (record && (s > 0 || op.chunk > 0) && T.p2p > 0) {
        push(L, { kind: 'comm', microbatch: op.mb, chunk: op.chunk, start: end, end: end + T.p2p, label: drawn(L) ? `send gradients B${op.mb}.${op.chunk}` : '', lane: 'comm' });
      }
    }
    L.t = end;
    if (L.elided && !drawn(L)) L.elided.end = end;
    L.pos++;
    done++;
    if (L.pos === L.ops.length) while (L.pendingW.length) runW(L, s);
  };
  if (!zb) {
    // A fixed pass order per stage: advance each lane as far as its inputs allow, until every pass has run.
    while (done < total) {
      const before = done;
      for (let s = 0; s < p; s++) {
        const L = lanes[s];
        while (L.pos < L.ops.length) {
          const op = L.ops[L.pos];
          const ready = readyOf(s, op);
          if (ready < 0) break;
          run(L, s, op, Math.max(L.t, ready));
        }
      }
      if (done === before) return undefined;
    }
    return lanes;
  }
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
    const ready = readyOf(s, op);
    const known = ready >= 0;
    // ZB-H1 keeps 1F1B's memory bound: no new forward while p − s chunks are alive (Qi et al. 2024 §3).
    const full = op.kind === 'F' && L.live >= (p - s) * v;
    if (L.pendingW.length > 0 && (!known || ready > L.t || full)) {
      runW(L, s);
      continue;
    }
    if (!known) {
      L.blocked = true;
      continue;
    }
    run(L, s, op, Math.max(L.t, ready));
    if (s > 0) lanes[s - 1].blocked = false;
    if (s < p - 1) lanes[s + 1].blocked = false;
    lanes[0].blocked = false;
    lanes[p - 1].blocked = false;
  }
  return lanes;
}

/** Each stage's passes as integers, 2·(mb·v + chunk) + (1 for a backward), per pass order (kept with it). */
const CODES = new WeakMap<Op[][], Int32Array[]>();

function passCodes(ops: Op[][], v: number): Int32Array[] {
  let codes = CODES.get(ops);
  if (!codes) {
    codes = ops.map((list) => Int32Array.from(list, (op) => 2 * (op.mb * v + op.chunk) + (op.kind === 'F' ? 0 : 1)));
    CODES.set(ops, codes);
  }
  return codes;
}

/**
 * runPipeline for a fixed pass order without a timeline (the estimate and the planner's fast path): the same starts
 * and ends, with the per-pass seconds computed once per stage, the passes read as integers and no closures, as they
 * run it for every plan they time.
 */
function runFixedOrder(st: readonly RunStage[], ops: Op[][], m: number, v: number): Lane[] | undefined {
  const p = st.length;
  const mv = m * v;
  const fEnd = new Float64Array(p * mv).fill(-1);
  const bEnd = new Float64Array(p * mv).fill(-1);
  const fwd = new Float64Array(p), rec = new Float64Array(p), bwd = new Float64Array(p), send = new Float64Array(p);
  for (let s = 0; s < p; s++) {
    fwd[s] = st[s].forward / v; rec[s] = st[s].recompute / v; bwd[s] = st[s].backward / v; send[s] = st[s].p2p;
  }
  const codes = passCodes(ops, v);
  const lanes: Lane[] = ops.map((o) => newLane(o, v, false));
  let left = 0;
  for (const o of ops) left += o.length;
  const last = (p - 1) * mv;
  // Sweeps alternate direction: forwards flow to higher stages within an upward sweep, backwards within a downward one.
  let down = false;
  while (left > 0) {
    const before = left;
    for (let i = 0; i < p; i++) {
      const s = down ? p - 1 - i : i;
      const L = lanes[s];
      const list = codes[s];
      const n = list.length;
      const base = s * mv;
      let t = L.t, pos = L.pos, busy = L.busy;
      while (pos < n) {
        const code = list[pos];
        const j = code >> 1;
        const k = base + j;
        let ready = 0;
        if ((code & 1) === 0) {
          if (s > 0) {
            const e = fEnd[k - mv];
            if (e < 0) break;
            ready = e + send[s - 1];
          } else if (j % v > 0) {
            // Chunk c of stage 0 takes chunk c − 1 from the last stage.
            const e = fEnd[last + j - 1];
            if (e < 0) break;
            ready = e + send[p - 1];
          }
          const end = (ready > t ? ready : t) + fwd[s];
          fEnd[k] = end;
          busy += fwd[s];
          t = end;
        } else {
          const own = fEnd[k];
          if (own < 0) break;
          ready = own;
          if (s < p - 1) {
            const e = bEnd[k + mv];
            if (e < 0) break;
            if (e + send[s + 1] > ready) ready = e + send[s + 1];
          } else if (j % v < v - 1) {
            // The last stage's backward of chunk c takes stage 0's of chunk c + 1.
            const e = bEnd[j + 1];
            if (e < 0) break;
            if (e + send[0] > ready) ready = e + send[0];
          }
          const start = ready > t ? ready : t;
          const end = start + rec[s] + bwd[s];
          bEnd[k] = end;
          busy += rec[s] + bwd[s];
          t = end;
        }
        pos++;
        left--;
      }
      L.t = t;
      L.pos = pos;
      L.busy = busy;
    }
    if (left === before) return undefined;
    down = !down;
  }
  // The last backward's length and each chunk's last backward end (the gradient syncs start there), read once at the end.
  for (let s = 0; s < p; s++) {
    const L = lanes[s];
    L.lastB = bwd[s];
    const chunkEnd = L.chunkEnd;
    for (let k = s * mv, e = k + mv; k < e; k++) if (bEnd[k] > chunkEnd[k % v]) chunkEnd[k % v] = bEnd[k];
  }
  return lanes;
}

/**
 * One stage without a pipeline: its passes run back to back (nothing to wait for), so the run ends at m·(F + R + B)
 * with no per-pass loop (gradient accumulation can be large: a step of 10⁶ micro-batches stays O(1)).
 */
function singleStage(T: RunStage, m: number): Lane {
  const t = m * (T.forward + T.recompute + T.backward);
  const L = newLane([], 1, false);
  L.t = t; L.busy = t; L.lastB = T.backward; L.chunkEnd[0] = t;
  return L;
}

/** The schedule's times without a timeline: when the last pass ends, when every stage's gradients are ready, and the step. */
export interface ScheduleTimes {
  /** End of the last pass of any stage (the pipeline, fill and drain included). */
  readonly pipelineEnd: number;
  /** Every stage's gradients are ready (the optimizer waits for all: global gradient-norm clipping). */
  readonly gradientsReady: number;
  /** Step seconds: gradients ready + the slowest stage's optimizer and post-step traffic + the fixed per-step overhead. */
  readonly stepSeconds: number;
  /** Most compute-busy seconds of a stage (passes, with the communication they wait for). */
  readonly maxBusy: number;
}

/** Runs the plan's schedule over its stage timings (times only); undefined on a schedule deadlock. */
export function scheduleTimes(plan: Plan, st: readonly RunStage[], m: number, v: number, cost: number, stepOverhead: number): ScheduleTimes | undefined {
  const p = st.length;
  const lanes = p === 1 && v === 1 ? [singleStage(st[0], m)] : runPipeline(st, planOps(plan, p, v, m), m, v, plan.parallel.schedule === 'zb-h1' && p > 1, [], false);
  if (!lanes) return undefined;
  let pipelineEnd = 0, maxBusy = 0;
  for (const L of lanes) {
    if (L.t > pipelineEnd) pipelineEnd = L.t;
    if (L.busy > maxBusy) maxBusy = L.busy;
  }
  const ready = gradientsReady(lanes, st, v, cost, false);
  const R = Math.max(...ready);
  let tail = 0;
  for (const T of st) tail = Math.max(tail, T.optimizer + T.postStep);
  return { pipelineEnd, gradientsReady: R, stepSeconds: R + tail + stepOverhead, maxBusy };
}
