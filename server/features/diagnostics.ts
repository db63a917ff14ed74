/**
 * Diagnostics: the parser's own findings (already at ranges), the core's problems placed at the keys of their plan
 * paths, a missing referenced file at its reference, and the headline "does not fit". That headline is an error only
 * when the file itself states what decides it; resting on assumed inputs it is a warning that names them.
 */
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver';
import type { Problem, Severity, TextRange } from '../../shared/plan/types';
import { shardingName } from '../../shared/wording/sharding';
import { missingDeepSpeedMessage } from '../../shared/wording/references';
import type { DocumentAnalysis } from '../analysis/analyze';
import { rangeForPaths, TOP_RANGE } from './facts';
import { peakStage } from './figures';
import { REFERENCE_MISSING, unreadReferences, verdictOf } from './verdict';
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

/**
 * The "does not fit" problem, when the estimate exceeds GPU memory: "Does not fit: needs ~109 GiB/GPU, H100 has 79.6 GiB
 * (peak on pipeline stage 0)." as an error, or "Needs ~164 GiB/GPU of 79.6 GiB if micro batch 8 (assumed) — set it."
 * as a warning when an assumed input or a missing file decides it.
 */
export function fitProblem(a: DocumentAnalysis): Problem | undefined {
  const m = a.memory;
  const st = m ? peakStage(m) : undefined;
  const v = verdictOf(a);
  if (!m || !st || m.fits || !v) return undefined;
  const where = m.stages.length > 1 ? ` (peak on pipeline stage ${st.stage}, the ${st.kind} stage)` : '';
  const text = `${v.headline}${where}.`;
  return { code: DOES_NOT_FIT, severity: v.conditional ? 'warning' : 'error', paths: FIT_PATHS, message: text[0].toUpperCase() + text.slice(1) };
}

/**
 * One diagnostic per referenced file that could not be read, at the reference; for a DeepSpeed file it also says which
 * values are therefore unknown and what the estimate uses instead.
 */
function missingReferenceDiagnostics(a: DocumentAnalysis): Diagnostic[] {
  const s = a.plan?.parallel.sharding;
  const used = { sharding: s ? shardingName(s) : 'no ZeRO sharding', offload: s?.offloadOptimizer ?? 'none' };
  return unreadReferences(a).map(({ ref, problem }) => toDiagnostic(
    { ...problem, severity: 'warning', message: ref.kind === 'deepspeed' && problem.code === REFERENCE_MISSING ? missingDeepSpeedMessage(problem.message, used) : problem.message },
    ref.range ?? TOP_RANGE,
  ));
}

/**
 * Keys a problem about the GPU count belongs on: the parallel degrees and the launcher's GPU counts, in this order,
 * never a batch key (a world-size problem is not about local_batch_size); the file's top when none is written.
 */
const WORLD_PATHS: readonly PlanPath[] = ['parallel.tp', 'parallel.pp', 'parallel.cp', 'parallel.ep', 'parallel.dp', 'parallel.dpReplicate', 'cluster.worldSize', 'cluster.gpusPerNode', 'cluster.nodes'];
const PLACEMENT: Readonly<Record<string, readonly PlanPath[]>> = { 'world-size-mismatch': WORLD_PATHS, 'world-not-divisible': WORLD_PATHS };

/** Where a problem goes: its own paths, or for some codes a fixed preference. */
function placeOf(a: DocumentAnalysis, p: Problem): ReturnType<typeof rangeForPaths> {
  const prefer = PLACEMENT[p.code];
  return prefer ? rangeForPaths(a, prefer) : rangeForPaths(a, p.paths);
}

function toDiagnostic(p: Problem, range: TextRange = TOP_RANGE): Diagnostic {
  return { range, severity: SEVERITY[p.severity] ?? DiagnosticSeverity.Information, code: p.code, source: SOURCE, message: p.message, data: { paths: p.paths } };
}

/** Every diagnostic of the document. */
export function buildDiagnostics(a: DocumentAnalysis): Diagnostic[] {
  const out: Diagnostic[] = [...a.fileDiagnostics.map((d) => toDiagnostic(d, d.range)), ...missingReferenceDiagnostics(a)];
  const seen = new Set(out.map((d) => `${String(d.code)}\u0000${d.message}`));
  // In a module of configuration functions, what has no key of its own goes to the analysed function's name.
  const home = a.sections?.find((s) => s.symbol === a.symbol)?.range ?? TOP_RANGE;
  const fit = fitProblem(a);
  for (const p of fit ? [fit, ...a.problems] : a.problems) {
    // A reference the loader could not read is reported at the reference (above); others stay where they are.
    if (unreadReferences(a).some((x) => x.problem === p)) continue;
    const k = `${p.code}\u0000${p.message}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(toDiagnostic(p, placeOf(a, p) ?? home));
  }
  out.push(...sectionDiagnostics(a, seen));
  return out;
}

/**
 * The module's other configuration functions: what reading each found (at its place) and "does not fit" at its name,
 * named by the function; their other problems are listed when the function is analysed.
 */
function sectionDiagnostics(a: DocumentAnalysis, seen: Set<string>): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const s of a.sections ?? []) {
    if (s.symbol === a.symbol || !s.analysis) continue;
    const fit = fitProblem(s.analysis);
    const own = s.analysis.fileDiagnostics.map((d) => ({ d: { ...d, message: d.message.startsWith(`${s.symbol}:`) ? d.message : `${s.symbol}: ${d.message}` }, range: d.range }));
    if (fit) own.unshift({ d: { ...fit, message: `${s.symbol}: ${fit.message}`, range: s.range }, range: s.range });
    for (const { d, range } of own) {
      const k = `${d.code}\u0000${d.message}\u0000${range.start.line}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push(toDiagnostic(d, range));
    }
  }
  return out;
}
