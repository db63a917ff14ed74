/**
 * Slurm batch scripts: `#SBATCH` directives (and the options of `sbatch`/`srun` lines) → nodes, GPUs per node,
 * tasks per node and the GPU type named by `--gres=gpu:<type>:<n>` / `--gpus-per-node=<type>:<n>`. The values also
 * feed the `$SLURM_*` variables the script reads (SLURM_NNODES, SLURM_JOB_NUM_NODES, SLURM_GPUS_PER_NODE, …).
 * Option names: Slurm's sbatch(1) manual.
 */
import table from './keys.json';
import type { PlanPath } from '../../shared/plan/paths';
import type { TextRange } from '../../shared/plan/types';
import type { FactSink } from '../common/sink';
import { toNumber, type LineIndex } from '../common/text';

/** One Slurm option value with where it was written. */
export interface SlurmValue { readonly value: string; readonly range: TextRange; readonly key: string }

export interface SlurmOptions {
  nodes?: SlurmValue;
  gpusPerNode?: SlurmValue;
  /** GPU type from gres / gpus-per-node (e.g. "a100", "h100"). */
  gpuType?: SlurmValue;
  tasksPerNode?: SlurmValue;
  gpusPerTask?: SlurmValue;
  tasks?: SlurmValue;
}

/** Option spelling → its place in SlurmOptions, from keys.json (aliases included). */
const LONG: Record<string, keyof SlurmOptions> = Object.fromEntries(
  Object.entries((table as { keys: Record<string, { field: keyof SlurmOptions; aliases?: string[] }> }).keys)
    .filter(([k]) => k !== '--gres')
    .flatMap(([k, v]) => [[k, v.field], ...(v.aliases ?? []).map((a) => [a, v.field])]),
);

/** Reads one option (`--name=value`, `--name value`, `-N 2`, `-N2`) into `o`. */
function option(o: SlurmOptions, name: string, value: string | undefined, range: TextRange): void {
  if (value === undefined) return;
  if (name === '--gres') {
    // gpu[:type]:count, possibly in a comma list.
    const m = /(?:^|,)gpu(?::([A-Za-z][\w.-]*))?(?::(\d+))?/.exec(value);
    if (m?.[2]) o.gpusPerNode = { value: m[2], range, key: '#SBATCH --gres' };
    if (m?.[1]) o.gpuType = { value: m[1], range, key: '#SBATCH --gres' };
    return;
  }
  const key = LONG[name];
  if (!key) return;
  if (key === 'gpusPerNode' || key === 'gpusPerTask') {
    const m = /^(?:([A-Za-z][\w.-]*):)?(\d+)$/.exec(value);
    if (!m) return;
    if (m[1]) o.gpuType = { value: m[1], range, key: `#SBATCH ${name}` };
    o[key] = { value: m[2]!, range, key: `#SBATCH ${name}` };
    return;
  }
  o[key] = { value: value.split('-')[0]!, range, key: `#SBATCH ${name}` };
}

/** Options of `#SBATCH` lines (several options per line are allowed). */
export function sbatchDirectives(text: string, li: LineIndex): SlurmOptions {
  const o: SlurmOptions = {};
  const re = /^#SBATCH[ \t]+(.*)$/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const body = m[1]!.replace(/\s+#.*$/, '');
    const at = m.index + m[0].indexOf(m[1]!);
    const toks = [...body.matchAll(/\S+/g)];
    for (let i = 0; i < toks.length; i++) {
      const tok = toks[i]![0];
      const start = at + toks[i]!.index!;
      const eq = tok.indexOf('=');
      if (eq > 0) { option(o, tok.slice(0, eq), tok.slice(eq + 1), li.range(start, start + tok.length)); continue; }
      const short = /^(-[Nn])(\d.*)$/.exec(tok);
      if (short) { option(o, short[1]!, short[2], li.range(start, start + tok.length)); continue; }
      const next = toks[i + 1];
      if (tok.startsWith('-') && next && !next[0].startsWith('-')) { option(o, tok, next[0], li.range(start, at + next.index! + next[0].length)); i++; }
    }
  }
  return o;
}

/** Options of an `sbatch …` command line in the script (`--nodes=${NNODES}` once evaluated). */
export function sbatchCommand(o: SlurmOptions, args: readonly { flag: string; value?: string; valueRange?: TextRange; unresolved?: boolean }[]): void {
  for (const a of args) if (a.value !== undefined && !a.unresolved && a.valueRange && !o[LONG[a.flag] ?? 'gpuType']) option(o, a.flag, a.value, a.valueRange);
}

/** Slurm's environment as the script would see it (for `$SLURM_NNODES` and friends). */
export function slurmEnv(o: SlurmOptions): Record<string, string> {
  const env: Record<string, string> = {};
  if (o.nodes) { env.SLURM_NNODES = o.nodes.value; env.SLURM_JOB_NUM_NODES = o.nodes.value; }
  if (o.gpusPerNode) { env.SLURM_GPUS_PER_NODE = o.gpusPerNode.value; env.SLURM_GPUS_ON_NODE = o.gpusPerNode.value; }
  if (o.tasksPerNode) env.SLURM_NTASKS_PER_NODE = o.tasksPerNode.value;
  return env;
}

/**
 * Cluster facts from Slurm for what the launcher did not say: nodes, and GPUs per node from the GPU request
 * (or tasks per node when `srun` starts one training process per task). The GPU type becomes `cluster.gpuName`.
 */
export function applySlurm(s: FactSink, o: SlurmOptions, processPerTask: boolean): void {
  const set = (path: PlanPath, v: SlurmValue | undefined, n?: number) => {
    const x = n ?? (v ? toNumber(v.value) : undefined);
    if (!v || s.has(path) || x === undefined || !Number.isInteger(x) || x < 1) return;
    s.explicit(path, x, { key: v.key, keyRange: v.range, valueRange: v.range });
  };
  set('cluster.nodes', o.nodes);
  const tasks = o.tasksPerNode ? toNumber(o.tasksPerNode.value) : undefined;
  const perTask = o.gpusPerTask ? toNumber(o.gpusPerTask.value) : undefined;
  if (processPerTask && tasks) set('cluster.gpusPerNode', o.tasksPerNode);
  else if (o.gpusPerNode) set('cluster.gpusPerNode', o.gpusPerNode);
  else if (perTask) set('cluster.gpusPerNode', o.gpusPerTask, perTask * (tasks ?? 1));
  if (o.gpuType && !s.has('cluster.gpuName')) s.explicit('cluster.gpuName', o.gpuType.value, { key: o.gpuType.key, keyRange: o.gpuType.range, valueRange: o.gpuType.range });
}
