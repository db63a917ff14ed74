/**
 * llm-foundry and OLMo trainer YAML (one vocabulary: global_train_batch_size, device_train_microbatch_size,
 * precision amp_bf16, an FSDP block), read through keys.json with `${variables.x}` looked up in the file.
 */
import foundry from './keys.json';
import { applyTable, getter, type DialectTable } from '../common/keyTable';
import type { FactSink } from '../common/sink';
import { locOf } from '../common/read';
import { fsdpStrategyOf } from '../common/maps';
import { at, entry, type KNode } from '../common/tree';
import { readFoundryModel } from './model';
import { readFoundryOptimizer, readFsdpPrecision } from './training';

const TABLE = foundry as DialectTable;

/** llm-foundry / OLMo: batch, sequence, precision, FSDP and the model block. */
export function readLlmFoundry(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  applyTable(s, TABLE, getter(root));
  readFoundryModel(s, root);
  // Composer and OLMo shard with FSDP FULL_SHARD unless the block names another strategy.
  const block = entry(root, 'fsdp_config') ? 'fsdp_config' : entry(root, 'fsdp') ? 'fsdp' : undefined;
  if (block) {
    const e = at(root, `${block}.sharding_strategy`);
    const strat = e ? fsdpStrategyOf(e.value.value) : undefined;
    if (e && strat) {
      s.explicit('parallel.sharding.style', 'fsdp', locOf(e, `${block}.sharding_strategy`));
      s.explicit('parallel.sharding.stage', strat.stage, locOf(e, `${block}.sharding_strategy`));
      s.explicit('parallel.sharding.fsdpStrategy', strat.strategy, locOf(e, `${block}.sharding_strategy`));
    } else {
      const why = block === 'fsdp' ? 'OLMo FSDPConfig default sharding_strategy FULL_SHARD (olmo/config.py)' : 'Composer FSDP default sharding_strategy FULL_SHARD';
      s.default('parallel.sharding.style', 'fsdp', why);
      s.default('parallel.sharding.stage', 3, why);
    }
  }
  readFsdpPrecision(s, root);
  readFoundryOptimizer(s, root);
  s.derived('engine', 'fsdp1', 'llm-foundry and OLMo train with torch FSDP');
  if (s.value('training.recompute') === undefined) s.default('training.recompute', 'none', 'no activation checkpointing configured');
}
