/**
 * Turns the step simulator's result (shared/sim/types.ts `Simulation`, typed `unknown` in the LSP section of the
 * protocol) into the timeline view. It reads the fields defensively and drops anything malformed, so a change in the
 * simulator's output can hide the timeline but never break the dashboard.
 */
import type { SimulationView, TimelineKind, TimelineSegment } from '../../shared/protocol';

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const num = (x: unknown): number | undefined => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : undefined);
const arr = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);

/** Simulator block kinds (shared/sim BlockKind) mapped onto the timeline's kinds. */
const KINDS: Readonly<Record<string, TimelineKind>> = {
  forward: 'forward', backward: 'backward', recompute: 'recompute', comm: 'communication', communication: 'communication',
  optimizer: 'optimizer', idle: 'idle',
};

type Stream = 'compute' | 'comm';

function segmentOf(x: unknown): (TimelineSegment & { stream: Stream }) | undefined {
  if (!isObj(x)) return undefined;
  const kind = typeof x.kind === 'string' ? KINDS[x.kind] : undefined;
  const start = num(x.start);
  const end = num(x.end);
  if (!kind || start === undefined || end === undefined || end < start) return undefined;
  const mb = x.microbatch;
  const stream: Stream = x.lane === 'comm' ? 'comm' : 'compute';
  return {
    kind, start, end, stream,
    ...(typeof mb === 'number' && Number.isInteger(mb) && mb >= 0 ? { microbatch: mb } : {}),
    ...(typeof x.label === 'string' && x.label ? { label: x.label } : {}),
  };
}

/** The timeline view of a simulator result, or undefined when it holds no usable lane. */
export function simulationView(result: unknown): SimulationView | undefined {
  if (!isObj(result) || result.ok === false) return undefined;
  const lanes: SimulationView['lanes'][number][] = [];
  const memory: SimulationView['memory'][number][] = [];
  arr(result.stages).forEach((st, i) => {
    if (!isObj(st)) return;
    const stage = Math.floor(num(st.stage) ?? i);
    const segs = arr(st.blocks).map(segmentOf).filter((s): s is NonNullable<typeof s> => !!s);
    for (const stream of ['compute', 'comm'] as const) {
      const segments = segs.filter((s) => s.stream === stream).map(({ stream: _s, ...rest }) => rest);
      if (segments.length) lanes.push({ stage, stream, segments });
    }
    const points = arr(st.memory).flatMap((p) => {
      if (!isObj(p)) return [];
      const t = num(p.t);
      const bytes = num(p.bytes);
      return t !== undefined && bytes !== undefined ? [{ t, bytes }] : [];
    });
    if (points.length) memory.push({ stage, points });
  });
  if (!lanes.length) return undefined;
  const last = Math.max(...lanes.flatMap((l) => l.segments.map((s) => s.end)));
  return { stepSeconds: num(result.stepSeconds) ?? last, lanes, memory };
}
