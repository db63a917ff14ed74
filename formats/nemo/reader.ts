/**
 * NeMo YAML: NeMo 1 configs (examples/nlp/language_modeling/conf, tuning/conf), NeMo-Framework-Launcher stage configs
 * (launcher_scripts/conf/training|fine_tuning|peft) and NeMo 2 recipe overrides (`trainer.strategy.*`, `data.*`, as
 * literal dotted keys inside Megatron-LM test YAMLs' MODEL_ARGS), read through keys.json.
 */
import nemo from './keys.json';
import { applyTable, getter, type DialectTable } from '../common/keyTable';
import type { FactSink } from '../common/sink';
import { at, entry, type KNode } from '../common/tree';
import { locOf } from '../common/read';
import { toBool, toNumber } from '../common/text';

const NEMO = nemo as DialectTable;

/**
 * Drop and pad (Megatron-core's `moe_pad_expert_input_to_capacity` with `moe_expert_capacity_factor`, as
 * formats/megatron/args.ts reads the flags): the factor is model.moe.capacityFactor only with the padding on.
 */
function nemoCapacity(s: FactSink, root: KNode): void {
  const pad = at(root, 'model.moe_pad_expert_input_to_capacity');
  if (!pad || pad.value.kind !== 'scalar' || toBool(pad.value.value) !== true) return;
  const cf = at(root, 'model.moe_expert_capacity_factor');
  const c = cf?.value.kind === 'scalar' ? toNumber(cf.value.value) : undefined;
  if (cf && c !== undefined && c > 0) s.explicit('model.moe.capacityFactor', c, locOf(cf, 'model.moe_expert_capacity_factor'));
}

/** NeMo (1, launcher, 2 overrides): layout, batch, sequence, precision, distributed optimizer, PEFT. */
export function readNemo(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  const flat = entry(root, 'MODEL_ARGS')?.value;
  applyTable(s, NEMO, getter(root, flat?.kind === 'map' ? flat : undefined));
  // The GPT dataset cuts samples to model.data.seq_length (megatron_gpt_model.py builds it with
  // seq_length=self.cfg.data.seq_length); it usually interpolates encoder_seq_length, but a number written there wins.
  const data = at(root, 'model.data.seq_length');
  if (data && typeof data.value.value === 'number' && Number.isInteger(data.value.value) && data.value.value > 0) s.explicit('training.seqLen', data.value.value, locOf(data, 'model.data.seq_length'));
  nemoCapacity(s, root);
  const optim = s.value('parallel.sharding.stage');
  if (optim !== undefined) {
    const f = s.facts['parallel.sharding.stage']!;
    s.facts['parallel.sharding.style'] = { ...f, value: optim === 1 ? 'megatron-distopt' : 'ddp' };
  }
  if (s.value('lora.enabled') === false) { delete s.facts['lora.enabled']; delete s.facts['lora.rank']; }
  const d = (p: 'parallel.tp' | 'parallel.pp', v: number, why: string) => s.default(p, v, `NeMo default: ${why} (megatron_gpt_config.yaml)`);
  d('parallel.tp', 1, 'tensor_model_parallel_size 1');
  d('parallel.pp', 1, 'pipeline_model_parallel_size 1');
  s.derived('engine', 'megatron', 'NeMo trains with Megatron-core');
  const g = s.num('cluster.gpusPerNode');
  const n = s.num('cluster.nodes');
  if (g && n) s.derived('cluster.worldSize', g * n, 'NeMo: trainer.devices × trainer.num_nodes');
}

