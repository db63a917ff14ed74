/** Hugging Face Accelerate config YAML (accelerate/commands/config/config_args.py; docs/formats/accelerate.md). */
import type { FactSink } from '../common/sink';
import { hfTrainerAccumulation, isEmpty, locOf, readBool, readNum, readStr } from '../common/read';
import { fsdpStrategyOf, precisionOf } from '../common/maps';
import { toBool, toNumber } from '../common/text';
import { at, entry, type KNode } from '../common/tree';

const ACC = 'Accelerate default (accelerate/utils/dataclasses.py)';

export function readAccelerate(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  hfTrainerAccumulation(s, 'Accelerate (the HF Trainer or accumulate())');
  const dt = (readStr(root, 'distributed_type') ?? '').toUpperCase();
  const dte = entry(root, 'distributed_type');
  const np = at(root, 'num_processes');
  const n = np ? toNumber(np.value.value) : undefined;
  if (np && n === -1) s.diag('accelerate-all-gpus', 'info', 'num_processes: -1 means every visible GPU; set shardlens.cluster settings to say how many.', np.value.range, ['cluster.worldSize']);
  else readNum(s, root, 'num_processes', 'cluster.worldSize', { int: true, min: 1 });
  readNum(s, root, 'num_machines', 'cluster.nodes', { int: true, min: 1 });
  const mp = at(root, 'mixed_precision');
  const prec = mp && mp.value.kind === 'scalar' ? precisionOf(String(mp.value.value)) : undefined;
  if (mp && prec) s.explicit('training.precision', prec, locOf(mp, 'mixed_precision'));

  if (dt === 'DEEPSPEED') {
    s.explicit('parallel.sharding.style', 'deepspeed', locOf(dte!, 'distributed_type'));
    const file = at(root, 'deepspeed_config.deepspeed_config_file');
    if (file && !isEmpty(file)) s.ref('deepspeed', String(file.value.value), file.value.range);
    readNum(s, root, 'deepspeed_config.zero_stage', 'parallel.sharding.stage', { int: true });
    for (const [k, p] of [['offload_optimizer_device', 'parallel.sharding.offloadOptimizer'], ['offload_param_device', 'parallel.sharding.offloadParams']] as const) {
      const e = at(root, `deepspeed_config.${k}`);
      const v = e && readStr(root, `deepspeed_config.${k}`);
      if (e && v && ['none', 'cpu', 'nvme'].includes(v)) s.explicit(p, v, locOf(e, `deepspeed_config.${k}`));
    }
    readNum(s, root, 'deepspeed_config.gradient_accumulation_steps', 'training.gradAccum', { int: true, min: 1 });
  } else if (dt === 'FSDP') {
    readFsdp(s, root);
  } else if (dt === 'MULTI_GPU' && dte) {
    s.explicit('parallel.sharding.style', 'ddp', locOf(dte, 'distributed_type'));
    s.explicit('parallel.sharding.stage', 0, locOf(dte, 'distributed_type'));
  } else if (dt === 'MEGATRON_LM') {
    readNum(s, root, 'megatron_lm_config.megatron_lm_tp_degree', 'parallel.tp', { int: true, min: 1 });
    readNum(s, root, 'megatron_lm_config.megatron_lm_pp_degree', 'parallel.pp', { int: true, min: 1 });
    readBool(s, root, 'megatron_lm_config.megatron_lm_sequence_parallelism', 'parallel.sp');
    readBool(s, root, 'megatron_lm_config.megatron_lm_recompute_activations', 'training.recompute', (b) => (b ? 'selective' : 'none'));
    const d = readBool(s, root, 'megatron_lm_config.megatron_lm_use_distributed_optimizer');
    if (d) { s.derived('parallel.sharding.style', 'megatron-distopt', 'megatron_lm_use_distributed_optimizer'); s.derived('parallel.sharding.stage', 1, 'megatron_lm_use_distributed_optimizer'); }
  } else if ((dt === 'NO' || dt === '') && dte) {
    s.default('cluster.worldSize', 1, 'Accelerate: distributed_type NO runs one process');
    // One process: nothing to shard (no ZeRO, no FSDP).
    if (dt === 'NO') { s.explicit('parallel.sharding.style', 'ddp', locOf(dte, 'distributed_type')); s.explicit('parallel.sharding.stage', 0, locOf(dte, 'distributed_type')); }
  }
  readParallelism(s, root);
}

