/**
 * NeMo-RL YAML (examples/configs, recipes/llm): the policy's batch, sequence and precision, and the layout of the worker
 * that trains it, DTensor (FSDP2) by default or Megatron-core with megatron_cfg.enabled, read through keys.json.
 * A recipe names its base with `defaults:` (merged by formats/common/defaults.ts before this reader runs).
 */
import nemoRl from './keys.json';
import { applyTable, getter, type DialectTable } from '../common/keyTable';
import type { FactSink } from '../common/sink';
import { locOf } from '../common/read';
import { toBool } from '../common/text';
import { at, type KNode } from '../common/tree';
import { moduleListText, recomputeModulesFromText } from '../megatron/recomputeModules';
import { findPreset } from '../../shared/model/presets';

const TABLE = nemoRl as DialectTable;
const WHY = 'NeMo-RL DTensor policy worker: FSDP2 fully_shard (nemo_rl/models/policy/dtensor_policy_worker.py)';

/** NeMo-RL: the enabled policy worker's layout, batch, sequence, precision and cluster. */
export function readNemoRl(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  const flag = (p: string) => { const e = at(root, p); return e ? toBool(e.value.value) : undefined; };
  const megatron = flag('policy.megatron_cfg.enabled') === true;
  const base = getter(root);
  applyTable(s, TABLE, (k) => ((k.startsWith('policy.megatron_cfg.') && !megatron) || (k.startsWith('policy.dtensor_cfg.') && megatron) ? undefined : base(k)));
  if (megatron) {
    const on = at(root, 'policy.megatron_cfg.enabled')!;
    s.explicit('engine', 'megatron', locOf(on, 'policy.megatron_cfg.enabled'));
    const ac = at(root, 'policy.megatron_cfg.activation_checkpointing');
    const gran = at(root, 'policy.megatron_cfg.recompute_granularity');
    if (ac && toBool(ac.value.value) !== undefined) {
      const g = gran && (gran.value.value === 'selective' || gran.value.value === 'full') ? gran.value.value : 'full';
      s.explicit('training.recompute', toBool(ac.value.value) ? g : 'none', locOf(ac, 'policy.megatron_cfg.activation_checkpointing'));
    }
    // recompute_modules: a list (or null, Megatron's default core attention) of what selective recomputation reruns.
    const mods = at(root, 'policy.megatron_cfg.recompute_modules');
    if (mods && (mods.value.kind === 'list' || typeof mods.value.value === 'string')) {
      const text = mods.value.kind === 'list' ? moduleListText(mods.value) : String(mods.value.value);
      recomputeModulesFromText(s, text, locOf(mods, 'policy.megatron_cfg.recompute_modules'), mods.value.range, 'policy.megatron_cfg.recompute_modules');
    }
    // The Megatron worker builds the policy through Megatron-Bridge's AutoBridge, which takes mtp_num_layers from the
    // config.json (model_bridge.py CONFIG_MAPPING) unless megatron_cfg.mtp_num_layers says otherwise.
    const named = s.facts['model.preset']?.value;
    const declared = typeof named === 'string' ? findPreset(named)?.mtpLayersInConfig : undefined;
    if (declared && !s.has('model.mtpLayers') && !at(root, 'policy.megatron_cfg.mtp_num_layers')) {
      s.assumed('model.mtpLayers', declared, `no policy.megatron_cfg.mtp_num_layers: Megatron-Bridge's AutoBridge builds ${named} with its config.json's ${declared} multi-token-prediction layer${declared === 1 ? '' : 's'} (model_bridge.py CONFIG_MAPPING); set mtp_num_layers: 0 to train without`);
    }
    const peft = at(root, 'policy.megatron_cfg.peft.enabled');
    if (peft && toBool(peft.value.value) === true) s.explicit('lora.enabled', true, locOf(peft, 'policy.megatron_cfg.peft.enabled'));
    else delete s.facts['lora.rank'];
    const stage = s.facts['parallel.sharding.stage'];
    if (stage) s.facts['parallel.sharding.style'] = { ...stage, value: stage.value === 1 ? 'megatron-distopt' : 'ddp' };
    s.default('parallel.sharding.style', 'ddp', 'Megatron-core DDP without use_distributed_optimizer');
  } else {
    const en = at(root, 'policy.dtensor_cfg.enabled');
    if (en && toBool(en.value.value) === true) {
      s.explicit('parallel.sharding.style', 'fsdp2', locOf(en, 'policy.dtensor_cfg.enabled'));
      s.explicit('parallel.sharding.stage', 3, locOf(en, 'policy.dtensor_cfg.enabled'));
    } else {
      s.default('parallel.sharding.style', 'fsdp2', WHY);
      s.default('parallel.sharding.stage', 3, WHY);
    }
    s.derived('engine', 'fsdp2', WHY);
    const lora = at(root, 'policy.dtensor_cfg.lora_cfg.enabled');
    if (lora && toBool(lora.value.value) === true) s.explicit('lora.enabled', true, locOf(lora, 'policy.dtensor_cfg.lora_cfg.enabled'));
    else delete s.facts['lora.rank'];
    if (s.has('parallel.sharding.offloadParams')) s.facts['parallel.sharding.offloadOptimizer'] = { ...s.facts['parallel.sharding.offloadParams']! };
  }
  const g = s.num('cluster.gpusPerNode');
  const n = s.num('cluster.nodes');
  if (g && n) s.derived('cluster.worldSize', g * n, 'NeMo-RL: cluster.gpus_per_node × cluster.num_nodes');
}
