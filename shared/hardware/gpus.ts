/**
 * The GPU catalog (data/gpus.json) and forgiving lookup by name: "A100-80GB", "a100_80g", "H100", "h100-sxm5-80gb",
 * "NVIDIA H100 80GB HBM3" (torch's device name), "mi300x", "4090" all resolve.
 */
import catalog from '../../data/gpus.json';
import type { GpuSpec } from '../plan/types';
import { editDistance } from '../editDistance';
import { FORM_CLASS, readGpuName, type BoardClass, type GpuNameParts } from './gpuName';

/** A catalog entry: the GpuSpec plus the names it answers to and where its figures come from. */
export interface CatalogGpu extends GpuSpec {
  readonly aliases: readonly string[];
  /** The board the figures are for: sxm, oam, pcie, nvl or superchip. */
  readonly form: string;
  /** Vendor datasheet the figures come from. */
  readonly source: string;
  /**
   * A cloud's accelerator-type ids for exactly this part, matched whole before any reading by words: Google Cloud's
   * `nvidia-tesla-a100` is the 40 GB, though its words say only "A100".
   */
  readonly cloudIds?: readonly string[];
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

/** Cloud accelerator-type ids, lowercase, each naming one entry. */
const CLOUD: ReadonlyMap<string, CatalogGpu> = new Map(GPUS.flatMap((g) => (g.cloudIds ?? []).map((id) => [id.toLowerCase(), g] as const)));

/** Lists the GPU catalog in file order. */
export function listGpus(): readonly CatalogGpu[] {
  return GPUS;
}

/** What an entry's names say together (id, name, aliases), with its capacity in GB and GiB among its sizes. */
interface EntryParts {
  readonly gpu: CatalogGpu;
  readonly board: BoardClass;
  readonly chips: ReadonlySet<string>;
  readonly sizes: ReadonlySet<number>;
  readonly racks: ReadonlySet<string>;
  readonly mems: ReadonlySet<string>;
  readonly words: ReadonlySet<string>;
  /** Chips a name of the entry states alone, or with its board only ("a100", "h100-sxm5"): what a bare chip means. */
  readonly bareChips: ReadonlySet<string>;
}

function entryParts(g: CatalogGpu): EntryParts {
  const names = [g.id, g.name, ...g.aliases].map(readGpuName);
  const all = <T>(f: (p: GpuNameParts) => readonly T[]) => new Set(names.flatMap(f));
  const sizes = all((p) => p.sizes);
  sizes.add(Math.round(g.memoryBytes / 1e9));
  sizes.add(Math.round(g.memoryBytes / 2 ** 30));
  const bare = names.filter((p) => !p.sizes.length && !p.mems.length && !p.racks.length && !p.watts.length && !p.words.length);
  return {
    gpu: g, board: FORM_CLASS[g.form] ?? 'module', chips: all((p) => p.chips), sizes, racks: all((p) => p.racks),
    mems: all((p) => p.mems), words: all((p) => p.words), bareChips: new Set(bare.flatMap((p) => p.chips)),
  };
}

const PARTS: readonly EntryParts[] = GPUS.map(entryParts);

/**
 * Whether an entry is what a name says: its chip, its board, a memory size it has, its power limit, and no word the
 * entry does not carry. A board, size or word of another part ("H200 NVL", "H100 94GB", "V100 PCIe") is that part, not
 * this one. The memory type only chooses between entries that fit (findGpu): names disagree on it for one part.
 */
function fits(q: GpuNameParts, e: EntryParts): boolean {
  if (!q.chips.every((c) => e.chips.has(c))) return false;
  if (q.boards.some((b) => b !== e.board)) return false;
  if (!q.racks.every((r) => e.racks.has(r))) return false;
  if (!q.sizes.every((s) => e.sizes.has(s))) return false;
  if (!q.watts.every((w) => w === e.gpu.powerWatts)) return false;
  return q.words.every((w) => e.words.has(w) || e.chips.has(w));
}

/**
 * Finds a GPU by id, name or alias, forgivingly: an exact key first ("grace-hopper"), then the entries whose chip,
 * board, sizes and words the name's tokens all fit ("NVIDIA H100 80GB HBM3", "Tesla V100-SXM3-32GB",
 * "gb200_nvl72_186gb"). Where several fit, a name that states no board means the socketed part ("H200" is the SXM,
 * not the NVL) and then the entry the bare chip names ("A100" is the 80 GB). A name that fits nothing — another
 * board, a size no part has, a MIG slice, two boards at once — is undefined, never a nearby part.
 */
export function findGpu(name: unknown): CatalogGpu | undefined {
  return lookUp(name)?.gpu;
}

/**
 * A name's entry and the entries it also fits that differ only where the name is silent: `stated` keeps the entries
 * every stated token fits (chip, board, sizes, words, memory type, a bare number); `gpu` is the one the defaults then
 * choose (the socketed board, the bare chip's entry). An exact key has no alternatives.
 */
function lookUp(name: unknown): { gpu: CatalogGpu; stated: readonly CatalogGpu[] } | undefined {
  if (typeof name !== 'string' || name.length > MAX_NAME) return undefined;
  const cloud = CLOUD.get(name.trim().toLowerCase());
  if (cloud) return { gpu: cloud, stated: [cloud] };
  const key = gpuKey(name);
  if (!key) return undefined;
  const q = readGpuName(name);
  const exact = INDEX.get(key);
  // An exact key is a name of one entry, unless it is its bare chip alone ("a100"), which says no size.
  if (exact && (q.sizes.length || q.words.length || q.mems.length || !q.chips.length)) return { gpu: exact, stated: [exact] };
  if (q.mig || !q.chips.length || new Set(q.boards).size > 1) return exact ? { gpu: exact, stated: [exact] } : undefined;
  let hits = PARTS.filter((e) => fits(q, e));
  // Among the entries that fit: the memory type and a bare number the name states ("A100 40" is the 40 GB; the 8 of
  // "gpu:a100:8" is a count and chooses nothing), the socketed part when no board is named, then the bare chip's entry.
  if (hits.length > 1 && q.mems.length) hits = narrow(hits, (e) => !e.mems.size || q.mems.every((m) => e.mems.has(m)));
  if (hits.length > 1 && q.loose.length) hits = narrow(hits, (e) => q.loose.some((n) => e.sizes.has(n)));
  const stated = hits.map((e) => e.gpu);
  if (hits.length > 1 && !q.boards.length) hits = narrow(hits, (e) => e.board === 'module');
  if (hits.length > 1) hits = narrow(hits, (e) => q.chips.every((c) => e.bareChips.has(c)));
  const gpu = exact ?? (hits.length === 1 ? hits[0].gpu : undefined);
  return gpu ? { gpu, stated: stated.includes(gpu) ? stated : [gpu] } : undefined;
}

/**
 * The catalog parts a name also fits that have less memory than the one it is read as ("A100" is read as the 80 GB;
 * the 40 GB fits it too): where the name does not say which, a memory verdict on the larger part may not hold on the
 * smaller one, so the reading is an assumption to name. A larger alternative ("H100" could be the 96 GB) makes the
 * verdict conservative and is not listed. With `readAs` (the part a caller resolved the name to, perhaps through its
 * own lookup), nothing unless the catalog reads the name as that part.
 */
export function smallerGpusNamed(name: unknown, readAs?: GpuSpec): readonly CatalogGpu[] {
  const r = lookUp(name);
  if (!r || (readAs && readAs !== r.gpu)) return [];
  return r.stated.filter((g) => g.memoryBytes < r.gpu.memoryBytes).sort((a, b) => a.memoryBytes - b.memoryBytes);
}

/** Longest name read as a GPU: device names are under 60 characters; a longer value is not one. */
const MAX_NAME = 200;

/** Keeps the entries that pass, unless none does. */
function narrow(hits: EntryParts[], keep: (e: EntryParts) => boolean): EntryParts[] {
  const kept = hits.filter(keep);
  return kept.length ? kept : hits;
}

/** Whether a name is a MIG slice ("NVIDIA A100-SXM4-40GB MIG 3g.20gb"), which the catalog does not model. */
export function isMigSlice(name: string): boolean {
  return readGpuName(name).mig;
}

/**
 * Up to `max` catalog ids closest to a name that is not in the catalog, for "did you mean …?": the same chip ranks first
 * (the board it names, then the others: "V100-PCIE-32GB" suggests the V100s), then the closest spelling.
 */
export function suggestGpus(name: string, max = 3): string[] {
  // Edit distances are quadratic in the name: a value no GPU name is that long has no close catalog name.
  if (name.length > MAX_NAME) return [];
  const key = gpuKey(name);
  const q = readGpuName(name);
  const scored = PARTS.map((e) => {
    const spelling = Math.min(...keysOf(e.gpu).map((k) => editDistance(key, k) - (k.includes(key) || key.includes(k) ? 2 : 0)));
    const chip = q.chips.some((c) => e.chips.has(c)) ? 3 + (q.boards.includes(e.board) ? 1 : 0) : 0;
    return { id: e.gpu.id, d: spelling - chip };
  });
  return scored
    .filter((s) => s.d <= Math.max(3, Math.floor(key.length / 2)))
    .sort((a, b) => a.d - b.d)
    .slice(0, max)
    .map((s) => s.id);
}
