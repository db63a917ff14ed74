/**
 * Chrome trace-event JSON of a simulation (opens in Perfetto and chrome://tracing): one process per pipeline stage,
 * thread 0 the compute stream, thread 1 the communication links, 'X' complete events in microseconds, and a memory counter.
 * Format: Chrome Trace Event Format (Google, "Trace Event Format" document).
 */
import type { Simulation } from './types';

export interface TraceEvent {
  readonly name: string;
  readonly ph: 'X' | 'M' | 'C';
  readonly pid: number;
  readonly tid: number;
  readonly ts: number;
  readonly dur?: number;
  readonly cat?: string;
  readonly args?: Readonly<Record<string, string | number>>;
}

export interface ChromeTrace {
  readonly traceEvents: readonly TraceEvent[];
  readonly displayTimeUnit: 'ms';
  readonly metadata: Readonly<Record<string, string | number>>;
}

const US = 1e6;

/** Converts a simulation to Chrome trace-event JSON (an object; JSON.stringify it to write a file). */
export function toChromeTrace(sim: Simulation): ChromeTrace {
  const ev: TraceEvent[] = [];
  for (const st of sim.stages) {
    const pid = st.stage;
    ev.push({ name: 'process_name', ph: 'M', pid, tid: 0, ts: 0, args: { name: `Stage ${st.stage}` } });
    ev.push({ name: 'process_sort_index', ph: 'M', pid, tid: 0, ts: 0, args: { sort_index: st.stage } });
    ev.push({ name: 'thread_name', ph: 'M', pid, tid: 0, ts: 0, args: { name: 'compute' } });
    ev.push({ name: 'thread_name', ph: 'M', pid, tid: 1, ts: 0, args: { name: 'communication' } });
    for (const b of st.blocks) {
      if (!(b.end > b.start)) continue;
      ev.push({
        name: b.label, ph: 'X', pid, tid: b.lane === 'compute' ? 0 : 1, ts: b.start * US, dur: (b.end - b.start) * US, cat: b.kind,
        args: { microbatch: b.microbatch, chunk: b.chunk },
      });
    }
    // The steady state of a long step ran but has no blocks: one event over its span says so in the trace.
    if (st.elided && st.elided.end > st.elided.start) {
      ev.push({
        name: `steady state: ${st.elided.passes} passes not drawn`, ph: 'X', pid, tid: 0, ts: st.elided.start * US, dur: (st.elided.end - st.elided.start) * US,
        cat: 'elided', args: { passes: st.elided.passes },
      });
    }
    for (const pt of st.memory) ev.push({ name: 'memory', ph: 'C', pid, tid: 0, ts: pt.t * US, args: { GiB: pt.bytes / 2 ** 30 } });
  }
  return {
    traceEvents: ev,
    displayTimeUnit: 'ms',
    metadata: {
      generator: 'ShardLens simulateStep', schedule: sim.schedule, pp: sim.pp, vpp: sim.vpp, microbatches: sim.microbatches,
      stepSeconds: sim.stepSeconds, bubbleFraction: sim.bubbleFraction,
    },
  };
}
