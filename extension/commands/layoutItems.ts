/**
 * Quick-pick text for the planner's layouts (pure: no vscode, so unit tests import it). The label says the layout,
 * the description its predicted step time and peak, the detail what applying it changes.
 */
import type { Layout } from '../../shared/planner/types';
import type { MemoryUnits, PlannedLayout } from '../../shared/protocol';
import { formatBytes, formatSeconds } from '../../shared/units';

/** The framework's name for the layout's sharding, e.g. "ZeRO-2", "FSDP FULL_SHARD", "dist-opt", "DDP". */
export function shardingLabel(l: Layout): string {
  if (l.fsdpStrategy) return `FSDP ${l.fsdpStrategy}`;
  if (l.sharding === 'ddp' || l.sharding === 'megatron-distopt') return l.distributedOptimizer ? 'dist-opt' : 'DDP';
  return `ZeRO-${l.zero}`;
}

/** "tp 2 · pp 1 · vpp 1 · cp 1 · ep 1 · dp 4 · ZeRO-1 · micro 2×8 · recompute selective · offload none". */
export function layoutLabel(l: Layout): string {
  return [
    `tp ${l.tp}`, `pp ${l.pp}`, `vpp ${l.vpp}`, `cp ${l.cp}`, `ep ${l.ep}`, `dp ${l.dp}`, shardingLabel(l),
    `micro ${l.microBatch}×${l.gradAccum}`, `recompute ${l.recompute}`, `offload ${l.offload}`,
  ].join(' · ');
}

/** "step 1.52 s · peak 61.2 GiB". */
export function layoutDescription(l: Layout, units: MemoryUnits): string {
  return `step ${formatSeconds(l.stepSeconds)} · peak ${formatBytes(l.peakReservedBytes, units)}`;
}

/** The delta and notes, e.g. "peak 71.2 → 54.3 GiB, step 9.8 → 7.1 s; TP 1 → 8 — Micro batch is set in …". */
export function layoutDetail(p: PlannedLayout): string {
  if (p.refusal) return `cannot apply: ${p.refusal}`;
  const delta = p.edits.length ? p.delta || 'changes the file' : 'the file already has this layout';
  return [delta, ...p.notes].join(' — ');
}

/** Quick-pick entries for the layouts, best first; `index` is the layout's rank in the planner's result. */
export function layoutItems(layouts: readonly PlannedLayout[], units: MemoryUnits): { label: string; description: string; detail: string; index: number }[] {
  return layouts.map((p, index) => ({
    label: `${index + 1}. ${layoutLabel(p.layout)}`, description: layoutDescription(p.layout, units), detail: layoutDetail(p), index,
  }));
}
