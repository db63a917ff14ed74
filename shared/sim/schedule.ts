/**
 * The order in which one pipeline stage runs its passes under each schedule. 'F' forward, 'B' backward
 * (with recomputation in front), 'W' weight-gradient half of backward (zero-bubble schedules only).
 */
import type { PipelineSchedule } from '../plan/types';

export interface Op {
  readonly kind: 'F' | 'B' | 'W';
  readonly mb: number;
  readonly chunk: number;
}

/** GPipe: all forwards, then all backwards (Huang et al. 2019). */
function gpipe(m: number): Op[] {
  const ops: Op[] = [];
  for (let i = 0; i < m; i++) ops.push({ kind: 'F', mb: i, chunk: 0 });
  for (let i = 0; i < m; i++) ops.push({ kind: 'B', mb: i, chunk: 0 });
  return ops;
}

/** 1F1B (PipeDream-Flush): p−s−1 warm-up forwards, then one forward one backward, then the remaining backwards (Narayanan et al. 2021 §2.2.1). */
function oneFOneB(p: number, m: number, s: number): Op[] {
  const warm = Math.min(p - s - 1, m);
  const ops: Op[] = [];
  for (let i = 0; i < warm; i++) ops.push({ kind: 'F', mb: i, chunk: 0 });
  for (let i = 0; i < m - warm; i++) {
    ops.push({ kind: 'F', mb: warm + i, chunk: 0 });
    ops.push({ kind: 'B', mb: i, chunk: 0 });
  }
  for (let i = m - warm; i < m; i++) ops.push({ kind: 'B', mb: i, chunk: 0 });
  return ops;
}

/**
 * The chunk passes of the interleaved schedule in forward order: groups of g micro-batches per chunk, the last group
 * taking what remains (Megatron-LM `get_schedule_table`; torch ScheduleInterleaved1F1B with g micro-batches per round).
 */
function interleavedOrder(m: number, v: number, g: number): { mb: number; chunk: number }[] {
  const out: { mb: number; chunk: number }[] = [];
  for (let lo = 0; lo < m; lo += g) {
    const hi = lo + g >= m ? m : lo + g;
    for (let c = 0; c < v; c++) for (let mb = lo; mb < hi; mb++) out.push({ mb, chunk: c });
  }
  return out;
}

/**
 * Interleaved 1F1B (Narayanan et al. 2021 §2.2.2; Megatron-LM `forward_backward_pipelining_with_interleaving`, torch
 * ScheduleInterleaved1F1B): 2(p−s−1) + (v−1)·g warm-up forwards over m·v chunk passes, then 1F1B, then cool-down;
 * backwards walk the chunks in reverse. g: micro-batches per chunk group (shared/memory/pipeline.ts interleavedGroupSize).
 */
function interleaved(p: number, v: number, m: number, s: number, g: number): Op[] {
  const total = m * v;
  const warm = Math.min(total, 2 * (p - s - 1) + (v - 1) * g);
  const order = interleavedOrder(m, v, g);
  const ops: Op[] = [];
  const f = (k: number): Op => ({ kind: 'F', mb: order[k].mb, chunk: order[k].chunk });
  const b = (k: number): Op => ({ kind: 'B', mb: order[k].mb, chunk: v - 1 - order[k].chunk });
  for (let k = 0; k < warm; k++) ops.push(f(k));
  for (let i = 0; i < total - warm; i++) {
    ops.push(f(warm + i));
    ops.push(b(i));
  }
  for (let k = total - warm; k < total; k++) ops.push(b(k));
  return ops;
}

/** Op order of one stage; ZB-H1 uses the 1F1B order and the simulator fills idle time with deferred 'W' passes (Qi et al. 2024). */
export function stageOps(schedule: PipelineSchedule, p: number, v: number, m: number, s: number, g = p): Op[] {
  if (p <= 1) return oneFOneB(1, m, 0);
  if (schedule === 'gpipe') return gpipe(m);
  if (schedule === 'interleaved' && v > 1) return interleaved(p, v, m, s, Math.max(1, Math.round(g)));
  return oneFOneB(p, m, s);
}
