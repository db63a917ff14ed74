/**
 * The Layouts dashboard's data: the server's `shardlens/planLayouts` answer turned into plain rows and Pareto points
 * (pure, no vscode). Figures that are not finite and non-negative are dropped, never drawn.
 */
import type { Layout } from '../../shared/planner/types';
import type { LayoutRowView, LayoutsView, PlanLayoutsResult } from '../../shared/protocol';
import { shardingLabel } from '../commands/layoutItems';
import { clean } from './components';

const ok = (x: number): boolean => Number.isFinite(x) && x >= 0;
const degree = (x: number): number => (Number.isInteger(x) && x >= 1 ? x : 1);

/** "tp 2 · pp 1 · dp 4 · ZeRO-1" (the Pareto points' tooltip label). */
function shortLabel(l: Layout): string {
  const axes = [`tp ${l.tp}`, `pp ${l.pp}`];
  if (l.vpp > 1) axes.push(`vpp ${l.vpp}`);
  if (l.cp > 1) axes.push(`cp ${l.cp}`);
  if (l.ep > 1) axes.push(`ep ${l.ep}`);
  axes.push(`dp ${l.dp}`, shardingLabel(l), `micro ${l.microBatch}×${l.gradAccum}`);
  return axes.join(' · ');
}

/** Turns the server's answer into the Layouts dashboard's view. */
export function toLayoutsView(r: PlanLayoutsResult): LayoutsView {
  const res = r.result;
  const rows: LayoutRowView[] = r.layouts
    .map((p, index) => ({ p, index }))
    .filter(({ p }) => ok(p.layout.stepSeconds) && ok(p.layout.peakReservedBytes))
    .map(({ p, index }) => ({
      index, tp: degree(p.layout.tp), pp: degree(p.layout.pp), vpp: degree(p.layout.vpp), cp: degree(p.layout.cp),
      ep: degree(p.layout.ep), dp: degree(p.layout.dp), sharding: shardingLabel(p.layout),
      microBatch: degree(p.layout.microBatch), gradAccum: degree(p.layout.gradAccum), recompute: p.layout.recompute,
      offload: p.layout.offload, stepSeconds: p.layout.stepSeconds, peakBytes: p.layout.peakReservedBytes,
      delta: p.delta, notes: [...p.notes], applicable: r.canApply && p.edits.length > 0 && !p.refusal,
      ...(p.refusal ? { refusal: p.refusal } : {}),
    }));
  const pareto = (res?.pareto ?? [])
    .filter((l) => ok(l.stepSeconds) && ok(l.peakReservedBytes))
    .map((l) => ({ label: shortLabel(l), stepSeconds: l.stepSeconds, peakBytes: l.peakReservedBytes }));
  let message: string | undefined;
  if (!res) message = `No layouts: ${r.problems.map((p) => p.message).join(' ') || 'the file does not resolve to a model and cluster.'}`;
  else if (!rows.length) message = 'No layout fits in GPU memory × the safety margin (shardlens.planner.safetyMargin).';
  else if (!r.canApply) message = `ShardLens cannot rewrite ${r.format ?? 'this'} files yet: the layouts are shown, not applied.`;
  return {
    uri: r.uri, gpus: degree(res?.gpus ?? 1), memoryLimitBytes: clean(res?.memoryLimitBytes), evaluated: Math.round(clean(res?.evaluated)),
    seconds: clean(res?.seconds), rows, pareto, ...(message ? { message } : {}),
  };
}
