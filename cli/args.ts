/** Command-line parsing for `shardlens`: positionals, `--flag value`, `--flag=value` and boolean flags. */

export interface ParsedArgs {
  readonly command: string | undefined;
  readonly positionals: readonly string[];
  readonly flags: Readonly<Record<string, string | true>>;
}

/** Flags that never take a value. */
const BOOLEAN_FLAGS = new Set(['json', 'help', 'verbose', 'no-color', 'quick']);

/** Splits argv (without node and script) into a command, positionals and flags. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h') { flags.help = true; continue; }
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

/** A cluster given as `<N>x<GPU>` (N GPUs) or `<nodes>x<perNode>x<GPU>`, or just `<GPU>`. */
export interface GpusArg {
  readonly gpuName: string;
  readonly worldSize?: number;
  readonly nodes?: number;
  readonly gpusPerNode?: number;
}

/** Parses `--gpus`; returns an error message for malformed values. */
export function parseGpusArg(value: string): GpusArg | { error: string } {
  const parts = value.trim().split(/[x×*]/i).map((p) => p.trim());
  const ints = (s: string) => /^\d+$/.test(s);
  if (parts.length === 1 && parts[0]) return { gpuName: parts[0] };
  if (parts.length === 2 && ints(parts[0]) && parts[1]) {
    const n = Number(parts[0]);
    if (n < 1 || n > 1_000_000) return { error: `--gpus ${value}: the GPU count must be between 1 and 1,000,000` };
    return { gpuName: parts[1], worldSize: n };
  }
  if (parts.length === 3 && ints(parts[0]) && ints(parts[1]) && parts[2]) {
    const nodes = Number(parts[0]);
    const per = Number(parts[1]);
    if (nodes < 1 || per < 1) return { error: `--gpus ${value}: node and GPU counts must be positive` };
    return { gpuName: parts[2], worldSize: nodes * per, nodes, gpusPerNode: per };
  }
  return { error: `--gpus ${value}: expected <N>x<GPU> (e.g. 16xH100) or <nodes>x<perNode>x<GPU> (e.g. 2x8xA100-80GB)` };
}

/** Reads a positive integer flag, or returns an error message. */
export function intFlag(flags: ParsedArgs['flags'], name: string, fallback: number, max = 1_000_000): number | { error: string } {
  const v = flags[name];
  if (v === undefined) return fallback;
  if (v === true || !/^\d+$/.test(v) || Number(v) < 1 || Number(v) > max) return { error: `--${name}: expected an integer from 1 to ${max}, got ${v === true ? 'nothing' : v}` };
  return Number(v);
}
