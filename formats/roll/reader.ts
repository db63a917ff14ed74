/**
 * ROLL pipeline YAML: the trained worker (sft_train, else actor_train) gives batch, precision and layout through
 * keys.json (`W.` stands for the worker); its strategy picks the engine; device_mapping gives its GPUs.
 */
import roll from './keys.json';
import { applyTable, interpolatingGetter, type DialectTable } from '../common/keyTable';
import type { FactSink } from '../common/sink';
import { locOf } from '../common/read';
import { toBool } from '../common/text';
import { at, entry, type KNode } from '../common/tree';

const TABLE = roll as DialectTable;

/** GPUs named by a ROLL device_mapping: a list, or the text `list(range(a, b[, step]))`. */
function deviceCount(v: KNode): number | undefined {
  if (v.kind === 'list') return v.items?.length || undefined;
  const m = typeof v.value === 'string' ? /^\s*list\(\s*range\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?(?:,\s*(\d+)\s*)?\)\s*\)\s*$/.exec(v.value) : null;
  if (!m) return undefined;
  const [a, b, step] = m[2] === undefined ? [0, Number(m[1]), 1] : [Number(m[1]), Number(m[2]), Number(m[3] ?? 1)];
  const n = step > 0 ? Math.ceil((b - a) / step) : 0;
  return n > 0 ? n : undefined;
}

/** ROLL: the trained worker's layout, batch and precision; the RL step and sequence from the top level. */
export function readRoll(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  const worker = entry(root, 'sft_train') ? 'sft_train' : 'actor_train';
  const base = interpolatingGetter(root);
  applyTable(s, TABLE, (k) => base(k.startsWith('W.') ? `${worker}.${k.slice(2)}` : k));
  const name = at(root, `${worker}.strategy_args.strategy_name`);
  const strategy = typeof name?.value.value === 'string' ? name.value.value : '';
  const where = name ? locOf(name, `${worker}.strategy_args.strategy_name`) : undefined;
  if (/megatron/.test(strategy) && where) {
    s.explicit('engine', 'megatron', where);
    // Megatron recomputes by strategy_config.recompute_granularity; model_args' HF switch does not apply.
    if (s.facts['training.recompute']?.key?.endsWith('disable_gradient_checkpointing')) delete s.facts['training.recompute'];
    const dist = at(root, `${worker}.strategy_args.strategy_config.use_distributed_optimizer`);
    const on = dist ? toBool(dist.value.value) : undefined;
    const loc = dist && on !== undefined ? locOf(dist, `${worker}.strategy_args.strategy_config.use_distributed_optimizer`) : where;
    s.explicit('parallel.sharding.style', on ? 'megatron-distopt' : 'ddp', loc);
    s.explicit('parallel.sharding.stage', on ? 1 : 0, loc);
  } else if (/fsdp/.test(strategy) && where) {
    s.explicit('engine', 'fsdp2', where);
    s.explicit('parallel.sharding.style', 'fsdp2', where);
    s.explicit('parallel.sharding.stage', 3, where);
  } else if (/deepspeed/.test(strategy) && where) {
    s.explicit('engine', 'deepspeed', where);
    s.explicit('parallel.sharding.style', 'deepspeed', where);
  }
  const dm = at(root, `${worker}.device_mapping`);
  const n = dm ? deviceCount(dm.value) : undefined;
  if (dm && n) s.explicit('cluster.worldSize', n, locOf(dm, `${worker}.device_mapping`));
}
