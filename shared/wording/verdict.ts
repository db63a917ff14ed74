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
  // Assumed only when a framework's bundled DeepSpeed file is named but not in the workspace.
  'parallel.sharding.stage': 'ZeRO stage',
  'parallel.sharding.offloadOptimizer': 'optimizer offload',
  'parallel.sharding.offloadParams': 'parameter offload',
  'parallel.tp': 'TP',
};

/** Words for every assumed input (deciding or not), for lists. */
export const INPUT_WORDS: Readonly<Record<string, string>> = {
  ...DECIDING_INPUTS,
  'training.gradAccum': 'gradient accumulation',
  'training.globalBatch': 'global batch',
  'cluster.gpusPerNode': 'GPUs per node',
  'cluster.nodes': 'nodes',
};

/**
 * The assumptions among `all` that decide fit, in a stable order (model first, GPUs last). An assumed GPU type and an
 * assumed GPU count read as one cluster ("8×H100 SXM").
 */
export function decidingAssumptions<T extends AssumedInput>(all: readonly T[]): AssumedInput[] {
  const order = Object.keys(DECIDING_INPUTS);
  const out: AssumedInput[] = all.filter((a) => a.path in DECIDING_INPUTS).sort((x, y) => order.indexOf(x.path) - order.indexOf(y.path));
  const gpu = out.find((a) => a.path === 'cluster.gpu');
  const world = out.find((a) => a.path === 'cluster.worldSize');
  if (!gpu || !world) return out;
  return [...out.filter((a) => a !== gpu && a !== world), { path: 'cluster', value: `${world.value}×${gpu.value}` }];
}

/** "micro batch 8", "sequence length 2048", "8 GPUs", "GPU H100 SXM". */
export function assumedValue(a: AssumedInput): string {
  const word = INPUT_WORDS[a.path] ?? a.path;
  if (a.path === 'cluster.worldSize') return `${a.value} GPUs`;
  if (a.path === 'cluster') return a.value;
  return `${word} ${a.value}`;
}

/** "micro batch 8, sequence length 2048 (assumed)". */
export function assumedPhrase(assumed: readonly AssumedInput[]): string {
  return assumed.length ? `${assumed.map(assumedValue).join(', ')} (assumed)` : '';
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
  /**
   * Bytes of the peak that no batch shape changes (the model states). When they alone exceed GPU memory, an assumed
   * micro batch or sequence length cannot turn "does not fit" into "fits", so it does not make the verdict conditional.
   */
  readonly shapeFreeBytes?: number;
}

/** Inputs that shape the activations only. */
const SHAPE_INPUTS: ReadonlySet<string> = new Set(['training.microBatch', 'training.seqLen']);

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
  /** The headline for one-line surfaces (code lens, status bar tooltip title): more than two assumptions are counted, not listed. */
  readonly short: string;
}

/**
 * The verdict in one line, e.g. "fits: ~52 GiB/GPU of 80 GiB", "does not fit: needs ~164 GiB/GPU, H100 SXM has
 * 80 GiB", "needs ~164 GiB/GPU of 80 GiB if micro batch 8 (assumed) — set it", "needs ~151 GiB/GPU of 80 GiB without
 * ds_z3_config.json (not found) — add it", "fits (~52 GiB/GPU of 80 GiB) if model Llama-3.1-8B (assumed)".
 */
export function verdict(v: VerdictInput): Verdict {
  const shapeCannotFlip = !v.fits && (v.shapeFreeBytes ?? 0) > v.gpuMemoryBytes;
  const assumed = decidingAssumptions(v.assumptions).filter((a) => !(shapeCannotFlip && SHAPE_INPUTS.has(a.path)));
  const conditional = assumed.length > 0 || !!v.missingFile;
  const peak = `~${formatBytes(v.peakReservedBytes, v.units)}/GPU`;
  const gpu = formatBytes(v.gpuMemoryBytes, v.units);
  // "without ds_z3.json (not found)" and/or "if micro batch 8 (assumed) — set it".
  const line = (listed: string, prefix = 'if'): string => {
    if (!conditional) return v.fits ? `fits: ${peak} of ${gpu}` : `does not fit: needs ${peak}, ${v.gpuName} has ${gpu}`;
    const parts = [v.missingFile ? `without ${v.missingFile} (not found)` : '', listed ? `${prefix} ${listed}` : ''].filter(Boolean).join(' and ');
    if (v.fits) return `fits (${peak} of ${gpu}) ${parts}`;
    const todo = listed ? ` — set ${assumed.length > 1 ? 'them' : 'it'}` : ' — add it';
    return `needs ${peak} of ${gpu} ${parts}${todo}`;
  };
  // One line: a single assumption is named; more (or a missing file beside one) are counted.
  const items = assumed.length + (v.missingFile ? 1 : 0);
  const head = v.fits ? `fits (${peak} of ${gpu})` : `needs ${peak} of ${gpu}`;
  const counted = [assumed.length ? `${assumed.length} assumed input${assumed.length > 1 ? 's' : ''}` : '', v.missingFile ? `${v.missingFile} not found` : ''].filter(Boolean).join(', ');
  const short = items > 1 ? `${head} · ${counted}` : line(assumedPhrase(assumed));
  return { headline: line(assumedPhrase(assumed)), short, conditional, assumed, peak };
}
