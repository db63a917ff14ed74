/**
 * YAML front-ends: Accelerate config, Axolotl and LLaMA-Factory training YAML. Keys: config-formats.md §4 (Accelerate
 * `accelerate/commands/config/config_args.py`), §6a (Axolotl `utils/schemas/`), §6b (LLaMA-Factory + HF TrainingArguments).
 * Hugging Face gradient checkpointing recomputes whole layers, so 'selective' has no key there.
 */
import { YamlEditor } from './yamlEdit';
import type { LayoutTarget, Rewrite } from './types';

const FSDP_V1 = { 3: 'FULL_SHARD', 2: 'SHARD_GRAD_OP', 0: 'NO_SHARD', 1: 'SHARD_GRAD_OP' } as const;
const FSDP_V1_HYBRID = { 3: 'HYBRID_SHARD', 2: 'HYBRID_SHARD_ZERO2', 0: 'NO_SHARD', 1: 'HYBRID_SHARD_ZERO2' } as const;
/** Accelerate's 1-based index form of the FSDP v1 strategy (`accelerate/utils/constants.py` FSDP_SHARDING_STRATEGY). */
const FSDP_V1_INDEX: Record<string, number> = { FULL_SHARD: 1, SHARD_GRAD_OP: 2, NO_SHARD: 3, HYBRID_SHARD: 4, HYBRID_SHARD_ZERO2: 5 };

/** Sets a key when it exists or its value differs from the default. */
function setIf(ed: YamlEditor, path: string[], value: string | number | boolean, dflt: string | number | boolean): void {
  if (value !== dflt || ed.get(path) !== undefined) ed.set(path, value);
}

/** FSDP keys, with or without Accelerate's `fsdp_` prefix. */
function writeFsdp(ed: YamlEditor, t: LayoutTarget, prefix: '' | 'fsdp_', notes: string[]): void {
  const key = (k: string): string[] => ['fsdp_config', `${prefix}${k}`];
  const version = Number(ed.get(['fsdp_config', `fsdp_version`]) ?? ed.get(['fsdp_version']) ?? 1);
  if (version >= 2 || ed.get(key('reshard_after_forward')) !== undefined) {
    if (t.zero === 0) notes.push('FSDP2 always shards; ZeRO-0 means plain DDP (no fsdp_config).');
    ed.set(key('reshard_after_forward'), t.zero === 3);
    if (t.shardGroup !== undefined && prefix === 'fsdp_') {
      ed.set(['parallelism_config', 'parallelism_config_dp_replicate_size'], t.dp / t.shardGroup);
      ed.set(['parallelism_config', 'parallelism_config_dp_shard_size'], t.shardGroup);
    }
  } else {
    const name = (t.shardGroup !== undefined ? FSDP_V1_HYBRID : FSDP_V1)[t.zero];
    const cur = ed.get(key('sharding_strategy'));
    ed.set(key('sharding_strategy'), typeof cur === 'number' ? FSDP_V1_INDEX[name] : name);
  }
  setIf(ed, key('offload_params'), t.offload !== 'none', false);
  setIf(ed, key('activation_checkpointing'), t.recompute !== 'none', false);
}

function recomputeNote(t: LayoutTarget, notes: string[]): void {
  if (t.recompute === 'selective') notes.push('Selective recomputation has no Hugging Face key; gradient checkpointing (full) was used.');
}

function parallelNotes(t: LayoutTarget, notes: string[], what: string): void {
  if (t.pp > 1) notes.push(`Pipeline parallelism (PP ${t.pp}) is not available with ${what}.`);
}

/** A DeepSpeed JSON path with the stage digit swapped (Axolotl `zero3_bf16.json`, LLaMA-Factory `ds_z3_config.json`). */
function swapStage(path: string, zero: number, offload: boolean): string | undefined {
  if (!/(zero|ds_z)[0-3]/.test(path)) return undefined;
  let p = path.replace(/(zero|ds_z)[0-3]/, `$1${zero}`);
  if (/ds_z\d_config/.test(p) && offload && zero === 3) p = p.replace(/ds_z3_config/, 'ds_z3_offload_config');
  if (!offload) p = p.replace(/ds_z3_offload_config/, 'ds_z3_config');
  return p;
}

