/**
 * The verdict of an analysis in the shared wording (shared/wording/verdict.ts): its peak, the GPU, and what it rests on
 * (the deciding assumptions and a missing referenced file). Every surface asks this one function.
 */
import type { ConfigReference } from '../../shared/plan/facts';
import type { Problem } from '../../shared/plan/types';
import type { VerdictText } from '../../shared/protocol';
import { verdict, type Verdict, type VerdictInput } from '../../shared/wording/verdict';
import { missingFileLabel } from '../../shared/wording/references';
import type { DocumentAnalysis } from '../analysis/analyze';
import { peakStage } from './figures';
import { REFERENCE_BUNDLED } from '../formats/bundledDeepSpeed';

/** Code of the problem the format loader raises for a referenced DeepSpeed file it cannot find. */
export const REFERENCE_MISSING = 'reference-missing';

/**
 * Each referenced file the loader could not read, with the loader's problem about it (matched by the quoted target):
 * missing ones, and framework files read from their bundled values (server/formats/bundledDeepSpeed.ts).
 */
export function unreadReferences(a: DocumentAnalysis): { readonly ref: ConfigReference; readonly problem: Problem }[] {
  const missing = a.problems.filter((p) => p.code === REFERENCE_MISSING || p.code === REFERENCE_BUNDLED);
  if (!missing.length) return [];
  return (a.facts?.references ?? []).flatMap((ref) => {
    const problem = missing.find((p) => p.message.includes(`"${ref.target}"`));
    return problem ? [{ ref, problem }] : [];
  });
}

/** The DeepSpeed files this document names that were not read (their values decide the verdict). */
export function missingReferences(a: DocumentAnalysis): ConfigReference[] {
  return unreadReferences(a).filter((x) => x.ref.kind === 'deepspeed' && x.problem.code === REFERENCE_MISSING).map((x) => x.ref);
}

/**
 * True when something in the input is an error (a TP of 10⁹, a micro batch of "NaN", an invalid model config): then
 * there is no verdict, in the editor as in the CLI (exit 2, "cannot estimate as written"), however the figures came out.
 */
export function hasInputErrors(a: Pick<DocumentAnalysis, 'problems' | 'fileDiagnostics'>): boolean {
  return a.problems.some((p) => p.severity === 'error') || a.fileDiagnostics.some((d) => d.severity === 'error');
}

/** The inputs of the verdict, or undefined without a memory estimate or with an error in the input. */
export function verdictInput(a: DocumentAnalysis): VerdictInput | undefined {
  const m = a.memory;
  const st = m ? peakStage(m) : undefined;
  if (!m || !st || hasInputErrors(a)) return undefined;
  const missing = missingReferences(a)[0];
  return {
    fits: m.fits, peakReservedBytes: st.peakReservedBytes, gpuMemoryBytes: m.gpuMemoryBytes,
    gpuName: a.plan?.cluster.gpu.name ?? 'the GPU', units: a.settings.units, assumptions: a.assumptions, shapeFreeBytes: st.modelStatesBytes,
    ...(missing ? { missingFile: missingFileLabel(missing.target) } : {}),
  };
}

/** The verdict as the protocol carries it (headline, short form, conditional). */
export function verdictText(a: DocumentAnalysis): VerdictText | undefined {
  const v = verdictOf(a);
  return v ? { headline: v.headline, short: v.short, conditional: v.conditional } : undefined;
}

/** The verdict of the analysis, or undefined without a memory estimate. */
export function verdictOf(a: DocumentAnalysis): Verdict | undefined {
  const v = verdictInput(a);
  return v ? verdict(v) : undefined;
}
