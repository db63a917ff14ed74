/**
 * EasyR1 YAML (verl-derived): the FSDP actor's batch, sequence, recomputation and sharding through keys.json; the
 * actor has no tensor parallelism (worker.rollout.tensor_parallel_size is the vLLM engine's).
 */
import easyr1 from './keys.json';
import { applyTable, interpolatingGetter, type DialectTable } from '../common/keyTable';
import type { FactSink } from '../common/sink';
import { locOf } from '../common/read';
import { toBool, toNumber } from '../common/text';
import { at, type KNode } from '../common/tree';

const TABLE = easyr1 as DialectTable;
const WHY = 'EasyR1 FSDP actor (verl/workers/fsdp_workers.py)';

/** EasyR1: the FSDP actor's layout, batch, sequence and cluster. */
export function readEasyR1(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  applyTable(s, TABLE, interpolatingGetter(root));
  const dyn = at(root, 'worker.actor.dynamic_batching');
  const mb = at(root, 'worker.actor.micro_batch_size_per_device_for_update');
  const mbn = mb ? toNumber(mb.value.value) : undefined;
  if (dyn && toBool(dyn.value.value) === false && mb && mbn && Number.isInteger(mbn) && mbn > 0) s.explicit('training.microBatch', mbn, locOf(mb, 'worker.actor.micro_batch_size_per_device_for_update'));
  s.default('parallel.sharding.style', 'fsdp', `${WHY}: enable_full_shard true`);
  s.default('parallel.sharding.stage', 3, `${WHY}: enable_full_shard true`);
  s.derived('engine', 'fsdp1', WHY);
  const size = at(root, 'worker.actor.fsdp.fsdp_size');
  const n = size ? toNumber(size.value.value) : undefined;
  const world = (s.num('cluster.nodes') ?? 1) * (s.num('cluster.gpusPerNode') ?? NaN);
  if (size && n && Number.isInteger(n) && n > 0 && n < world) {
    s.explicit('parallel.sharding.fsdpStrategy', s.value('parallel.sharding.stage') === 2 ? '_HYBRID_SHARD_ZERO2' : 'HYBRID_SHARD', locOf(size, 'worker.actor.fsdp.fsdp_size'));
    s.explicit('parallel.sharding.shardGroupSize', n, locOf(size, 'worker.actor.fsdp.fsdp_size'));
  }
  s.default('parallel.tp', 1, `${WHY}: no tensor parallelism (worker.rollout.tensor_parallel_size is the vLLM engine)`);
  const g = s.num('cluster.gpusPerNode');
  const nodes = s.num('cluster.nodes');
  if (g && nodes) s.derived('cluster.worldSize', g * nodes, 'EasyR1: trainer.n_gpus_per_node × trainer.nnodes');
}
