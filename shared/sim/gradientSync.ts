/**
 * The gradient sync after a stage's last backward, on the lanes of a schedule run (shared/sim/run.ts): when each
 * stage's gradients are ready for the optimizer, and with a timeline, the sync's blocks on the communication lane.
 */
import { addBlock, type Lane, type RunStage } from './lane';

/**
 * Megatron's interleaved gradient sync on one lane: each chunk's reduce (t/v) is launched when the chunk's last backward
 * ends (chunk 0's inside its last backward, behind the bucket window), and the reduces run one after another on the
 * communication stream (shared/time/syncExposure.ts interleavedSyncHidden). Returns when the lane's gradients are ready.
 */
function chunkedSync(L: Lane, T: RunStage, v: number, cost: number, record: boolean): number {
  const d = T.gradSync / v;
  const arrivals = L.chunkEnd.map((e, c) => (c === 0 ? L.t - Math.min(T.gradSyncWindow, L.lastB) : e)).sort((a, b) => a - b);
  let free = -Infinity;
  let hidden = 0;
  for (const a of arrivals) {
    const start = Math.max(free, a);
    free = start + d;
    hidden += Math.max(0, Math.min(free, L.t) - start);
    if (record) addBlock(L, { kind: 'comm', microbatch: -1, chunk: -1, start, end: free, label: 'gradient sync (DP, one chunk)', lane: 'comm' });
  }
  return Math.max(L.t, free) + cost * hidden;
}

/**
 * When each stage's gradients are ready after its last backward: the sync starts in that backward (behind the bucket
 * window; per chunk under Megatron's interleaving) and its hidden part still slows the backward it overlaps by
 * `cost` (fitted overlapCost, shared/time/stepTime.ts exposedGradSync).
 */
export function gradientsReady(lanes: readonly Lane[], st: readonly RunStage[], v: number, cost: number, record: boolean): number[] {
  return lanes.map((L, s) => {
    const T = st[s];
    if (!(T.gradSync > 0)) return L.t;
    if (T.gradSyncCooldown > 0) return chunkedSync(L, T, v, cost, record);
    const syncStart = L.t - Math.min(T.gradSyncWindow, L.lastB);
    if (record) addBlock(L, { kind: 'comm', microbatch: -1, chunk: -1, start: syncStart, end: syncStart + T.gradSync, label: 'gradient sync (DP)', lane: 'comm' });
    const hidden = T.gradSync - Math.max(0, syncStart + T.gradSync - L.t);
    return Math.max(L.t, syncStart + T.gradSync) + cost * hidden;
  });
}
