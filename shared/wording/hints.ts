/**
 * Inlay hint texts: short tokens that fit VS Code's default hint length, with the long form for the hint's tooltip
 * (rust-analyzer's style: `≈15 GiB/GPU`, `×8 rep.`). Every memory and traffic figure uses the `shardlens.units`
 * setting, so a hint and a chart agree in unit. Pure.
 */
import type { MemoryUnits } from '../protocol/settings';
import { formatBytes, formatCount, formatSeconds } from '../units';
import { countParams } from '../model/params';
import type { ModelSpec } from '../plan/modelSpec';
import { verdict, type VerdictInput } from './verdict';

/**
 * VS Code cuts the hints of one line with "…" once their labels together pass `editor.inlayHints.maximumLength`
 * ("Maximum overall length of inlay hints, for a single line"; default 43 in VS Code 1.100,
 * src/vs/editor/common/config/editorOptions.ts).
 */
export const HINT_MAX_LENGTH = 43;

/** A hint's label, a shorter label for a crowded line, and the long form its tooltip shows. */
export interface HintText {
  readonly label: string;
  readonly compact?: string;
  readonly tooltip: string;
}

/**
 * Fits the hints of one line, most important first, into VS Code's per-line length. A hint takes its full label when
 * it fits, else its compact one; when that still drops hints, all take their compact labels, whichever keeps more. A
 * hint with no room leaves its long form in the tooltip of the last one kept.
 */
export function packLine<T extends HintText>(hints: readonly T[]): T[] {
  const pack = (preferCompact: boolean): T[] => {
    const kept: T[] = [];
    let used = 0;
    for (const h of hints) {
      const order = preferCompact ? [h.compact, h.label] : [h.label, h.compact];
      const label = order.find((l): l is string => !!l && used + l.length <= HINT_MAX_LENGTH);
      if (label) {
        kept.push({ ...h, label });
        used += label.length;
        continue;
      }
      const last = kept[kept.length - 1];
      if (last) kept[kept.length - 1] = { ...last, tooltip: `${last.tooltip}\n\n${h.tooltip}` };
    }
    return kept;
  };
  const full = pack(false);
  if (full.length === hints.length) return full;
  const compact = pack(true);
  return compact.length > full.length ? compact : full;
}

/** Cuts a label to the hint length (a safety net: the builders below stay within it). */
export function fitLabel(label: string): string {
  return label.length <= HINT_MAX_LENGTH ? label : `${label.slice(0, HINT_MAX_LENGTH - 1)}…`;
}

/** Traffic in the user's units family: GiB/TiB with "GiB", GB/TB with "GB" (three significant digits). */
export function formatTraffic(bytes: number | undefined, units: MemoryUnits): string {
  const tera = units === 'GiB' ? 1024 ** 4 : 1e12;
  if (typeof bytes === 'number' && Number.isFinite(bytes) && bytes >= tera) {
    return `${formatBytes(bytes / (units === 'GiB' ? 1024 : 1000), units).replace(/ G(i?)B$/, ' T$1B')}`;
  }
  return formatBytes(bytes, units);
}

/**
 * The verdict at the top of the file: "≈62.5 GiB/GPU ✓ fits", "≈109 GiB/GPU ✗ > 79.6 GiB", or, when it rests on
 * assumed inputs, "≈164 GiB/GPU > 79.6 GiB if assumed"; the step time follows when it fits in the length.
 */
export function fitHint(v: VerdictInput, stepSeconds?: number): HintText {
  const full = verdict(v);
  const peak = `≈${formatBytes(v.peakReservedBytes, v.units)}/GPU`;
  const gpu = formatBytes(v.gpuMemoryBytes, v.units);
  const base = full.conditional
    ? `${peak} ${v.fits ? '≤' : '>'} ${gpu} if assumed`
    : v.fits ? `${peak} ✓ fits` : `${peak} ✗ > ${gpu}`;
  const step = stepSeconds !== undefined && stepSeconds > 0 ? ` · step ${formatSeconds(stepSeconds)}` : '';
  const label = (base + step).length <= HINT_MAX_LENGTH ? base + step : base;
  const tooltip = [
    `ShardLens: ${full.headline}.`, `The figure is the peak reserved memory per GPU (allocated tensors plus what PyTorch's caching allocator keeps cached), the amount that must fit.`,
    step ? `Step time ${formatSeconds(stepSeconds)}.` : '',
  ].filter(Boolean).join(' ');
  return { label: fitLabel(label), compact: fitLabel(base), tooltip };
}