/** Accelerate config YAML. */
export function rewriteAccelerate(text: string, t: LayoutTarget): Rewrite {
  const ed = new YamlEditor(text);
  const notes: string[] = [];
  if (!ed.ok) return { text, notes: ['The YAML does not parse; nothing was changed.'] };
  const kind = String(ed.get(['distributed_type']) ?? '');
  if (kind === 'DEEPSPEED') {
    if (ed.get(['deepspeed_config', 'deepspeed_config_file']) !== undefined) {
      notes.push('ZeRO stage, offload and batch live in the referenced DeepSpeed JSON; apply the layout there.');
    } else {
      ed.set(['deepspeed_config', 'zero_stage'], t.zero);
      setIf(ed, ['deepspeed_config', 'offload_optimizer_device'], t.offload, 'none');
      setIf(ed, ['deepspeed_config', 'gradient_accumulation_steps'], t.gradAccum, 1);
    }
  } else if (kind === 'FSDP') writeFsdp(ed, t, 'fsdp_', notes);
  else if (kind === 'MEGATRON_LM') {
    const m = (k: string): string[] => ['megatron_lm_config', `megatron_lm_${k}`];
    ed.set(m('tp_degree'), t.tp);
    ed.set(m('pp_degree'), t.pp);
    setIf(ed, m('num_micro_batches'), t.gradAccum, 1);
    setIf(ed, m('sequence_parallelism'), t.sp && t.tp > 1, false);
    setIf(ed, m('recompute_activations'), t.recompute !== 'none', false);
    setIf(ed, m('use_distributed_optimizer'), t.distributedOptimizer, false);
  }
  if (kind !== 'MEGATRON_LM') {
    setIf(ed, ['parallelism_config', 'parallelism_config_tp_size'], t.tp, 1);
    setIf(ed, ['parallelism_config', 'parallelism_config_cp_size'], t.cp, 1);
    parallelNotes(t, notes, 'Accelerate FSDP/DeepSpeed');
  }
  recomputeNote(t, notes);
  notes.push(`Micro batch ${t.microBatch} is the training script's DataLoader batch size (per_device_train_batch_size).`);
  return { text: ed.result(), notes };
}

/** Axolotl training YAML. */
export function rewriteAxolotl(text: string, t: LayoutTarget): Rewrite {
  const ed = new YamlEditor(text);
  const notes: string[] = [];
  if (!ed.ok) return { text, notes: ['The YAML does not parse; nothing was changed.'] };
  ed.set(['micro_batch_size'], t.microBatch);
  setIf(ed, ['gradient_accumulation_steps'], t.gradAccum, 1);
  const gc = ed.get(['gradient_checkpointing']);
  if (t.recompute === 'none') { if (gc !== undefined && gc !== false) ed.set(['gradient_checkpointing'], false); }
  else if (gc !== true && typeof gc !== 'string') ed.set(['gradient_checkpointing'], true);
  const ds = ed.get(['deepspeed']);
  if (typeof ds === 'string') {
    const p = swapStage(ds, t.zero, t.offload !== 'none');
    if (p) ed.set(['deepspeed'], p);
    else notes.push(`ZeRO stage ${t.zero} goes in ${ds}.`);
  } else if (ed.get(['fsdp_config']) !== undefined) {
    writeFsdp(ed, t, ed.get(['fsdp_config', 'fsdp_sharding_strategy']) !== undefined ? 'fsdp_' : '', notes);
  }
  setIf(ed, ['tensor_parallel_size'], t.tp, 1);
  setIf(ed, ['context_parallel_size'], t.cp, 1);
  setIf(ed, ['expert_parallel_size'], t.ep, 1);
  if (t.shardGroup !== undefined) {
    ed.set(['dp_shard_size'], t.shardGroup);
    ed.set(['dp_replicate_size'], t.dp / t.shardGroup);
  } else if (ed.get(['dp_shard_size']) !== undefined) ed.set(['dp_shard_size'], t.zero === 0 ? 1 : t.dp);
  parallelNotes(t, notes, 'Axolotl');
  recomputeNote(t, notes);
  return { text: ed.result(), notes };
}

/** LLaMA-Factory training YAML (gradient checkpointing is ON unless disabled). */
export function rewriteLlamaFactory(text: string, t: LayoutTarget): Rewrite {
  const ed = new YamlEditor(text);
  const notes: string[] = [];
  if (!ed.ok) return { text, notes: ['The YAML does not parse; nothing was changed.'] };
  ed.set(['per_device_train_batch_size'], t.microBatch);
  setIf(ed, ['gradient_accumulation_steps'], t.gradAccum, 1);
  setIf(ed, ['disable_gradient_checkpointing'], t.recompute === 'none', false);
  const ds = ed.get(['deepspeed']);
  if (typeof ds === 'string') {
    const p = swapStage(ds, t.zero === 1 ? 2 : t.zero, t.offload !== 'none');
    if (p) ed.set(['deepspeed'], p);
    else notes.push(`ZeRO stage ${t.zero} goes in ${ds}.`);
    if (t.zero === 1) notes.push('LLaMA-Factory ships no ZeRO-1 config; stage 2 was written.');
  }
  for (const [k, v] of [['tensor_model_parallel_size', t.tp], ['pipeline_model_parallel_size', t.pp], ['context_parallel_size', t.cp], ['expert_model_parallel_size', t.ep]] as const) {
    if (ed.get([k]) !== undefined) ed.set([k], v);
  }
  if (ed.get(['use_distributed_optimizer']) !== undefined) ed.set(['use_distributed_optimizer'], t.distributedOptimizer);
  if (ed.get(['sequence_parallel']) !== undefined) ed.set(['sequence_parallel'], t.sp && t.tp > 1);
  recomputeNote(t, notes);
  return { text: ed.result(), notes };
}
