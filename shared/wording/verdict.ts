/**
 * The fit verdict in words, one wording for every surface (code lens, status bar, inlay hint, diagnostic, dashboard):
 * it says what the verdict rests on. When an input that decides fit was assumed (model, precision, micro batch,
 * sequence length, GPU, world size) or a referenced file is missing, the verdict is conditional: "needs ~164 GiB/GPU
 * if micro batch 8 (assumed)". Pure: no editor, LSP or DOM.
 */
import type { MemoryUnits } from '../protocol/settings';
import { formatBytes } from '../units';

/** An assumed input as the analysis reports it (plan path, value as text). */
export interface AssumedInput {
  readonly path: string;
  readonly value: string;
}

/** Plan paths whose assumed value decides whether the estimate fits, with the word users know them by. */
export const DECIDING_INPUTS: Readonly<Record<string, string>> = {
  'model': 'model',
  'model.preset': 'model',
  'training.precision': 'precision',
  'training.microBatch': 'micro batch',
  'training.seqLen': 'sequence length',
  'cluster.gpu': 'GPU',
  'cluster.worldSize': 'GPUs',
};

/** Words for every assumed input (deciding or not), for lists. */
export const INPUT_WORDS: Readonly<Record<string, string>> = {
  ...DECIDING_INPUTS,
  'training.gradAccum': 'gradient accumulation',
  'training.globalBatch': 'global batch',
  'cluster.gpusPerNode': 'GPUs per node',
  'cluster.nodes': 'nodes',
};

/** The assumptions among `all` that decide fit, in a stable order (model first, GPUs last). */
export function decidingAssumptions<T extends AssumedInput>(all: readonly T[]): T[] {
  const order = Object.keys(DECIDING_INPUTS);
  return all.filter((a) => a.path in DECIDING_INPUTS).sort((x, y) => order.indexOf(x.path) - order.indexOf(y.path));
}

/** "micro batch 8", "sequence length 2048", "8 GPUs", "GPU H100 SXM". */
export function assumedValue(a: AssumedInput): string {
  const word = INPUT_WORDS[a.path] ?? a.path;
  if (a.path === 'cluster.worldSize') return `${a.value} GPUs`;
  return `${word} ${a.value}`;
}

/** "micro batch 8, sequence length 2048 (assumed)"; with a missing referenced file, that file is named first. */
export function assumedPhrase(assumed: readonly AssumedInput[], missingFile?: string): string {
  const parts = assumed.map(assumedValue);
  const list = parts.length ? `${parts.join(', ')} (assumed)` : '';
  if (!missingFile) return list;
  return list ? `${missingFile} is missing; ${list}` : `${missingFile} is missing`;
}

/** What the verdict is computed from. */
export interface VerdictInput {
  readonly fits: boolean;
  /** Peak reserved bytes per GPU of the peak stage (what must fit). */
  readonly peakReservedBytes: number;
  readonly gpuMemoryBytes: number;
  readonly gpuName: string;
  readonly units: MemoryUnits;
  readonly assumptions: readonly AssumedInput[];
  /** A referenced file (DeepSpeed JSON, …) that was not found, as written in the file. */
  readonly missingFile?: string;
}

/** The verdict's parts, for surfaces that lay them out differently. */
export interface Verdict {
  /** "fits", "does not fit", or the conditional forms "fits if …" / "needs … if …". */
  readonly headline: string;
  /** True when the verdict rests on assumed inputs or a missing file (a warning, never an error). */
  readonly conditional: boolean;
  /** The deciding assumptions, in order. */
  readonly assumed: readonly AssumedInput[];
  /** "~164 GiB/GPU". */
  readonly peak: string;
}

/**
 * The verdict in one line, e.g. "fits: ~52 GiB/GPU of 80 GiB", "does not fit: needs ~164 GiB/GPU, H100 SXM has
 * 80 GiB", "needs ~164 GiB/GPU if micro batch 8 (assumed) — set it", "fits (~52 GiB/GPU of 80 GiB) if model
 * Llama-3.1-8B (assumed)".
 */
export function verdict(v: VerdictInput): Verdict {
  const assumed = decidingAssumptions(v.assumptions);
  const conditional = assumed.length > 0 || !!v.missingFile;
  const peak = `~${formatBytes(v.peakReservedBytes, v.units)}/GPU`;
  const gpu = formatBytes(v.gpuMemoryBytes, v.units);
  const cond = assumedPhrase(assumed, v.missingFile);
  let headline: string;
  if (!conditional) headline = v.fits ? `fits: ${peak} of ${gpu}` : `does not fit: needs ${peak}, ${v.gpuName} has ${gpu}`;
  else if (v.fits) headline = `fits (${peak} of ${gpu}) if ${cond}`;
  else headline = `needs ${peak} of ${gpu} if ${cond} — set it`;
  return { headline, conditional, assumed, peak };
}
