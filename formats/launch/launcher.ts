/**
 * Launcher options → cluster facts: torchrun / `python -m torch.distributed.run` (`--nproc_per_node`, `--nnodes`),
 * deepspeed (`--num_gpus`, `--num_nodes`), accelerate launch (`--num_processes` = all GPUs, `--num_machines`,
 * `--config_file`, `--gradient_accumulation_steps`, `--mixed_precision`), srun (`--nodes`, `--ntasks-per-node`),
 * and the NPROC_PER_NODE / NNODES environment prefixes of ms-swift and LLaMA-Factory CLIs.
 */
import type { PlanPath } from '../../shared/plan/paths';
import type { FactSink } from '../common/sink';
import { precisionOf } from '../common/maps';
import { toNumber } from '../common/text';
import { toArgs, base, type FlagArg, type Invocation, type SourceMap } from '../common/shell/commandLine';
import type { SlurmOptions } from '../slurm/directives';
import { unresolved } from '../common/shell/sval';

const norm = (f: string) => '--' + f.replace(/^-+/, '').replace(/-/g, '_');

/** Positive integer of a launcher value ("2", "1:4" elastic ranges take the maximum). */
function count(v: string | undefined): number | undefined {
  const n = toNumber(v?.includes(':') ? v.split(':').pop() : v);
  return n !== undefined && Number.isInteger(n) && n > 0 ? n : undefined;
}

function set(s: FactSink, path: PlanPath, a: FlagArg | undefined): boolean {
  if (!a?.value) return false;
  if (a.unresolved) {
    if (!a.uri) s.unresolved('launcher-unresolved', a.flag, `${a.flag} uses a variable ShardLens could not evaluate.`, a.valueRange, [path]);
    return false;
  }
  const n = count(a.value);
  if (n === undefined) return false;
  const loc = { key: a.flag, keyRange: a.flagRange, valueRange: a.valueRange, uri: a.uri };
  // A node or GPU count the script takes from the scheduler, with its own fallback, is the scheduler's to decide.
  if (a.envDefault && path.startsWith('cluster.')) s.fallback(path, n, a.envDefault, loc);
  else s.explicit(path, n, loc);
  return true;
}

/** What the launcher part of an invocation says; returns true when srun starts the program once per task. */
export function readLauncher(s: FactSink, inv: Invocation, map: SourceMap, slurm: SlurmOptions): boolean {
  const words = inv.launcher;
  const names = words.map((w) => base(w.t));
  const args = toArgs(words, map, (flag) => !/^--(multi_gpu|use_deepspeed|use_fsdp|standalone|force_multi|no_python|overlap|exclusive|tee)$/.test(flag.replace(/-/g, '_')));
  const get = (...keys: string[]) => [...args].reverse().find((a) => keys.includes(norm(a.flag)));
  const accelerate = names.includes('accelerate');
  if (accelerate) {
    const cfg = get('--config_file');
    if (cfg?.value && !cfg.unresolved) s.ref('accelerate', cfg.value, cfg.uri ? undefined : cfg.valueRange, inv.command.cwd);
    // `--use_deepspeed --deepspeed_config_file ds.json` / `--zero_stage N` configure DeepSpeed on the command line.
    const ds = get('--deepspeed_config_file');
    if (ds?.value && !ds.unresolved) s.ref('deepspeed', ds.value, ds.uri ? undefined : ds.valueRange, inv.command.cwd);
    const zero = get('--zero_stage');
    const z = zero?.value !== undefined && !zero.unresolved ? Number(zero.value) : NaN;
    if (zero && Number.isInteger(z) && z >= 0 && z <= 3) {
      const loc = { key: zero.flag, keyRange: zero.flagRange, valueRange: zero.valueRange, uri: zero.uri };
      s.explicit('parallel.sharding.stage', z, loc);
      s.explicit('parallel.sharding.style', 'deepspeed', loc);
    }
    set(s, 'cluster.worldSize', get('--num_processes'));
    set(s, 'cluster.nodes', get('--num_machines'));
    set(s, 'training.gradAccum', get('--gradient_accumulation_steps'));
    const mp = get('--mixed_precision');
    const p = mp?.value ? precisionOf(mp.value) : undefined;
    if (mp && p) s.explicit('training.precision', p, { key: mp.flag, keyRange: mp.flagRange, valueRange: mp.valueRange, uri: mp.uri });
  }
  set(s, 'cluster.gpusPerNode', get('--nproc_per_node', '--num_gpus'));
  set(s, 'cluster.nodes', get('--nnodes', '--num_nodes'));
  // Environment prefixes (`NPROC_PER_NODE=4 swift sft …`), read by torchrun-style CLIs.
  for (const [name, path] of [['NPROC_PER_NODE', 'cluster.gpusPerNode'], ['NNODES', 'cluster.nodes']] as const) {
    const v = inv.command.env?.get(name);
    if (!v || s.has(path)) continue;
    const n = unresolved(v) ? undefined : count(v.t);
    const where = map.of(v);
    if (n) s.explicit(path, n, { key: name, keyRange: where.range, valueRange: where.range, uri: where.uri });
  }
  // srun with options of its own; it starts the program once per task when no launcher sits between them.
  const srun = names.indexOf('srun');
  if (srun < 0) return false;
  const between = names.slice(srun + 1);
  const perTask = !between.some((n) => ['torchrun', 'deepspeed', 'accelerate', 'mpirun'].includes(n)) && !words.some((w) => /torch\.distributed\.(run|launch)/.test(w.t));
  const srunArgs = toArgs(words.slice(srun + 1), map);
  const nodes = srunArgs.find((a) => a.flag === '--nodes');
  const tasks = srunArgs.find((a) => a.flag === '--ntasks-per-node');
  if (nodes?.value && !nodes.unresolved && !s.has('cluster.nodes')) slurm.nodes = { value: nodes.value, range: nodes.valueRange!, key: 'srun --nodes' };
  if (tasks?.value && !tasks.unresolved) slurm.tasksPerNode = { value: tasks.value, range: tasks.valueRange!, key: 'srun --ntasks-per-node' };
  return perTask;
}