function readFsdp(s: FactSink, root: KNode): void {
  const ver = toNumber(readStr(root, 'fsdp_config.fsdp_version') ?? '1') ?? 1;
  const verE = at(root, 'fsdp_config.fsdp_version');
  if (verE) s.explicit('parallel.sharding.style', ver === 2 ? 'fsdp2' : 'fsdp', locOf(verE, 'fsdp_config.fsdp_version'));
  else s.default('parallel.sharding.style', 'fsdp', `${ACC}: fsdp_version 1 when absent`);
  const strat = at(root, 'fsdp_config.fsdp_sharding_strategy');
  const rs = at(root, 'fsdp_config.fsdp_reshard_after_forward');
  const fromStrat = strat ? fsdpStrategyOf(strat.value.value) : undefined;
  const rsVal = rs?.value.value;
  const rsStrat = rs ? fsdpStrategyOf(rsVal) : undefined;
  if (fromStrat && strat) {
    s.explicit('parallel.sharding.stage', fromStrat.stage, locOf(strat, 'fsdp_config.fsdp_sharding_strategy'));
    s.explicit('parallel.sharding.fsdpStrategy', fromStrat.strategy, locOf(strat, 'fsdp_config.fsdp_sharding_strategy'));
    if (ver === 2) s.diag('accelerate-fsdp-v1-key', 'warning', 'fsdp_sharding_strategy is the FSDP v1 key; FSDP2 uses fsdp_reshard_after_forward (true/false).', strat.keyRange, ['parallel.sharding.stage']);
  } else if (rs && rsStrat) {
    s.explicit('parallel.sharding.stage', rsStrat.stage, locOf(rs, 'fsdp_config.fsdp_reshard_after_forward'));
    s.explicit('parallel.sharding.fsdpStrategy', rsStrat.strategy, locOf(rs, 'fsdp_config.fsdp_reshard_after_forward'));
  } else if (rs && toBool(rsVal) !== undefined) {
    const b = toBool(rsVal)!;
    s.explicit('parallel.sharding.stage', b ? 3 : 2, locOf(rs, 'fsdp_config.fsdp_reshard_after_forward'));
    s.explicit('parallel.sharding.reshardAfterForward', b, locOf(rs, 'fsdp_config.fsdp_reshard_after_forward'));
  }
  s.default('parallel.sharding.stage', 3, `${ACC}: FULL_SHARD / reshard_after_forward true`);
  s.default('parallel.sharding.fsdpStrategy', 'FULL_SHARD', ACC);
  const off = readBool(s, root, 'fsdp_config.fsdp_offload_params', 'parallel.sharding.offloadParams', (b) => (b ? 'cpu' : 'none'));
  if (off !== undefined) readBool(s, root, 'fsdp_config.fsdp_offload_params', 'parallel.sharding.offloadOptimizer', (b) => (b ? 'cpu' : 'none'));
  readBool(s, root, 'fsdp_config.fsdp_activation_checkpointing', 'training.recompute', (b) => (b ? 'full' : 'none'));
}

/** parallelism_config (Accelerate ≥ 1.10): dp_replicate × dp_shard × tp × cp (× sp). */
function readParallelism(s: FactSink, root: KNode): void {
  const p = 'parallelism_config.parallelism_config_';
  readNum(s, root, `${p}tp_size`, 'parallel.tp', { int: true, min: 1 });
  const cp = readNum(s, root, `${p}cp_size`, 'parallel.cp', { int: true, min: 1 });
  if (cp === undefined) readNum(s, root, `${p}sp_size`, 'parallel.cp', { int: true, min: 1 });
  const shard = readNum(s, root, `${p}dp_shard_size`, 'parallel.sharding.shardGroupSize', { int: true, min: 1 });
  const rep = readNum(s, root, `${p}dp_replicate_size`, 'parallel.dpReplicate', { int: true, min: 1 });
  if (shard !== undefined || rep !== undefined) s.derived('parallel.dp', (shard ?? 1) * (rep ?? 1), 'parallelism_config: dp_replicate × dp_shard');
}
