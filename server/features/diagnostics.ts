/**
 * Diagnostics: the parser's own findings (already at ranges), the core's problems placed at the keys of their plan
 * paths, and the headline "does not fit" naming the stage.
 */
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver';
import type { Problem, Severity } from '../../shared/plan/types';
import type { DocumentAnalysis } from '../analysis/analyze';
import { rangeForPaths, TOP_RANGE } from './facts';
import { peakStage } from './figures';
import { formatBytes } from '../../shared/units';
import type { PlanPath } from '../../shared/plan/paths';

export const SOURCE = 'shardlens';
/** Code of the diagnostic raised when the estimated peak exceeds GPU memory. */
export const DOES_NOT_FIT = 'does-not-fit';

const SEVERITY: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  info: DiagnosticSeverity.Information,
};

/** Keys where "does not fit" is placed, in order of preference: the knobs that change the peak most. */
const FIT_PATHS: readonly PlanPath[] = ['parallel.sharding.stage', 'parallel.sharding.fsdpStrategy', 'training.microBatch', 'parallel.tp', 'parallel.pp'];

/** The "does not fit" problem, when the estimate exceeds GPU memory. */
export function fitProblem(a: DocumentAnalysis): Problem | undefined {
  const m = a.memory;
  const st = m ? peakStage(m) : undefined;
  if (!m || !st || m.fits) return undefined;
  const u = a.settings.units;
  const gpu = a.plan?.cluster.gpu.name ?? 'the GPU';
  const where = m.stages.length > 1 ? `pipeline stage ${st.stage} (${st.kind})` : 'each GPU';
  return {
    code: DOES_NOT_FIT, severity: 'error', paths: FIT_PATHS,
    message: `Estimated peak ${formatBytes(st.peakReservedBytes, u)} on ${where} exceeds ${gpu} memory (${formatBytes(m.gpuMemoryBytes, u)}).`,
  };
}

function toDiagnostic(p: Problem, range = TOP_RANGE): Diagnostic {
  return { range, severity: SEVERITY[p.severity] ?? DiagnosticSeverity.Information, code: p.code, source: SOURCE, message: p.message, data: { paths: p.paths } };
}

/** Every diagnostic of the document. */
export function buildDiagnostics(a: DocumentAnalysis): Diagnostic[] {
  const out: Diagnostic[] = a.fileDiagnostics.map((d) => toDiagnostic(d, d.range));
  const seen = new Set(out.map((d) => `${String(d.code)}\u0000${d.message}`));
  const fit = fitProblem(a);
  for (const p of fit ? [fit, ...a.problems] : a.problems) {
    const k = `${p.code}\u0000${p.message}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(toDiagnostic(p, rangeForPaths(a, p.paths)));
  }
  return out;
}
