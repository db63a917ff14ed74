/** LLaMA-Factory YAML (HF Seq2SeqTrainingArguments + LLaMA-Factory hparams; docs/formats/llamafactory.md), incl. its Megatron back-end keys and the v1 schema. */
import type { FactSink } from '../common/sink';
import { hfTrainerAccumulation, isEmpty, locOf, readBool, readNum, readOptimizer, readPacking, readSteps } from '../common/read';
import { toBool, toNumber } from '../common/text';
import { at, entry, type KNode } from '../common/tree';
import { readDeepSpeedKey, readFsdpList, readLora, readLoraFullModules, readModelRef, readPrecisionFlags, readTorchCompile, bnbSavesInputs, peftArgumentDefaults, resizedVocabTrainsEmbeddings } from '../common/finetune';
import { readLlamaFactoryLiger } from '../common/liger';

const LF = 'LLaMA-Factory default (src/llamafactory/hparams/finetuning_args.py, model_args.py)';
const HF = 'HF TrainingArguments default (transformers/training_args.py)';

export function readLlamaFactory(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  readModelRef(s, root, 'model_name_or_path', 'model');
  if (readNum(s, root, 'per_device_train_batch_size', 'training.microBatch', { int: true, min: 1 }) === undefined) readNum(s, root, 'micro_batch_size', 'training.microBatch', { int: true, min: 1 });
  s.default('training.microBatch', 8, `${HF}: per_device_train_batch_size 8`);
  readNum(s, root, 'gradient_accumulation_steps', 'training.gradAccum', { int: true, min: 1 });
  s.default('training.gradAccum', 1, HF);
  readNum(s, root, 'cutoff_len', 'training.seqLen', { int: true, min: 1 });
  s.default('training.seqLen', 2048, `${LF}: cutoff_len 2048`);
  readSteps(s, root, 'max_steps');
  const gc = entry(root, 'disable_gradient_checkpointing');
  if (gc && !isEmpty(gc)) s.explicit('training.recompute', toBool(gc.value.value) ? 'none' : 'full', locOf(gc, 'disable_gradient_checkpointing'));
  s.default('training.recompute', 'full', `${LF}: gradient checkpointing is on unless disable_gradient_checkpointing`);
  readPrecisionFlags(s, root, 'HF Trainer');
  readTorchCompile(s, root, 'LLaMA-Factory');
  readFlashAttn(s, root);
  readLlamaFactoryLiger(s, root);
  // neat_packing packs without cross-attention between samples (data/collator.py, FlashAttention's varlen path);
  // plain `packing` lets the samples of a pack attend to each other, one causal sequence as timed.
  readPacking(s, root, 'neat_packing');
  const mp = entry(root, 'mixed_precision');
  if (mp && typeof mp.value.value === 'string' && mp.value.value.startsWith('bf16')) s.explicit('training.precision', 'bf16-mixed', locOf(mp, 'mixed_precision'));
  readOptimizer(s, entry(root, 'optim'), 'optim');
  s.default('training.optimizer', 'adamw', `${HF}: optim adamw_torch`);
  // The v1 schema (`model:`, `dist_config:`) trains with LLaMA-Factory's own loop, which calls loss.backward() in every
  // micro-batch with FSDP's sync on (src/llamafactory/v1/core/base_trainer.py), and the Megatron back-end
  // (examples/megatron) with Megatron's schedules; the classic files run the HF Trainer.
  const own = ['model', 'dist_config', ...MEGATRON_KEYS].some((k) => entry(root, k));
  if (!own) hfTrainerAccumulation(s, 'LLaMA-Factory (HF Trainer)', root);
  const ft = entry(root, 'finetuning_type');
  const ftv = ft && typeof ft.value.value === 'string' ? ft.value.value : undefined;
  // v1 schema: peft_config {name: lora, r: 16}; no peft_config with `model:` is full fine-tuning.
  const peft = at(root, 'peft_config.name');
  const lora = ftv === undefined ? (peft ? String(peft.value.value).toLowerCase() === 'lora' : !entry(root, 'model')) : ftv === 'lora';
  if (peft && lora && ftv === undefined) {
    s.explicit('lora.enabled', true, locOf(peft, 'peft_config.name'));
    readNum(s, root, 'peft_config.r', 'lora.rank', { int: true, min: 1 });
  }
  if (lora) {
    if (ft) s.explicit('lora.enabled', true, locOf(ft, 'finetuning_type'));
    else s.default('lora.enabled', true, `${LF}: finetuning_type lora`);
    readLora(s, root, { rankKey: 'lora_rank', targetKey: 'lora_target', enabled: true });
    peftArgumentDefaults(s, 'llamafactory');
    // FinetuningArguments use_dora (src/llamafactory/hparams/finetuning_args.py), passed to PEFT's LoraConfig.
    readBool(s, root, 'use_dora', 'lora.dora');
    const resize = entry(root, 'resize_vocab');
    if (!readLoraFullModules(s, root, 'additional_target') && resize && toBool(resize.value.value) === true) resizedVocabTrainsEmbeddings(s, locOf(resize, 'resize_vocab'));
    const q = entry(root, 'quantization_bit');
    const qb = toNumber(q?.value.value);
    if (q && qb === 4) s.explicit('lora.baseDtype', 'nf4', locOf(q, 'quantization_bit'));
    else if (q && qb === 8) s.explicit('lora.baseDtype', 'int8', locOf(q, 'quantization_bit'));
    else s.default('lora.baseDtype', 'bf16', LF);
    // quantization_method defaults to bitsandbytes (hparams/model_args.py QuantizationArguments); hqq and eetq do not use it.
    const method = at(root, 'quantization_method')?.value.value;
    if (q && (qb === 4 || qb === 8) && (method === undefined || method === null || method === 'bnb' || method === 'bitsandbytes')) bnbSavesInputs(s, `${LF} quantizes with bitsandbytes`, qb);
  }
  readDeepSpeedKey(s, root);
  readFsdpList(s, root);
  readMegatronBackend(s, root);
}

