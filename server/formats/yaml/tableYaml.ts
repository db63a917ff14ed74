/**
 * YAML dialects read entirely through a key table (data/formats/dialects/*.json): NeMo 1 / NeMo-Framework-Launcher
 * and NeMo 2 overrides, GPT-NeoX, and Hugging Face TrainingArguments YAML (TRL, alignment-handbook, open-r1).
 * Keys are looked up as nested paths, as literal dotted keys (NeMo 2 overrides inside Megatron-LM test YAMLs'
 * MODEL_ARGS) and, for GPT-NeoX, with `-` read as `_`.
 */
import gptNeox from '../../../data/formats/dialects/gpt-neox.json';
import hfTrainer from '../../../data/formats/dialects/hf-trainer.json';
import nemo from '../../../data/formats/dialects/nemo.json';
import { applyTable, type DialectTable, type Found } from '../common/keyTable';
import type { FactSink } from '../common/sink';
import { at, entry, type KEntry, type KNode } from '../common/tree';

const NEMO = nemo as DialectTable;
const NEOX = gptNeox as DialectTable;
const HF = hfTrainer as DialectTable;

function found(e: KEntry | undefined): Found | undefined {
  if (!e || e.value.kind !== 'scalar' || e.value.value === null || e.value.value === undefined || e.value.value === '') return undefined;
  const v = e.value.value;
  return { value: typeof v === 'boolean' || typeof v === 'number' ? v : String(v), keyRange: e.keyRange, valueRange: e.value.range, unresolved: typeof v === 'string' && /\$\{|\?\?\?/.test(v) };
}

/** Looks `path` up as nested keys, then as a literal dotted key in `flat` (a map of dotted overrides). */
function getter(root: KNode, flat?: KNode): (path: string) => Found | undefined {
  return (path) => found(at(root, path)) ?? (flat ? found(entry(flat, path)) : undefined);
}

/** NeMo (1, launcher, 2 overrides): layout, batch, sequence, precision, distributed optimizer, PEFT. */
export function readNemo(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  const flat = entry(root, 'MODEL_ARGS')?.value;
  applyTable(s, NEMO, getter(root, flat?.kind === 'map' ? flat : undefined));
  const optim = s.value('parallel.sharding.stage');
  if (optim !== undefined) {
    const f = s.facts['parallel.sharding.stage']!;
    s.facts['parallel.sharding.style'] = { ...f, value: optim === 1 ? 'megatron-distopt' : 'ddp' };
  }
  if (s.value('lora.enabled') === false) { delete s.facts['lora.enabled']; delete s.facts['lora.rank']; }
  const d = (p: string, v: number, why: string) => s.default(p, v, `NeMo default: ${why} (megatron_gpt_config.yaml)`);
  d('parallel.tp', 1, 'tensor_model_parallel_size 1');
  d('parallel.pp', 1, 'pipeline_model_parallel_size 1');
  s.derived('engine', 'megatron', 'NeMo trains with Megatron-core');
  const g = s.num('cluster.gpusPerNode');
  const n = s.num('cluster.nodes');
  if (g && n) s.derived('cluster.worldSize', g * n, 'NeMo: trainer.devices × trainer.num_nodes');
}

/** GPT-NeoX configs (DeepSpeed engine; `-` and `_` spellings are the same key). */
export function readGptNeox(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  const byKey = new Map<string, KEntry>();
  for (const e of root.entries ?? []) byKey.set(e.key.replace(/-/g, '_'), e);
  applyTable(s, NEOX, (path) => {
    const [head, ...rest] = path.split('.');
    const e = byKey.get(head!);
    return rest.length ? found(e?.value.kind === 'map' ? at(e.value, rest.join('.')) : undefined) : found(e);
  });
  const pp = s.facts['parallel.pp'];
  if (pp?.value === 0) s.facts['parallel.pp'] = { ...pp, value: 1 };
  s.derived('engine', 'deepspeed', 'GPT-NeoX runs on DeepSpeed');
  if (!s.has('parallel.sharding.style')) s.default('parallel.sharding.style', 'deepspeed', 'GPT-NeoX runs on DeepSpeed');
  s.default('parallel.sharding.stage', 0, 'DeepSpeed default: ZeRO stage 0');
}

/** Hugging Face TrainingArguments YAML (TRL `--config`, alignment-handbook and open-r1 recipes). */
export function readHfTrainerYaml(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  const get = getter(root);
  applyTable(s, HF, (key) => (key.startsWith('--') ? get(key.slice(2)) : undefined));
  if (s.value('lora.enabled') === false) { delete s.facts['lora.enabled']; delete s.facts['lora.rank']; }
  const ds = found(entry(root, 'deepspeed'));
  if (ds && typeof ds.value === 'string' && /\.json$/i.test(ds.value)) s.ref('deepspeed', ds.value, ds.valueRange);
}
