/**
 * The predicted effect of a quick fix that edits one switch: its edits must read back as the what-if (the file says
 * what the estimate supposes), and the delta is offered only when it lowers the peak.
 */
import type { CoreApi } from '../analysis/core';
import type { DocumentAnalysis } from '../analysis/analyze';
import { deltaOf, type Delta } from './figures';
import { readsBack } from '../../formats/whatIfEdit';
import type { TextEdit } from '../../formats/common/edit/text';
import type { FactValue } from '../../shared/plan/facts';
import type { PlanPath } from '../../shared/plan/paths';

/**
 * The delta of setting `path` to `value` with `edits`, or undefined when the edit does not read back or (unless `costs`,
 * a fix that is right whatever it costs) saves nothing.
 */
export function fixDelta(a: DocumentAnalysis, api: CoreApi, path: PlanPath, value: FactValue, label: string, edits: TextEdit[] | undefined, costs = false): Delta | undefined {
  if (!a.memory || !a.whatIf || !edits?.length) return undefined;
  const overrides = { [path]: value } as Partial<Record<PlanPath, FactValue>>;
  if (!readsBack(a, overrides, edits)) return undefined;
  const plan = a.whatIf(overrides);
  if (!plan) return undefined;
  const d = deltaOf(api, a.memory, a.collectives, { whatIf: { label, path, value, overrides }, plan, edits, how: 'literal' }, a.stepTime?.stepSeconds);
  return d && (costs || d.peakAfter < d.peakBefore) ? d : undefined;
}