/**
 * `flash_attn` (hparams/model_args.py AttentionFunction: auto, disabled, sdpa, fa2, fa3): fa2/fa3 are FlashAttention
 * (which skips the blocks a sliding window masks), disabled is eager attention; auto and sdpa leave transformers' SDPA.
 */
function readFlashAttn(s: FactSink, root: KNode): void {
  const e = entry(root, 'flash_attn');
  const v = e && typeof e.value.value === 'string' ? e.value.value.toLowerCase() : undefined;
  if (!e || v === undefined) return;
  if (v === 'fa2' || v === 'fa3') s.explicit('training.flashAttention', true, locOf(e, 'flash_attn'));
  else if (v === 'disabled') s.explicit('training.flashAttention', false, locOf(e, 'flash_attn'));
  else if (v !== 'auto' && v !== 'sdpa') s.diag('invalid-value', 'warning', 'flash_attn should be auto, disabled, sdpa, fa2 or fa3.', e.value.range, ['training.flashAttention']);
}

/** Keys only LLaMA-Factory's Megatron back-end reads (examples/megatron/*.yaml, mcore_adapter). */
const MEGATRON_KEYS = ['tensor_model_parallel_size', 'pipeline_model_parallel_size', 'expert_model_parallel_size', 'use_distributed_optimizer'];

/** examples/megatron/*.yaml and the v1 dist_config. */
function readMegatronBackend(s: FactSink, root: KNode): void {
  readNum(s, root, 'tensor_model_parallel_size', 'parallel.tp', { int: true, min: 1 });
  readNum(s, root, 'pipeline_model_parallel_size', 'parallel.pp', { int: true, min: 1 });
  if (readNum(s, root, 'context_parallel_size', 'parallel.cp', { int: true, min: 1 }) === undefined) readNum(s, root, 'cp_size', 'parallel.cp', { int: true, min: 1 });
  if (readNum(s, root, 'expert_model_parallel_size', 'parallel.ep', { int: true, min: 1 }) === undefined) readNum(s, root, 'dist_config.ep_size', 'parallel.ep', { int: true, min: 1 });
  readBool(s, root, 'sequence_parallel', 'parallel.sp');
  const d = readBool(s, root, 'use_distributed_optimizer');
  const de = entry(root, 'use_distributed_optimizer');
  if (d && de) { s.explicit('parallel.sharding.style', 'megatron-distopt', locOf(de, 'use_distributed_optimizer')); s.explicit('parallel.sharding.stage', 1, locOf(de, 'use_distributed_optimizer')); }
  readBool(s, root, 'overlap_grad_reduce', 'parallel.sharding.overlapComm');
  const rg = entry(root, 'recompute_granularity');
  if (rg && (rg.value.value === 'full' || rg.value.value === 'selective')) s.explicit('training.recompute', rg.value.value, locOf(rg, 'recompute_granularity'));
  const dist = at(root, 'dist_config.name');
  const name = dist && typeof dist.value.value === 'string' ? dist.value.value.toLowerCase() : undefined;
  if (dist && name?.startsWith('fsdp')) {
    s.explicit('parallel.sharding.style', 'fsdp2', locOf(dist, 'dist_config.name'));
    readBool(s, root, 'dist_config.reshard_after_forward', 'parallel.sharding.stage', (b) => (b ? 3 : 2));
    // v1 FSDP2 reshards after forward unless told otherwise (src/llamafactory/v1/plugins/trainer_plugins/distributed/fsdp2.py).
    if (!s.has('parallel.sharding.stage')) s.derived('parallel.sharding.stage', 3, 'LLaMA-Factory v1 FSDP2: fully_shard with reshard_after_forward (full shard)', locOf(dist, 'dist_config.name'));
  }
  // v1 DeepSpeed: dist_config {name: deepspeed, config_file: …} names the DeepSpeed JSON.
  const file = at(root, 'dist_config.config_file');
  if (name === 'deepspeed' && file && typeof file.value.value === 'string' && file.value.value.trim()) s.ref('deepspeed', file.value.value, file.value.range);
  // Ray launch: ray_num_workers is the number of GPU workers (src/llamafactory/hparams/training_args.py, RayArguments).
  const ray = entry(root, 'ray_num_workers');
  const rn = ray ? toNumber(ray.value.value) : undefined;
  if (ray && rn !== undefined && Number.isInteger(rn) && rn >= 1) s.explicit('cluster.worldSize', rn, locOf(ray, 'ray_num_workers'));
}