/** "states ≈15 GiB/GPU · ×8 rep.": model states as sharded here, and how many times more replicated data parallel holds. */
export function statesHint(sharded: number, replicated: number, units: MemoryUnits, breakdown?: string): HintText {
  const ratio = sharded > 0 ? replicated / sharded : 0;
  const rep = ratio >= 1.05 ? ` · ×${ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(1)} rep.` : '';
  const label = fitLabel(`states ≈${formatBytes(sharded, units)}/GPU${rep}`);
  const compact = `states ≈${formatBytes(sharded, units)}`;
  const tooltip = `Model states per GPU (parameters, gradients, optimizer states, master weights): ${formatBytes(sharded, units)} as sharded here`
    + `${breakdown ? ` (${breakdown})` : ''}; ${formatBytes(replicated, units)} replicated (plain data parallel)${rep ? `, ${ratio.toFixed(1)}× more` : ''}.`;
  return { label, compact, tooltip };
}

/** "act. ≈30 GiB + logits 4 GiB": activations and the logits, never one silently inside the other. */
export function activationsHint(activations: number, logits: number, units: MemoryUnits, atPeak?: { bytes: number; moment?: string }): HintText {
  const act = `act. ≈${formatBytes(activations, units)}`;
  const label = fitLabel(logits > 0 ? `${act} + logits ${formatBytes(logits, units)}` : `${act}/GPU`);
  const compact = `${act}${logits > 0 ? '+' : ''}`;
  // When the GPU peaks where few of them are live (after the backward, at the optimizer step), say so: the micro batch
  // then moves the peak only once they outgrow the difference.
  const later = atPeak && atPeak.moment && atPeak.bytes < 0.05 * (activations + logits)
    ? ` The GPU peaks at the ${atPeak.moment}, when ${atPeak.bytes > 0 ? `${formatBytes(atPeak.bytes, units)} of them are` : 'none of them is'} live:`
      + ' a larger micro batch raises the peak only once the forward and backward need more than that moment.'
    : '';
  const tooltip = `Activations kept for the backward pass, per GPU: ${formatBytes(activations, units)}`
    + `${logits > 0 ? `; the logits (and their loss buffers) add up to ${formatBytes(logits, units)}` : ''}.${later}`;
  return { label, compact, tooltip };
}

/** "stages ≈62 · 58 · … · 55 GiB" (peak reserved per pipeline stage) or "peak ≈62 GiB/GPU". */
export function stagesHint(peaks: readonly number[], units: MemoryUnits): HintText {
  const tooltip = `Peak reserved memory per GPU on each pipeline stage: ${peaks.map((p, i) => `stage ${i} ${formatBytes(p, units)}`).join(', ')}.`;
  if (peaks.length <= 1) return { label: fitLabel(`peak ≈${formatBytes(peaks[0], units)}/GPU`), tooltip };
  const numbers = peaks.map((p) => formatBytes(p, units).replace(/ (G|M)i?B$/, ''));
  const unit = formatBytes(Math.max(...peaks), units).replace(/^[\d.]+ /, '');
  for (const shown of [numbers, [...numbers.slice(0, 2), '…', ...numbers.slice(-1)], [numbers[0], '…', numbers[numbers.length - 1]]]) {
    const label = `stages ≈${shown.join(' · ')} ${unit}`;
    if (label.length <= HINT_MAX_LENGTH) return { label, tooltip };
  }
  return { label: fitLabel(`stages ≈${numbers[0]} … ${unit}`), tooltip };
}

/** "TP ≈1.20 TiB/step": bytes one GPU sends per optimizer step in one parallel group. */
export function commHint(group: string, bytes: number, units: MemoryUnits, exposedSeconds?: number): HintText {
  const label = fitLabel(`${group.toUpperCase()} ≈${formatTraffic(bytes, units)}/step`);
  const compact = `${group.toUpperCase()} ≈${formatTraffic(bytes, units)}`;
  const exposed = exposedSeconds !== undefined ? `; ${formatSeconds(exposedSeconds)} of it is not hidden behind compute` : '';
  return { label, compact, tooltip: `${group.toUpperCase()} communication: ${formatTraffic(bytes, units)} sent per GPU per optimizer step${exposed}.` };
}

/**
 * The model's parameter count beside its reference; where it trains multi-token-prediction modules, the tooltip says
 * how many of the parameters are theirs (shared/model/mtp.ts).
 */
export function modelParamsHint(parameters: number, model: ModelSpec | undefined): HintText {
  const mtp = model?.mtpLayers ? countParams(model).mtp : 0;
  const modules = model?.mtpLayers ?? 0;
  const theirs = mtp > 0 ? `, ${formatCount(mtp)} of them in its ${modules === 1 ? 'multi-token-prediction module' : `${modules} multi-token-prediction modules`}` : '';
  return { label: `${formatCount(parameters)} params`, tooltip: `The model has ${formatCount(parameters)} parameters${theirs}.` };
}
