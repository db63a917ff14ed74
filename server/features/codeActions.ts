/**
 * Quick fixes with the predicted effect in their titles: raise the ZeRO stage, recompute, offload, turn on activation
 * offloading, the optimizer in the backward or torch.compile, raise TP or PP, trade micro batch for accumulation (for
 * "does not fit"), repair the batch identity, step the optimizer fused where its foreach step is the peak, and reduce
 * in every micro-batch where FSDP's no_sync gradients raise it.
 */
import { CodeActionKind, type CodeAction, type Diagnostic } from 'vscode-languageserver';
import type { CoreApi } from '../analysis/core';
import { toUri } from '../analysis/host';
import type { DocumentAnalysis } from '../analysis/analyze';
import { assumptionActions } from './assumptionFixes';
import { fusedStepActions } from './fusedStepFix';
import { untieActions } from './untieFix';
import { TIED_UNLIKE_SHAPE } from '../../shared/plan/resolve';
import { syncEachBatchActions } from './syncEachBatchFix';
import { DOES_NOT_FIT } from './diagnostics';
import { localFact } from './facts';
import { deltaOf, plannedWhatIfs, stepChange, type Delta, type PlannedWhatIf } from './figures';
import { formatBytes, formatDeltaBytes } from '../../shared/units';
import { formatTraffic } from '../../shared/wording/hints';
import { keyEdits } from '../../formats/common/edit/keyEdit';
import { changedFacts, whatIfEdits } from '../../formats/whatIfEdit';
import { isPlanPath, type PlanPath } from '../../shared/plan/paths';
import { SWITCH_PATHS } from '../../shared/plan/whatIf';

/** Paths whose next setting the "does not fit" fixes try, in the order they are offered. */
const FIT_FIXES: readonly { readonly path: PlanPath; readonly verb: string }[] = [
  { path: 'parallel.sharding.stage', verb: 'Raise' },
  { path: 'training.recompute', verb: 'Enable recomputation:' },
  { path: 'parallel.sharding.offloadOptimizer', verb: 'Offload optimizer states:' },
  { path: 'parallel.sharding.offloadParams', verb: 'Offload parameters:' },
  { path: 'training.activationOffload', verb: 'Turn on' },
  { path: 'training.optimizerInBackward', verb: 'Turn on' },
  { path: 'training.compile', verb: 'Turn on' },
  { path: 'parallel.tp', verb: 'Raise' },
  { path: 'parallel.pp', verb: 'Raise' },
  { path: 'training.microBatch', verb: 'Lower' },
];

function describe(d: Delta, a: DocumentAnalysis): string {
  const u = a.settings.units;
  const comm = d.commAfter !== d.commBefore ? `, ${d.commAfter > d.commBefore ? '+' : '−'}${formatTraffic(Math.abs(d.commAfter - d.commBefore), u)} traffic/step` : '';
  const step = stepChange(d);
  return `${formatDeltaBytes(d.peakAfter - d.peakBefore, u)} per GPU → ${formatBytes(d.peakAfter, u)}${d.fitsAfter ? ', fits' : ''}${comm}${step ? `, step ${step}` : ''}`;
}


/** The what-ifs a "does not fit" fix may apply for one path: raising the ZeRO stage; full recompute where the file writes a boolean. */
function fixVariants(a: DocumentAnalysis, path: PlanPath): PlannedWhatIf[] {
  const plan = a.plan;
  if (!plan || !a.whatIf) return [];
  if (path === 'training.recompute') {
    if (plan.training.recompute === 'full') return [];
    const asked = { 'training.recompute': 'full' } as const;
    const first = a.whatIf(asked);
    const edit = first ? whatIfEdits(a, asked, first) : undefined;
    const overrides = edit ? changedFacts(a, edit.edits, edit.edited) : asked;
    const fullPlan = edit ? a.whatIf(overrides) : undefined;
    const full: PlannedWhatIf[] = fullPlan && edit ? [{ whatIf: { label: `recompute ${plan.training.recompute} → full`, path, value: 'full', overrides }, plan: fullPlan, edits: edit.edits, how: edit.how }] : [];
    const selective = plannedWhatIfs(a, path).filter((v) => v.whatIf.value === 'selective');
    return [...selective, ...full];
  }
  // A switch helps only by being turned on (activation offloading, the optimizer in the backward, torch.compile).
  if (SWITCH_PATHS.includes(path)) return plannedWhatIfs(a, path).filter((v) => v.whatIf.value === true);
  return plannedWhatIfs(a, path).filter((v) => !(path === 'parallel.sharding.stage' && v.plan.parallel.sharding.stage < plan.parallel.sharding.stage));
}

