/**
 * Inlay hints at the keys that drive each figure: model states at the sharding key (with the replicated figure),
 * activations at the micro batch, per-stage peaks at TP/PP, communication at the keys that cause it, a total at the top.
 */
import { InlayHint, InlayHintKind, type Range } from 'vscode-languageserver';
import type { Fact } from '../../shared/plan/facts';
import type { DocumentAnalysis } from '../analysis/analyze';
import { endOf, localFact } from './facts';
import { commBytes, maxOver, peakBytes, peakStage } from './figures';
import { formatBytes, formatCount, formatSeconds, formatVolume } from '../../shared/units';
import type { PlanPath } from '../../shared/plan/paths';

/** Plan paths whose key carries the data-parallel (sharding) figures, in order of preference. */
const SHARDING_KEYS: readonly PlanPath[] = ['parallel.sharding.stage', 'parallel.sharding.fsdpStrategy', 'parallel.dp', 'parallel.dpReplicate', 'parallel.sharding.shardGroupSize'];
/** Process group of a collective → the plan path of the key that causes it. */
const GROUP_KEYS: Record<string, readonly PlanPath[]> = {
  dp: SHARDING_KEYS, tp: ['parallel.tp'], pp: ['parallel.pp'], cp: ['parallel.cp'], ep: ['parallel.ep'],
};

function hint(f: Fact, label: string, tooltip?: string): InlayHint | undefined {
  const at = endOf(f);
  if (!at) return undefined;
  const h = InlayHint.create(at, label, InlayHintKind.Type);
  h.paddingLeft = true;
  if (tooltip) h.tooltip = tooltip;
  return h;
}

function first(a: DocumentAnalysis, paths: readonly PlanPath[]): Fact | undefined {
  for (const p of paths) {
    const f = localFact(a, p);
    if (f) return f;
  }
  return undefined;
}

function inRange(h: InlayHint, range: Range | undefined): boolean {
  if (!range) return true;
  return h.position.line >= range.start.line && h.position.line <= range.end.line;
}

/** A hint at the end of the first reference of a kind (the DeepSpeed file or model a YAML names). */
function referenceHint(a: DocumentAnalysis, kind: 'deepspeed' | 'model', label: string): InlayHint | undefined {
  const r = a.facts?.references.find((x) => x.kind === kind && x.range);
  if (!r?.range) return undefined;
  const h = InlayHint.create(r.range.end, label, InlayHintKind.Type);
  h.paddingLeft = true;
  return h;
}

/** The total at the top: peak per GPU, where, and whether it fits. */
function totalHint(a: DocumentAnalysis): InlayHint | undefined {
  const m = a.memory;
  if (!m) return undefined;
  const u = a.settings.units;
  const st = peakStage(m);
  const where = m.stages.length > 1 && st ? ` (stage ${st.stage})` : '';
  const verdict = m.fits ? 'fits' : 'does not fit';
  const line0 = a.text.split(/\r?\n/, 1)[0] ?? '';
  const params = a.format === 'hf-config' ? `${formatCount(m.model.parameters)} parameters · ` : '';
  const h = InlayHint.create({ line: 0, character: line0.length }, `${params}peak ${formatBytes(peakBytes(m), u)}/GPU${where} of ${formatBytes(m.gpuMemoryBytes, u)} · ${verdict}`, InlayHintKind.Type);
  h.paddingLeft = true;
  return h;
}

/** Parameters + gradients + optimizer states + master weights of the peak stage, e.g. "P 12 + G 1.6 + OS 6.3 GiB". */
function breakdown(a: DocumentAnalysis): string {
  const st = a.memory ? peakStage(a.memory) : undefined;
  if (!st) return '';
  const u = a.settings.units;
  const parts: [string, number | undefined][] = [
    ['P', st.terms.parameters?.bytes], ['G', st.terms.gradients?.bytes], ['OS', st.terms.optimizerStates?.bytes], ['M', st.terms.masterWeights?.bytes],
  ];
  return parts.filter(([, b]) => b !== undefined && b > 0).map(([k, b]) => `${k} ${formatBytes(b, u)}`).join(' + ');
}

/** Every hint for the document, filtered to `range` and to the detail setting. */
export function buildInlayHints(a: DocumentAnalysis, range?: Range): InlayHint[] {
  const detail = a.settings.hints.detail;
  const m = a.memory;
  if (detail === 'off' || !m) return [];
  const u = a.settings.units;
  const out: (InlayHint | undefined)[] = [totalHint(a)];
  if (detail !== 'minimal') {
    const verbose = detail === 'verbose';
    const shard = first(a, SHARDING_KEYS);
    const states = `model states ${formatBytes(maxOver(m.stages, (s) => s.modelStatesBytes), u)}/GPU (replicated ${formatBytes(maxOver(m.replicated.stages, (s) => s.modelStatesBytes), u)})`;
    if (shard) out.push(hint(shard, verbose ? `${states} = ${breakdown(a)}` : states));
    else out.push(referenceHint(a, 'deepspeed', states));
    out.push(referenceHint(a, 'model', `${formatCount(m.model.parameters)} parameters`));
    const micro = localFact(a, 'training.microBatch');
    if (micro) out.push(hint(micro, `activations ${formatBytes(maxOver(m.stages, (s) => s.activationBytes), u)}/GPU`));
    for (const axis of ['parallel.tp', 'parallel.pp'] as const) {
      const f = localFact(a, axis);
      if (!f || (!verbose && (a.plan?.parallel[axis === 'parallel.tp' ? 'tp' : 'pp'] ?? 1) <= 1)) continue;
      const peaks = m.stages.map((s) => formatBytes(s.peakReservedBytes, u));
      const shown = peaks.length > 4 && !verbose ? [...peaks.slice(0, 2), '…', ...peaks.slice(-1)] : peaks;
      out.push(hint(f, peaks.length > 1 ? `peak per stage ${shown.join(', ')}` : `peak ${peaks[0] ?? '—'}/GPU`));
    }
    for (const [group, keys] of Object.entries(GROUP_KEYS)) {
      const bytes = commBytes(a.collectives, group);
      const f = first(a, keys);
      if (!f || bytes <= 0) continue;
      out.push(hint(f, `${group.toUpperCase()} comm ${formatVolume(bytes)}/step`));
    }
    if (a.stepTime && (verbose || !shard)) {
      const top = out[0];
      if (top && typeof top.label === 'string') top.label += ` · step ${formatSeconds(a.stepTime.stepSeconds)}`;
    }
  }
  return out.filter((h): h is InlayHint => h !== undefined && inRange(h, range));
}
