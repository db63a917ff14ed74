/** Command-line parsing for `shardlens`: positionals, `--flag value`, `--flag=value` and boolean flags. */

/**
 * Flags by name, in an object without a prototype: a flag that was not given reads as undefined, never as something
 * inherited (a polluted `Object.prototype` cannot inject `--trace` or `--out`).
 */
export type Flags = Readonly<Record<string, string | true | undefined>>;

export interface ParsedArgs {
  readonly command: string | undefined;
  readonly positionals: readonly string[];
  readonly flags: Flags;
}

/** Flags that never take a value. */
const BOOLEAN_FLAGS = new Set(['json', 'help', 'verbose', 'no-color', 'trust', 'list', 'data-parallel-only', 'oversubscribe', 'fake', 'quick']);

/** Flags every command accepts. */
const COMMON_FLAGS = ['help', 'verbose', 'no-color'];
const LOAD_FLAGS = ['model', 'gpus', 'json', 'workspace', 'config'];

/** The flags each command understands; anything else is a usage error (exit 2), not silently ignored. */
export const COMMAND_FLAGS: ReadonlyMap<string, readonly string[]> = new Map([
  ['estimate', [...LOAD_FLAGS, 'profile']],
  ['simulate', [...LOAD_FLAGS, 'profile', 'trace']],
  ['plan', [...LOAD_FLAGS, 'profile', 'top']],
  ['params', ['json', 'list']],
  ['gpus', ['json']],
  ['validate', [...LOAD_FLAGS, 'ranks', 'modes', 'steps', 'trust']],
  ['probe', [...LOAD_FLAGS, 'ranks', 'mode', 'out', 'python', 'steps', 'data-parallel-only', 'oversubscribe', 'trust', 'fake', 'layers', 'hf-config']],
  ['profile', [...LOAD_FLAGS, 'ranks', 'oversubscribe', 'out', 'cluster', 'quick', 'python', 'trust']],
  ['calibrate', [...LOAD_FLAGS, 'log', 'cluster-id']],
]);

/** Splits argv (without node and script) into a command, positionals and flags. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags: Record<string, string | true> = Object.create(null) as Record<string, string | true>;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h') { flags.help = true; continue; }
    if (a === '--') { positionals.push(...argv.slice(i + 1)); break; }
    if (!a.startsWith('--')) { positionals.push(a); continue; }
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
    if (eq > 0) flags[name] = a.slice(eq + 1);
    else if (BOOLEAN_FLAGS.has(name) || i + 1 >= argv.length || argv[i + 1].startsWith('--')) flags[name] = true;
    else flags[name] = argv[++i];
  }
  const [command, ...rest] = positionals;
  return { command, positionals: rest, flags };
}

/** A copy of the flags (still without a prototype) with one flag set. */
export function withFlag(flags: Flags, name: string, value: string | true): Flags {
  const out = Object.assign(Object.create(null) as Record<string, string | true | undefined>, flags);
  out[name] = value;
  return out;
}

/** Flags the command does not know, as a message, or undefined when all are known. */
export function unknownFlags(args: ParsedArgs): string | undefined {
  const known = args.command ? COMMAND_FLAGS.get(args.command) : undefined;
  if (!known) return undefined;
  const bad = Object.keys(args.flags).filter((f) => !known.includes(f) && !COMMON_FLAGS.includes(f));
  return bad.length ? `${args.command}: unknown option${bad.length > 1 ? 's' : ''} ${bad.map((b) => `--${b}`).join(', ')} (see shardlens --help)` : undefined;
}

/** A flag that must be a string when given: its value, undefined when absent, or an error message for a bare flag. */
export function stringFlag(flags: Flags, name: string, example: string): string | undefined | { error: string } {
  const v = flags[name];
  if (v === undefined) return undefined;
  return v === true || v === '' ? { error: `--${name} needs a value, e.g. --${name} ${example}` } : v;
}

/** A cluster given as `<N>x<GPU>` (N GPUs) or `<nodes>x<perNode>x<GPU>`, or just `<GPU>`. */
export interface GpusArg {
  readonly gpuName: string;
  readonly worldSize?: number;
  readonly nodes?: number;
  readonly gpusPerNode?: number;
}

/**
 * Parses `--gpus`; returns an error message for malformed values. Counts lead and are separated by `x`, `×` or `*`
 * (`16xH100`, `2x8xA100-80GB`); the rest is the GPU name, whose own letters stay (the `x` in "SXM" is not a separator).
 */
export function parseGpusArg(value: string): GpusArg | { error: string } {
  const v = value.trim();
  const m = /^(\d+)\s*[x×*]\s*(?:(\d+)\s*[x×*]\s*)?(.*)$/i.exec(v);
  if (!m) return v ? { gpuName: v } : { error: '--gpus needs a value such as 16xH100' };
  const name = m[3].trim();
  if (!name) return { error: `--gpus ${value}: expected <N>x<GPU> (e.g. 16xH100) or <nodes>x<perNode>x<GPU> (e.g. 2x8xA100-80GB)` };
  if (m[2] === undefined) {
    const n = Number(m[1]);
    if (n < 1 || n > 1_000_000) return { error: `--gpus ${value}: the GPU count must be between 1 and 1,000,000` };
    return { gpuName: name, worldSize: n };
  }
  const nodes = Number(m[1]);
  const per = Number(m[2]);
  if (nodes < 1 || per < 1 || nodes * per > 1_000_000) return { error: `--gpus ${value}: node and GPU counts must be positive (at most 1,000,000 GPUs)` };
  return { gpuName: name, worldSize: nodes * per, nodes, gpusPerNode: per };
}

/** Reads a positive integer flag, or returns an error message. */
export function intFlag(flags: Flags, name: string, fallback: number, max = 1_000_000): number | { error: string } {
  const v = flags[name];
  if (v === undefined) return fallback;
  if (v === true || !/^\d+$/.test(v) || Number(v) < 1 || Number(v) > max) return { error: `--${name}: expected an integer from 1 to ${max}, got ${v === true ? 'nothing' : v}` };
  return Number(v);
}
