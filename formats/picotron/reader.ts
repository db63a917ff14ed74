/** picotron JSON config (template/base_config.json, create_config.py output), read through keys.json. */
import picotron from './keys.json';
import { applyTable, getter, type DialectTable } from '../common/keyTable';
import type { FactSink } from '../common/sink';
import type { KNode } from '../common/tree';

const TABLE = picotron as DialectTable;
const SRC = 'picotron train.py';

/** picotron: 4-D layout, batch and sequence, the model id with its overrides; bf16 weights, replicated DP. */
export function readPicotron(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  applyTable(s, TABLE, getter(root));
  // train.py: dtype = bfloat16 on a GPU with bf16 support; model.to(dtype); AdamW over those weights (no fp32 master).
  s.derived('training.precision', 'bf16', `${SRC}: the model is cast to bfloat16 and trained so (no fp32 master weights)`);
  s.derived('parallel.sharding.style', 'ddp', `${SRC}: DataParallelBucket all-reduces gradients, nothing is sharded`);
  s.derived('parallel.sharding.stage', 0, `${SRC}: DataParallelBucket all-reduces gradients, nothing is sharded`);
  s.derived('engine', 'ddp', `${SRC}: its own tensor, context, pipeline and bucketed data parallelism`);
  s.default('training.recompute', 'none', `${SRC}: no activation checkpointing`);
}
