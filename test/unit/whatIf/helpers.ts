/** Runs a key's what-ifs the way a hover or quick fix does, over in-memory files, and re-reads each edited file. */
import assert from 'node:assert/strict';
import { applyTextEdits } from '../../../formats/common/edit/text';
import { expressibleWhatIfs } from '../../../formats/whatIfEdit';
import { loadConfigGraph, modelLookup, type WorkspaceHost } from '../../../server/formats/workspace';
import { resolvePlan, type FactOverrides } from '../../../shared/plan/resolve';
import type { PlanPath } from '../../../shared/plan/paths';

/** A host over in-memory files (path → text). */
export function memoryHost(files: Record<string, string>): WorkspaceHost {
  return { root: '/ws', readFile: (p) => files[p], exists: (p) => p in files, listDir: () => [] };
}

/** Loads `path`, runs the what-ifs of `key`, and re-reads the file each what-if's edit produces. */
export function whatIfs(files: Record<string, string>, path: string, key: PlanPath) {
  const host = memoryHost(files);
  const ctx = { lookupModel: modelLookup(host) };
  const g = loadConfigGraph(path, host, ctx);
  const plan = g.resolved.plan;
  assert.ok(plan, 'the file resolves');
  const file = { uri: path, text: files[path]!, format: g.primary.format, facts: g.primary };
  const resolveWith = (o: FactOverrides) => resolvePlan(g.primary, g.related, ctx, o).plan;
  return {
    plan,
    results: expressibleWhatIfs(file, plan, key, resolveWith).map((w) => {
      const text = applyTextEdits(files[path]!, w.edits);
      return { ...w, text, edited: loadConfigGraph(path, memoryHost({ ...files, [path]: text }), ctx).resolved.plan! };
    }),
  };
}
