/**
 * The GPU catalog (data/gpus.json) and forgiving lookup by name: "A100-80GB", "a100_80g", "H100", "h100-sxm5-80gb",
 * "NVIDIA H100 80GB HBM3" (torch's device name), "mi300x", "4090" all resolve.
 */
import catalog from '../../data/gpus.json';
import type { GpuSpec } from '../plan/types';
import { editDistance } from '../editDistance';

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

/** Board words that make a different part of the same chip: "H800 PCIe" is not the H800 SXM, "H200 NVL" not the H200. */
const PART = /pcie|nvl/g;
/** The socketed module (SXM, OAM) and the baseboards built on it (HGX, DGX): the catalog's default form of a chip. */
const MODULE = /sxm|oam|hgx|dgx/;

/** Memory sizes (in GB or GiB, rounded) an entry stands for: those its names carry and its capacity in either unit. */
function sizesOf(g: CatalogGpu): Set<number> {
  const out = new Set([Math.round(g.memoryBytes / 1e9), Math.round(g.memoryBytes / 2 ** 30)]);
  for (const k of keysOf(g)) for (const m of k.matchAll(/(\d+)g(?![a-z])|(\d+)g(?=hbm)/g)) out.add(Number(m[1] ?? m[2]));
  return out;
}

/**
 * Whether the rest of a query after a catalog key only restates the entry (memory type, a size it has, a revision
 * digit, its own board: "H100 HGX", "MI300X OAM"): a board or a memory size the entry does not have names another part
 * ("H200 NVL", "H100 PCIe" after "h100", "H100 94GB"), which must not be read as this one.
 */
function restFits(key: string, rest: string, g: CatalogGpu): boolean {
  // A key never ends inside a number of the query: "a10" is not a prefix of "A100 24GB".
  if (/\d$/.test(key) && /^\d/.test(rest)) return false;
  const own = keysOf(g).join(' ');
  for (const w of rest.match(PART) ?? []) if (!own.includes(w)) return false;
  // A module or baseboard word fits the socketed parts, not a PCIe or NVL card (GB200 NVL72's "nvl72" is its rack).
  if (MODULE.test(rest) && /pcie|nvl(?!\d)/.test(own)) return false;
  const sizes = sizesOf(g);
  for (const m of rest.matchAll(/(\d+)g/g)) if (!sizes.has(Number(m[1]))) return false;
  return true;
}

/**
 * Finds a GPU by id, name or alias, forgivingly: exact key first, then the longest catalog key that prefixes the query
 * where the rest only restates the entry (so "h100sxm580ghbm3" finds "h100sxm580g", while "H200 NVL" and "H100 94GB"
 * find nothing rather than the H200 SXM and the H100 SXM 80GB). Returns undefined for unknown or empty names.
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
    if (k.length > bestLen && k.length >= 3 && key.startsWith(k) && restFits(k, key.slice(k.length), g)) {
      best = g;
      bestLen = k.length;
    }
  }
  return best;
}

/** The chip a key names, its leading letters and digits ("v100pcie32g" → "v100", "mi325x" → "mi325x"). */
function chipOf(key: string): string {
  return /^[a-z]*\d+(?:[a-z](?![a-z]))?/.exec(key)?.[0] ?? key;
}

/** Up to `max` catalog ids closest to a misspelt name, for "did you mean …?"; the same chip in another form ranks first. */
export function suggestGpus(name: string, max = 3): string[] {
  const key = gpuKey(name);
  const chip = chipOf(key);
  const scored = GPUS.map((g) => {
    const d = Math.min(...keysOf(g).map((k) => editDistance(key, k) - (k.includes(key) || key.includes(k) ? 2 : 0) - (chipOf(k) === chip ? 3 : 0)));
    return { id: g.id, d };
  });
  return scored
    .filter((s) => s.d <= Math.max(3, Math.floor(key.length / 2)))
    .sort((a, b) => a.d - b.d)
    .slice(0, max)
    .map((s) => s.id);
}
