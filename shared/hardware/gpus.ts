/**
 * The GPU catalog (data/gpus.json) and forgiving lookup by name: "A100-80GB", "a100_80g", "H100", "h100-sxm5-80gb",
 * "NVIDIA H100 80GB HBM3" (torch's device name), "mi300x", "4090" all resolve.
 */
import catalog from '../../data/gpus.json';
import type { GpuSpec } from '../plan/types';

/** A catalog entry: the GpuSpec plus the names it answers to and where its figures come from. */
export interface CatalogGpu extends GpuSpec {
  readonly aliases: readonly string[];
  /** Vendor datasheet the figures come from. */
  readonly source: string;
}

const GPUS: readonly CatalogGpu[] = catalog.gpus as unknown as CatalogGpu[];

/** Vendor and marketing words that carry no identity. */
const NOISE = /\b(nvidia|amd|instinct|tesla|geforce|tensor|core|gpu)\b/g;

/** Normalises a GPU name to a compact key: lowercase, no vendor words, no punctuation, "80gb" → "80g". */
export function gpuKey(name: string): string {
  return name
    .toLowerCase()
    .replace(/[_\s]+/g, ' ')
    .replace(NOISE, ' ')
    .replace(/[^a-z0-9]+/g, '')
    .replace(/(\d)gb/g, '$1g');
}

/** Every key an entry answers to. */
function keysOf(g: CatalogGpu): string[] {
  return [g.id, g.name, ...g.aliases].map(gpuKey);
}

const INDEX: ReadonlyMap<string, CatalogGpu> = new Map(GPUS.flatMap((g) => keysOf(g).map((k) => [k, g] as const)));

/** Lists the GPU catalog in file order. */
export function listGpus(): readonly CatalogGpu[] {
  return GPUS;
}

/**
 * Finds a GPU by id, name or alias, forgivingly: exact key first, then the longest catalog key that prefixes the query
 * (so "h100sxm580ghbm3" finds "h100sxm580g"). Returns undefined for unknown or empty names.
 */
export function findGpu(name: unknown): CatalogGpu | undefined {
  if (typeof name !== 'string') return undefined;
  const key = gpuKey(name);
  if (!key) return undefined;
  const exact = INDEX.get(key);
  if (exact) return exact;
  let best: CatalogGpu | undefined;
  let bestLen = 0;
  for (const [k, g] of INDEX) {
    if (k.length > bestLen && k.length >= 3 && key.startsWith(k)) {
      best = g;
      bestLen = k.length;
    }
  }
  return best;
}

/** Edit distance between two short strings (Levenshtein). */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length];
}

/** Up to `max` catalog ids closest to a misspelt name, for "did you mean …?". */
export function suggestGpus(name: string, max = 3): string[] {
  const key = gpuKey(name);
  const scored = GPUS.map((g) => {
    const d = Math.min(...keysOf(g).map((k) => distance(key, k) - (k.includes(key) || key.includes(k) ? 2 : 0)));
    return { id: g.id, d };
  });
  return scored
    .filter((s) => s.d <= Math.max(3, Math.floor(key.length / 2)))
    .sort((a, b) => a.d - b.d)
    .slice(0, max)
    .map((s) => s.id);
}
