/**
 * The `shardlens/analysis` and `shardlens/simulate` results built from a document analysis. The analysis carries no
 * simulation: views that draw the timeline ask `shardlens/simulate` when they show, so edits never run the simulator.
 */
import type { AnalysisResult, AnalysisSimulation } from '../../shared/protocol';
import type { CoreApi } from '../analysis/core';
import type { DocumentAnalysis } from '../analysis/analyze';
import { assumptionFix } from './assumptionFixes';
import { buildDiagnostics } from './diagnostics';
import { verdictText } from './verdict';
import { readInputs } from '../../shared/plan/inputs';
import { isPlanPath } from '../../shared/plan/paths';

/** Runs the step simulator; a throw becomes a problem. */
export function simulationOf(a: DocumentAnalysis, api: CoreApi): AnalysisSimulation | undefined {
  if (!a.plan) return undefined;
  try {
    return api.simulate(a.plan);
  } catch (e) {
    return { ok: false, problems: [{ code: 'internal-error', severity: 'info', message: `Simulation failed: ${e instanceof Error ? e.message : String(e)}`, paths: [] }] };
  }
}

export function buildAnalysisResult(a: DocumentAnalysis): AnalysisResult {
  const diags = buildDiagnostics(a);
  return {
    uri: a.uri, version: a.version, format: a.format, ...(a.symbol ? { symbol: a.symbol } : {}), plan: a.plan, inputs: a.plan ? readInputs(a.plan, a.facts?.facts) : undefined, memory: a.memory, replicated: a.memory?.replicated,
    collectives: a.collectives, stepTime: a.stepTime, verdict: verdictText(a),
    assumptions: a.assumptions.map((x) => {
      const fix = assumptionFix(a, x);
      return fix ? { ...x, fix } : x;
    }),
    problems: diags.map((d) => ({
      code: String(d.code ?? ''), severity: d.severity === 1 ? 'error' : d.severity === 2 ? 'warning' : 'info',
      message: typeof d.message === 'string' ? d.message : d.message.value, paths: ((d.data as { paths?: unknown[] } | undefined)?.paths ?? []).filter(isPlanPath), range: d.range,
    })),
  };
}
