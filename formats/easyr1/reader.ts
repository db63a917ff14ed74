/**
 * EasyR1 YAML (verl-derived): the FSDP actor's batch, sequence, recomputation and sharding through keys.json; the
 * actor has no tensor parallelism (worker.rollout.tensor_parallel_size is the vLLM engine's). A launch line
 * `python3 -m verl.trainer.main config=x.yaml a.b=c …` is read as the config with the overrides on top (OmegaConf).
 */
import easyr1 from './keys.json';
import { applyTable, interpolatingGetter, type DialectTable, type Found } from '../common/keyTable';
import type { FactSink, Loc } from '../common/sink';
import { toBool, toNumber } from '../common/text';
import type { KNode } from '../common/tree';

const TABLE = easyr1 as DialectTable;
const WHY = 'EasyR1 FSDP actor (verl/workers/fsdp_workers.py)';

/** EasyR1 YAML on its own. */
export function readEasyR1(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  applyEasyR1(s, interpolatingGetter(root));
}

/** EasyR1 settings from `get` (a config file, possibly under command-line overrides). */
export function applyEasyR1(s: FactSink, get: (key: string) => Found | undefined): void {
  applyTable(s, TABLE, get);
  const loc = (key: string, f: Found): Loc => ({ key, keyRange: f.keyRange, valueRange: f.valueRange, uri: f.uri });
  const num = (f: Found | undefined) => (f && !f.unresolved ? toNumber(f.value) : undefined);
  const dyn = get('worker.actor.dynamic_batching');
  const mb = get('worker.actor.micro_batch_size_per_device_for_update');
  const mbn = num(mb);
  if (dyn && toBool(dyn.value) === false && mb && mbn && Number.isInteger(mbn) && mbn > 0) s.explicit('training.microBatch', mbn, loc('worker.actor.micro_batch_size_per_device_for_update', mb));
  s.default('parallel.sharding.style', 'fsdp', `${WHY}: enable_full_shard true`);
  s.default('parallel.sharding.stage', 3, `${WHY}: enable_full_shard true`);
  s.derived('engine', 'fsdp1', WHY);
  const size = get('worker.actor.fsdp.fsdp_size');
  const n = num(size);
  const world = (s.num('cluster.nodes') ?? 1) * (s.num('cluster.gpusPerNode') ?? NaN);
  if (size && n && Number.isInteger(n) && n > 0 && n < world) {
    s.explicit('parallel.sharding.fsdpStrategy', s.value('parallel.sharding.stage') === 2 ? '_HYBRID_SHARD_ZERO2' : 'HYBRID_SHARD', loc('worker.actor.fsdp.fsdp_size', size));
    s.explicit('parallel.sharding.shardGroupSize', n, loc('worker.actor.fsdp.fsdp_size', size));
  }
  s.default('parallel.tp', 1, `${WHY}: no tensor parallelism (worker.rollout.tensor_parallel_size is the vLLM engine)`);
  const g = s.num('cluster.gpusPerNode');
  const nodes = s.num('cluster.nodes');
  if (g && nodes) s.derived('cluster.worldSize', g * nodes, 'EasyR1: trainer.n_gpus_per_node × trainer.nnodes');
}
