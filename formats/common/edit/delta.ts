/**
 * The human-readable delta shown before a layout is applied: costs ("peak 71.2 → 54.3 GiB, step 9.8 → 7.1 s")
 * and the settings that change ("TP 1 → 8, micro batch 4 → 1").
 */
import type { LayoutChoice } from '../../../shared/planner/build';
import type { MemoryUnits } from '../../../shared/protocol/settings';
import { toUnit } from '../../../shared/units';

/** Peak bytes (reserved, what must fit) and step seconds of one layout, as estimated. */
export interface LayoutCost {
  readonly peakBytes: number;
  readonly stepSeconds: number;
}

function num(v: number, digits = 1): string {
  return Number.isFinite(v) ? v.toFixed(digits) : '?';
}

/** "peak 71.2 → 54.3 GiB, step 9.8 → 7.1 s", in the user's memory units. */
export function costDelta(before: LayoutCost, after: LayoutCost, units: MemoryUnits = 'GiB'): string {
  const stepDigits = Math.max(before.stepSeconds, after.stepSeconds) < 1 ? 3 : 1;
  return `peak ${num(toUnit(before.peakBytes, units))} → ${num(toUnit(after.peakBytes, units))} ${units}, ` +
    `step ${num(before.stepSeconds, stepDigits)} → ${num(after.stepSeconds, stepDigits)} s`;
}

function zeroLabel(c: LayoutChoice): string {
  if (c.sharding === 'fsdp' || c.sharding === 'fsdp2') return c.fsdpStrategy ?? `FSDP stage ${c.zero}`;
  if (c.sharding === 'ddp' || c.sharding === 'megatron-distopt') return c.distributedOptimizer ? 'distributed optimizer' : 'no distributed optimizer';
  return `ZeRO-${c.zero}`;
}

/** The settings that differ, e.g. "TP 1 → 8, PP 1 → 2, micro batch 4 → 1". */
export function settingsDelta(before: LayoutChoice, after: LayoutChoice): string {
  const parts: string[] = [];
  const axis = (label: string, a: unknown, b: unknown): void => {
    if (a !== b) parts.push(`${label} ${String(a)} → ${String(b)}`);
  };
  axis('TP', before.tp, after.tp);
  axis('PP', before.pp, after.pp);
  axis('VPP', before.vpp, after.vpp);
  axis('CP', before.cp, after.cp);
  axis('EP', before.ep, after.ep);
  axis('DP', before.dp, after.dp);
  axis('sharding', zeroLabel(before), zeroLabel(after));
  axis('micro batch', before.microBatch, after.microBatch);
  axis('accumulation', before.gradAccum, after.gradAccum);
  axis('recompute', before.recompute, after.recompute);
  axis('offload', before.offload, after.offload);
  return parts.length ? parts.join(', ') : 'no change';
}