function fitFixes(a: DocumentAnalysis, api: CoreApi, diag: Diagnostic): CodeAction[] {
  const { plan, memory } = a;
  if (!plan || !memory) return [];
  const out: CodeAction[] = [];
  for (const { path, verb } of FIT_FIXES) {
    const raising = fixVariants(a, path);
    for (const v of raising) {
      const d = deltaOf(api, memory, a.collectives, v, a.stepTime?.stepSeconds);
      if (!d || d.peakAfter >= d.peakBefore) continue;
      const edits = v.edits;
      if (!edits.length) continue;
      out.push({
        title: `${verb} ${v.whatIf.label.replace(/^(offload|recompute) /, '').replace(/ off → on$/, '')} (${describe(d, a)})`,
        kind: CodeActionKind.QuickFix,
        diagnostics: [diag],
        isPreferred: out.length === 0 && d.fitsAfter,
        edit: { changes: { [a.uri]: edits } },
      });
    }
  }
  return out;
}

/** True for problems about micro × accumulation × DP ≠ global batch. */
export function isBatchIdentity(code: string | number | undefined): boolean {
  return typeof code === 'string' && /batch/.test(code) && /(identity|mismatch|product|global)/.test(code);
}

function num(a: DocumentAnalysis, path: PlanPath): number | undefined {
  const v = localFact(a, path)?.value;
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined;
}

/** Sets the global batch to micro × accumulation × DP, or accumulation to global / (micro × DP) when that is whole. */
function batchFix(a: DocumentAnalysis, diag: Diagnostic): CodeAction[] {
  const dp = a.plan?.parallel.dp;
  const micro = num(a, 'training.microBatch') ?? a.plan?.training.microBatch;
  if (!dp || !micro) return [];
  const global = num(a, 'training.globalBatch');
  const accum = num(a, 'training.gradAccum');
  const out: CodeAction[] = [];
  if (global !== undefined) {
    const m = global / (micro * dp);
    const e = Number.isInteger(m) && m >= 1 ? keyEdits(a, 'training.gradAccum', m) : undefined;
    if (e?.length) out.push({ title: `Set gradient accumulation to ${m} (${global} = ${micro} × ${m} × ${dp} GPUs)`, kind: CodeActionKind.QuickFix, diagnostics: [diag], isPreferred: true, edit: { changes: { [a.uri]: e } } });
  }
  const want = micro * (accum ?? a.plan?.training.gradAccum ?? 1) * dp;
  const e = keyEdits(a, 'training.globalBatch', want);
  if (e?.length && want !== global) out.push({ title: `Set global batch to ${want} (${micro} × ${accum ?? a.plan?.training.gradAccum ?? 1} × ${dp} GPUs)`, kind: CodeActionKind.QuickFix, diagnostics: [diag], edit: { changes: { [a.uri]: e } } });
  return out;
}

/** For a micro batch or accumulation that disagrees with the referenced DeepSpeed JSON: write "auto" there. */
function autoFix(a: DocumentAnalysis, diag: Diagnostic): CodeAction[] {
  const paths = ((diag.data as { paths?: unknown[] } | undefined)?.paths ?? []).filter(isPlanPath);
  const out: CodeAction[] = [];
  for (const file of a.graph.slice(1)) {
    if (file.format !== 'deepspeed') continue;
    for (const path of paths) {
      const f = file.facts[path];
      const uri = f?.source.uri ?? file.uri;
      if (!f?.source.range || f.source.kind !== 'explicit') continue;
      const target = toUri(uri);
      out.push({
        title: `Use "auto" for ${f.key ?? path} in ${target.replace(/^.*\//, '')} (the HF Trainer fills it from this file)`,
        kind: CodeActionKind.QuickFix, diagnostics: [diag], isPreferred: true,
        edit: { changes: { [target]: [{ range: f.source.range, newText: '"auto"' }] } },
      });
    }
  }
  return out;
}

/** Quick fixes for the diagnostics in the request's context. */
export function buildCodeActions(a: DocumentAnalysis, api: CoreApi, diagnostics: readonly Diagnostic[]): CodeAction[] {
  const out: CodeAction[] = [];
  for (const d of diagnostics) {
    if (d.source !== 'shardlens') continue;
    // A verdict that rests on assumed inputs is fixed first by setting them (DiagnosticSeverity.Warning = 2).
    if (d.code === DOES_NOT_FIT && d.severity === 2) out.push(...assumptionActions(a, d));
    if (d.code === DOES_NOT_FIT) out.push(...fitFixes(a, api, d).map((x) => (d.severity === 2 ? { ...x, isPreferred: false } : x)));
    else if (isBatchIdentity(d.code)) out.push(...batchFix(a, d));
    else if (d.code === 'hf-ds-mismatch') out.push(...autoFix(a, d));
    else if (d.code === 'foreach-step-peak') out.push(...fusedStepActions(a, api, d));
    else if (d.code === 'no-sync-gradients') out.push(...syncEachBatchActions(a, api, d));
    else if (d.code === TIED_UNLIKE_SHAPE) out.push(...untieActions(a, api, d));
  }
  return out;
}
