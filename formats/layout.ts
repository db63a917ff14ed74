/**
 * "Apply layout": rewrites the keys a layout decides in a config file's own format and returns minimal LSP-shaped
 * text edits plus the delta to show first. Pure functions of the text; the server registers the command.
 */
import type { ConfigFacts, FormatId } from '../shared/plan/facts';
import type { MemoryUnits } from '../shared/protocol/settings';
import type { PlanPath } from '../shared/plan/paths';
import type { Plan } from '../shared/plan/types';
import { layoutOfPlan, type LayoutChoice } from '../shared/planner/build';
import { coreEstimators } from '../shared/planner/estimators';
import { choiceOf } from '../shared/planner/search';
import type { Layout, PlannerEstimators } from '../shared/planner/types';
import { rewriteDeepSpeed } from './deepspeed/rewriter';
import { costDelta, settingsDelta, type LayoutCost } from './common/edit/delta';
import { rewriteMegatronScript } from './megatron/rewriter';
import { diffEdits, type TextEdit } from './common/edit/text';
import { rewriteTorchtitan } from './torchtitan/rewriter';
import type { LayoutTarget, Rewriter } from './common/edit/types';
import { rewriteAccelerate } from './accelerate/rewriter';
import { rewriteAxolotl } from './axolotl/rewriter';
import { rewriteLlamaFactory } from './llamafactory/rewriter';

export type { TextEdit } from './common/edit/text';
export type { LayoutTarget } from './common/edit/types';
export { costDelta, settingsDelta, type LayoutCost } from './common/edit/delta';

const REWRITERS: Partial<Record<FormatId, Rewriter>> = {
  deepspeed: rewriteDeepSpeed,
  'megatron-script': rewriteMegatronScript,
  torchtitan: rewriteTorchtitan,
  accelerate: rewriteAccelerate,
  axolotl: rewriteAxolotl,
  llamafactory: rewriteLlamaFactory,
};

/** Formats "Apply layout" can rewrite. */
export function canApplyLayout(format: FormatId): boolean {
  return REWRITERS[format] !== undefined;
}

export interface LayoutEdits {
  readonly edits: TextEdit[];
  /** Costs and settings, e.g. "peak 71.2 → 54.3 GiB, step 9.8 → 7.1 s; TP 1 → 8, micro batch 4 → 1". */
  readonly delta: string;
  /** What the file cannot hold and where to set it instead. */
  readonly notes: string[];
  /** Plan paths the file cannot hold for this layout (see Rewrite.unwritable). */
  readonly unwritable?: PlanPath[];
}

/**
 * The edits that apply `target` to a config file. `current` is the file's layout and `costs` the estimates before
 * and after, for the delta. Never throws: an unknown format or unparsable text gives no edits and a note.
 */
export function layoutEdits(
  format: FormatId, text: string, target: LayoutTarget,
  current?: LayoutChoice, costs?: { before: LayoutCost; after: LayoutCost }, facts?: ConfigFacts, units: MemoryUnits = 'GiB',
): LayoutEdits {
  const rewrite = REWRITERS[format];
  const settings = current ? settingsDelta(current, target) : '';
  const cost = costs ? costDelta(costs.before, costs.after, units) : '';
  const delta = [cost, settings].filter(Boolean).join('; ');
  if (!rewrite) return { edits: [], delta, notes: [`ShardLens cannot rewrite ${format} files yet.`] };
  try {
    const out = rewrite(text, target, facts);
    return { edits: diffEdits(text, out.text), delta, notes: out.notes, ...(out.unwritable ? { unwritable: out.unwritable } : {}) };
  } catch (err) {
    return { edits: [], delta, notes: [`The file could not be rewritten: ${(err as Error).message}`] };
  }
}

/** The target a planner layout gives for a plan's file (global batch and layer count from the plan). */
export function layoutTarget(plan: Plan, layout: Layout): LayoutTarget {
  return { ...choiceOf(layout), globalBatch: plan.training.globalBatch, layers: plan.model.layers };
}

/**
 * "Apply layout" in one call: the edits that write a planner `layout` into the file `plan` was read from, with the
 * delta from the plan's current layout and costs (full estimate) to the layout's.
 */
export function applyLayoutEdits(
  format: FormatId, text: string, plan: Plan, layout: Layout, facts?: ConfigFacts, estimators: PlannerEstimators = coreEstimators(),
  units: MemoryUnits = 'GiB',
): LayoutEdits {
  let before: LayoutCost | undefined;
  try {
    const full = estimators.full?.(plan);
    if (full && Number.isFinite(full.peakReservedBytes) && Number.isFinite(full.stepSeconds)) {
      before = { peakBytes: full.peakReservedBytes, stepSeconds: full.stepSeconds };
    }
  } catch {
    before = undefined;
  }
  const after = { peakBytes: layout.peakReservedBytes, stepSeconds: layout.stepSeconds };
  return layoutEdits(format, text, layoutTarget(plan, layout), layoutOfPlan(plan), before ? { before, after } : undefined, facts, units);
}
