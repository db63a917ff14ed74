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

/** The k-th forward (or backward) of the interleaved schedule: groups of p micro-batches per chunk. */
function interleavedOp(k: number, p: number, v: number, backward: boolean): Op {
  const group = Math.floor(k / (p * v));
  const within = k % (p * v);
  const c = Math.floor(within / p);
  return { kind: backward ? 'B' : 'F', mb: group * p + (within % p), chunk: backward ? v - 1 - c : c };
}

/**
 * Interleaved 1F1B (Narayanan et al. 2021 §2.2.2; Megatron-LM `forward_backward_pipelining_with_interleaving`):
 * 2(p−s−1) + (v−1)·p warm-up forwards over m·v chunk passes, then 1F1B, then cool-down. Needs m % p = 0.
 */
function interleaved(p: number, v: number, m: number, s: number): Op[] {
  const total = m * v;
  const warm = Math.min(total, 2 * (p - s - 1) + (v - 1) * p);
  const ops: Op[] = [];
  const f = (k: number): Op => interleavedOp(k, p, v, false);
  const b = (k: number): Op => interleavedOp(k, p, v, true);
  for (let k = 0; k < warm; k++) ops.push(f(k));
  for (let i = 0; i < total - warm; i++) {
    ops.push(f(warm + i));
    ops.push(b(i));
  }
  for (let k = total - warm; k < total; k++) ops.push(b(k));
  return ops;
}

/** Op order of one stage; ZB-H1 uses the 1F1B order and the simulator fills idle time with deferred 'W' passes (Qi et al. 2024). */
export function stageOps(schedule: PipelineSchedule, p: number, v: number, m: number, s: number): Op[] {
  if (p <= 1) return oneFOneB(1, m, 0);
  if (schedule === 'gpipe') return gpipe(m);
  if (schedule === 'interleaved' && v > 1) return interleaved(p, v, m, s);
  return oneFOneB(p, m, s);
}
