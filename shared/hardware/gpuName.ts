/**
 * What a GPU name says, read token by token from the name as written: the chip ("H100", "MI300X", "4090"), the board
 * ("SXM5", "PCIe", "NVL", "OAM", "HGX"), memory sizes ("80GB", "141 GiB"), the memory type, a power limit ("500W"),
 * an NVLink rack ("NVL72") and any other words. torch and nvidia-smi name devices this way
 * ("NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB", "NVIDIA A100-SXM4-40GB MIG 3g.20gb"), and so do Slurm gres names
 * and Kubernetes node labels ("nvidia_h100_80gb_hbm3", "NVIDIA-H100-80GB-HBM3").
 *
 * Reading the tokens of the written name, not a compacted key, keeps numbers apart: "A100 24GB" is an A100 with
 * 24 GB (no such part), never the A10; "V100-SXM3-32GB" is a V100 with 32 GB, not a V100 with "332g".
 */

/** The board class a name asks for: a socketed module (SXM, OAM, and the HGX/DGX baseboards), a PCIe card, or an NVL card. */
export type BoardClass = 'module' | 'pcie' | 'nvl';

/** The catalog's board forms (data/gpus.json "form") and the class each belongs to. */
export const FORM_CLASS: Readonly<Record<string, BoardClass>> = { sxm: 'module', oam: 'module', superchip: 'module', pcie: 'pcie', nvl: 'nvl' };

/** One GPU name, read. */
export interface GpuNameParts {
  /** Chip tokens, lowercase, "rtx" dropped: "h100", "mi300x", "l40s", "4090". */
  readonly chips: readonly string[];
  /** Board classes the name states (two different ones contradict each other). */
  readonly boards: readonly BoardClass[];
  /** NVLink racks ("nvl72"): GB200 NVL72 is a rack of superchips, not an NVL card. */
  readonly racks: readonly string[];
  /** Memory sizes as written, in GB or GiB. */
  readonly sizes: readonly number[];
  /** Memory types ("hbm3", "hbm2e"). */
  readonly mems: readonly string[];
  /** Power limits in watts. */
  readonly watts: readonly number[];
  /** Other words ("grace", "ultra", "rtx"); a word the catalog entry does not carry makes the name another part. */
  readonly words: readonly string[];
  /** Bare one- or two-digit numbers: a GPU count ("gpu:h100:8") or a size written without its unit ("A100 40"). */
  readonly loose: readonly number[];
  /** A MIG slice ("MIG 3g.20gb", "a100_3g.40gb"): a fraction of a GPU, not the GPU. */
  readonly mig: boolean;
}

/**
 * Words that carry no identity: vendor and marketing words, the runtime a log names the device with ("cuda:NVIDIA …"),
 * and descriptors that do not make another part: "Superchip" (GH200, GB200), an SR-IOV virtual function ("AMD Instinct
 * MI300X VF", a whole GPU on Azure), a Kubernetes time-slicing label's "SHARED", torch's "NVIDIA B300 SXM6 AC", the
 * V100's "-LS", Google Cloud's "nvidia-h100-mega-80gb" (the H100 of its A3 Mega machines).
 */
const NOISE = new Set([
  'nvidia', 'amd', 'instinct', 'tesla', 'geforce', 'tensor', 'core', 'gpu', 'graphics', 'accelerator', 'cuda', 'rocm', 'hip',
  'superchip', 'vf', 'shared', 'ac', 'ls', 'mega',
]);
/** Architecture names: they restate the chip ("H100 Hopper") and never tell two catalog parts apart. */
const ARCH = new Set(['volta', 'ampere', 'hopper', 'ada', 'lovelace', 'blackwell', 'cdna', 'cdna2', 'cdna3']);

