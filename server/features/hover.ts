/**
 * Hover on a known key: its value and origin, the figures it drives with their formulas and inputs, and what changing
 * it would do (re-estimated with the changed value).
 */
import { MarkupKind, type Hover, type Position } from 'vscode-languageserver';
import type { Term, MemoryTermName } from '../../shared/plan/result';
import type { CoreApi } from '../analysis/core';
import type { DocumentAnalysis } from '../analysis/analyze';
import { factAt } from './facts';
import { keyDocAt, keyDocHover } from './keyAt';
import { deltaOf, peakStage } from './figures';
import { formatBytes, formatDeltaBytes, formatDeltaVolume, formatVolume } from '../../shared/units';
import { keyForPath, keyTable } from '../../formats/keyTables';
import { variantsFor } from './planEdit';
import type { PlanPath } from '../../shared/plan/paths';

/** Memory terms each plan path feeds (first principles: which symbols appear in the term's formula). */
const TERMS_OF: Partial<Record<PlanPath, readonly MemoryTermName[]>> = {
  'parallel.sharding.stage': ['parameters', 'gradients', 'optimizerStates', 'masterWeights'],
  'parallel.sharding.fsdpStrategy': ['parameters', 'gradients', 'optimizerStates', 'masterWeights'],
  'parallel.dp': ['parameters', 'gradients', 'optimizerStates', 'masterWeights'],
  'parallel.sharding.offloadOptimizer': ['optimizerStates', 'masterWeights'],
  'parallel.sharding.offloadParams': ['parameters'],
  'training.microBatch': ['activations', 'logits'],
  'training.seqLen': ['activations', 'logits'],
  'training.recompute': ['activations'],
  'training.optimizer': ['optimizerStates'],
  'training.precision': ['parameters', 'gradients', 'masterWeights'],
  'parallel.tp': ['parameters', 'activations'],
  'parallel.pp': ['parameters', 'activations'],
  'parallel.sharding.reduceBucketElems': ['commBuffers'],
  'parallel.sharding.allgatherBucketElems': ['commBuffers'],
  'parallel.sharding.prefetchBucketElems': ['gatheredParameters'],
  'parallel.sharding.maxLiveParams': ['gatheredParameters'],
};

function showValue(v: unknown): string {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '—';
  if (Array.isArray(v)) return v.join(', ');
  return String(v);
}

function termLines(t: Term, a: DocumentAnalysis): string[] {
  const u = a.settings.units;
  const lines = [`**${t.label}** ${formatBytes(t.bytes, u)} = \`${t.formula}\` — ${t.citation}`];
  for (const [sym, inp] of Object.entries(t.inputs)) {
    lines.push(`  - \`${sym}\` = ${showValue(inp.value)} (${inp.source.kind}: ${inp.source.detail})`);
  }
  return lines;
}

/** Markdown for the fact at the position, or null when there is no known key there. */
export function buildHover(a: DocumentAnalysis, pos: Position, api: CoreApi): Hover | null {
  const hit = factAt(a, pos, (path) => path in TERMS_OF);
  if (!hit) {
    const doc = keyDocAt(a.format, a.text, pos);
    return doc ? keyDocHover(...doc) : null;
  }
  const [path, fact] = hit;
  const u = a.settings.units;
  const tableKey = keyForPath(a.format, path);
  const written = fact.key ?? path;
  const key = tableKey && tableKey.endsWith(written) ? tableKey : written;
  const doc = keyTable(a.format)?.keys[key]?.description;
  const md: string[] = [`**ShardLens** · \`${key}\` = ${showValue(fact.value)}`, ''];
  if (doc) md.push(doc, '');
  const used = a.plan?.sources[path];
  md.push(`Plan input \`${path}\`${used ? ` — ${used.kind}: ${used.detail}` : ''}`);
  const m = a.memory;
  const st = m ? peakStage(m) : undefined;
  if (m && st) {
    const terms = (TERMS_OF[path] ?? []).map((n) => st.terms[n]).filter((t): t is Term => !!t);
    if (terms.length) {
      md.push('', `Per GPU on stage ${st.stage} (the peak stage):`, '');
      for (const t of terms) md.push(...termLines(t, a).map((l) => (l.startsWith('  ') ? l : `- ${l}`)));
    }
    md.push('', `Peak ${formatBytes(st.peakReservedBytes, u)} of ${formatBytes(m.gpuMemoryBytes, u)} per GPU.`);
  }
  if (a.plan && m) {
    const deltas = variantsFor(a.plan, path).map((v) => deltaOf(api, m, a.collectives, v)).filter((d) => d !== undefined);
    if (deltas.length) {
      md.push('', 'If you change it:', '');
      for (const d of deltas) {
        const comm = d.commAfter !== d.commBefore ? `, ${formatDeltaVolume(d.commAfter - d.commBefore)} communication per step (${formatVolume(d.commAfter)})` : '';
        md.push(`- ${d.variant.label}: ${formatDeltaBytes(d.peakAfter - d.peakBefore, u)} per GPU (peak ${formatBytes(d.peakAfter, u)}, ${d.fitsAfter ? 'fits' : 'does not fit'})${comm}`);
      }
    }
  }
  const range = fact.keyRange ?? fact.source.range;
  return { contents: { kind: MarkupKind.Markdown, value: md.join('\n') }, ...(range ? { range } : {}) };
}
