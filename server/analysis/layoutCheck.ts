/**
 * Apply Layout keeps its promise: the edits of a planned layout are applied to the text, the result is read again, and
 * the layout the file would then state is compared with the one the figures were computed for. Any key the figures
 * rest on that the edits cannot write (a DeepSpeed "auto", PP set in code, recomputation set by the trainer) turns
 * into a refusal that says which and why; "the file already has this layout" is said only when it does.
 */
import { layoutOfPlan, type LayoutChoice } from '../../shared/planner/build';
import type { Layout } from '../../shared/planner/types';
import type { Plan } from '../../shared/plan/types';
import type { PlannedLayout } from '../../shared/protocol';
import { applyEdits } from '../features/edits';

/** Reads an edited text of the document again; undefined when it no longer resolves to a plan. */
export type Reparse = (text: string) => Plan | undefined;

/** The axes a layout's figures rest on, with the words the refusal uses. */
const AXES: readonly { readonly label: string; readonly get: (c: LayoutChoice) => unknown }[] = [
  { label: 'TP', get: (c) => c.tp },
  { label: 'PP', get: (c) => c.pp },
  { label: 'VPP', get: (c) => c.vpp },
  { label: 'CP', get: (c) => c.cp },
  { label: 'EP', get: (c) => c.ep },
  { label: 'DP', get: (c) => c.dp },
  { label: 'sharding stage', get: (c) => (c.sharding === 'ddp' ? 0 : c.zero) },
  { label: 'distributed optimizer', get: (c) => c.distributedOptimizer },
  { label: 'shard group', get: (c) => c.shardGroup ?? c.dp },
  { label: 'micro batch', get: (c) => c.microBatch },
  { label: 'gradient accumulation', get: (c) => c.gradAccum },
  { label: 'recomputation', get: (c) => c.recompute },
  { label: 'optimizer offload', get: (c) => c.offload },
  { label: 'layers per stage', get: (c) => (c.stageLayers && c.stageLayers.length ? c.stageLayers.join('/') : null) },
];

/** "micro batch 2 (the file would say 8), recomputation selective (the file would say none)". */
export function mismatches(want: LayoutChoice, got: LayoutChoice): string[] {
  const out: string[] = [];
  for (const a of AXES) {
    const w = a.get(want);
    const g = a.get(got);
    if (w !== g && !(a.label === 'layers per stage' && (w === null || g === null))) {
      out.push(`${a.label} ${String(w ?? 'none')} (the file would say ${String(g ?? 'none')})`);
    }
  }
  return out;
}

/** True when the plan already has every axis of the layout. */
export function hasLayout(plan: Plan, layout: Layout): boolean {
  return mismatches(layout, layoutOfPlan(plan)).length === 0;
}

/**
 * The planned layout after the check: unchanged when its edits deliver it; with empty edits and a refusal when they
 * cannot (or nothing can be written although the file differs).
 */
export function checkPlannedLayout(text: string, plan: Plan, p: PlannedLayout, reparse: Reparse): PlannedLayout {
  const why = (what: string) => [what, ...p.notes].join(' ');
  if (!p.edits.length) {
    if (hasLayout(plan, p.layout)) return p;
    const diff = mismatches(p.layout, layoutOfPlan(plan));
    return { ...p, refusal: why(`ShardLens cannot write ${diff.join(', ')} into this file.`) };
  }
  const after = reparse(applyEdits(text, p.edits));
  if (!after) return { ...p, edits: [], refusal: why('The edited file would no longer resolve to a plan.') };
  const diff = mismatches(p.layout, layoutOfPlan(after));
  if (!diff.length) return p;
  return { ...p, edits: [], refusal: why(`The edits cannot set ${diff.join(', ')}, so the promised figures would not hold.`) };
}