const MODULE_BOARD = /^(?:sxm\d?|oam|hgx|dgx)/;
/** The pieces a token holds after its chip (or instead of one), tried in order, each with what it records. */
const PIECES: readonly [RegExp, (m: RegExpExecArray, p: Mutable) => void][] = [
  [MODULE_BOARD, (_m, p) => p.boards.push('module')],
  [/^pcie(?:gen\d)?/, (_m, p) => p.boards.push('pcie')],
  [/^nvl(\d+)/, (m, p) => p.racks.push(`nvl${m[1]}`)],
  [/^nvl(?:ink)?/, (m, p) => (m[0] === 'nvlink' ? p.words.push('nvlink') : p.boards.push('nvl'))],
  [/^(?:hbm\d?e?|gddr\dx?)/, (m, p) => p.mems.push(m[0])],
  [/^gen\d/, () => undefined],
  [/^(\d+)(?:gib|gb|g)(?!\d)/, (m, p) => p.sizes.push(Number(m[1]))],
  [/^(\d+)w(?![a-z0-9])/, (m, p) => p.watts.push(Number(m[1]))],
];

type Mutable = { -readonly [K in keyof GpuNameParts]: GpuNameParts[K] extends readonly (infer T)[] ? T[] : GpuNameParts[K] };

/** Letters then digits then at most one letter that ends the chip ("mi300x", "l40s", "a10g", "h100" of "h100sxm5"). */
const CHIP = /^[a-z]*\d+(?:[a-z](?![a-z]))?/;

/** Reads the pieces of one token after its chip; false when something is left that is not a known piece. */
function readPieces(rest: string, p: Mutable): boolean {
  let s = rest;
  while (s) {
    const hit = PIECES.find(([re]) => re.test(s));
    if (!hit) return false;
    const m = hit[0].exec(s)!;
    hit[1](m, p);
    s = s.slice(m[0].length);
  }
  return true;
}

/** Reads a GPU name into its parts (see the file comment). */
export function readGpuName(name: string): GpuNameParts {
  const p = empty();
  // "80 GB" and "500 W" are one token each; a count glued to the chip ("H100x8", "8xH100") is a word of its own.
  const text = name.toLowerCase()
    .replace(/(\d)\s+(gib|gb|w)(?![a-z0-9])/g, '$1$2')
    .replace(/([a-z]\d{2,})x(\d{1,4})(?![a-z0-9])/g, '$1 x$2')
    .replace(/(?<![a-z0-9])(\d{1,4})x(?=[a-z])/g, '$1x ');
  // A MIG profile, "<compute slices>g.<memory>gb", names a slice even without the word MIG ("a100_3g.40gb").
  if (/(?:^|[^a-z0-9])\d+g\.\d+gb(?![a-z0-9])/.test(text)) p.mig = true;
  for (const token of text.split(/[^a-z0-9]+/)) {
    if (!token || NOISE.has(token) || ARCH.has(token)) continue;
    if (token === 'mig') {
      p.mig = true;
      continue;
    }
    // A count ("8", "x8", "8x") or a size without its unit: never a chip.
    if (/^\d{1,2}$/.test(token)) {
      p.loose.push(Number(token));
      continue;
    }
    if (/^(?:x|x\d{1,4}|\d{1,4}x)$/.test(token)) continue;
    const whole = empty();
    if (readPieces(token, whole)) {
      merge(p, whole);
      continue;
    }
    const chip = /\d/.test(token) ? CHIP.exec(token)?.[0] : undefined;
    const scratch = empty();
    if (chip && readPieces(token.slice(chip.length), scratch)) {
      p.chips.push(chip.replace(/^rtx(?=\d)/, ''));
      merge(p, scratch);
    } else p.words.push(token);
  }
  return p;
}

function empty(): Mutable {
  return { chips: [], boards: [], racks: [], sizes: [], mems: [], watts: [], words: [], loose: [], mig: false };
}

function merge(into: Mutable, from: Mutable): void {
  into.boards.push(...from.boards);
  into.racks.push(...from.racks);
  into.sizes.push(...from.sizes);
  into.mems.push(...from.mems);
  into.watts.push(...from.watts);
  into.words.push(...from.words);
}
