/**
 * LitGPT's recipes decide the strategy from the device count (litgpt/finetune/full.py, lora.py, pretrain.py at
 * Lightning-AI/litgpt 01fe959c): more than one device trains with FSDP — full sharding with every Block checkpointed for
 * fine-tuning, HYBRID_SHARD (sharded within a node, replicated across nodes) without checkpointing and under
 * torch.compile for pre-training — and one device with strategy "auto": the plain model, nothing sharded, nothing
 * recomputed. LoRA adapts the projections its lora_* switches name (query and value by default); quantization
 * (bnb.nf4, QLoRA) trains with bitsandbytes' PagedAdamW and on one device only.
 */
import type { FactSink } from '../common/sink';
import { locOf, readBool, readNum } from '../common/read';
import { at, entry, type KNode } from '../common/tree';
import { toBool } from '../common/text';
import { bnbSavesInputs } from '../common/finetune';

const SRC = 'LitGPT (litgpt/finetune/full.py, lora.py; pretrain.py)';
const LIGHTNING = 'Lightning (lightning/fabric/plugins/precision/bitsandbytes.py)';

/**
 * What every LitGPT recipe's model and loop hold (litgpt/model.py, finetune/*.py, pretrain.py at 00af8b0d and since):
 * the GPT has its own lm_head (convert_hf_checkpoint copies the embedding into it where a checkpoint ties them), tied
 * only by pretrain.py's `train.tie_embeddings`; and `logits = model(input_ids)` keeps the previous micro-batch's logits,
 * and through their grad_fn its graph, until the next forward returns.
 */
export function readLitgptModelLoop(s: FactSink, root: KNode, pretrain: boolean): void {
  const tie = at(root, 'train.tie_embeddings');
  const tied = pretrain && tie ? toBool(tie.value.value) === true : false;
  if (tie && tied) s.explicit('model.tiedEmbeddings', true, locOf(tie, 'train.tie_embeddings'));
  else s.derived('model.tiedEmbeddings', false, `${SRC}: the GPT's lm_head is its own weight (convert_hf_checkpoint copies a tied checkpoint's embedding into it)${pretrain ? '; train.tie_embeddings is off' : ''}`);
  s.derived('training.previousOutputHeld', true, `${SRC}: \`logits = model(input_ids)\` keeps the previous micro-batch's logits and graph until the next forward returns`);
}

/**
 * train.* keys LitGPT's fine-tuning recipes refuse at start-up when set (litgpt/finetune/*.py validate_args:
 * "doesn't support the … argument"); max_tokens is what marks a pretrain.py file here, so it is not among them.
 */
const FINETUNE_REFUSED = ['max_norm', 'tie_embeddings', 'lr_warmup_fraction'] as const;

/** A fine-tuning file's train.* keys its recipe refuses, as errors at each key. */
export function readLitgptRefused(s: FactSink, root: KNode, pretrain: boolean): void {
  if (pretrain) return;
  for (const k of FINETUNE_REFUSED) {
    const e = at(root, `train.${k}`);
    if (!e || (e.value.kind === 'scalar' && (e.value.value === null || e.value.value === undefined || e.value.value === ''))) continue;
    s.diag('litgpt-finetune-refused', 'error', `LitGPT's fine-tuning recipes refuse train.${k} at start-up (validate_args: "doesn't support the '${k}' argument"); leave it empty or remove it.`,
      e.keyRange, []);
  }
}

/** A pretrain.py file (model_name or train.max_tokens), not a fine-tuning recipe. */
export function litgptPretrain(root: KNode): boolean {
  return !!entry(root, 'model_name') || at(root, 'train.max_tokens')?.value.value != null;
}

/** The strategy and recomputation for `devices` × `nodes` GPUs (undefined devices: every GPU of a node, at least two). */
export function readLitgptStrategy(s: FactSink, devices: number | undefined, nodes: number | undefined, pretrain: boolean): void {
  if (devices === 1 && (nodes ?? 1) === 1) {
    const why = `${SRC}: one device trains with strategy "auto", the plain model without FSDP or activation checkpointing`;
    s.derived('parallel.sharding.style', 'ddp', why);
    s.derived('parallel.sharding.stage', 0, why);
    s.derived('training.recompute', 'none', why);
    s.derived('cluster.worldSize', 1, why);
  } else if (pretrain) {
    const why = `${SRC}: pretrain.py shards with FSDPStrategy(sharding_strategy="HYBRID_SHARD") over each node's GPUs, no activation checkpointing`;
    s.default('parallel.sharding.style', 'fsdp', why);
    s.default('parallel.sharding.stage', 3, why);
    s.default('parallel.sharding.fsdpStrategy', 'HYBRID_SHARD', why);
    if (devices !== undefined && devices > 1 && (nodes ?? 1) > 1) s.derived('parallel.sharding.shardGroupSize', devices, why);
    s.default('training.recompute', 'none', why);
  } else {
    const why = `${SRC}: FSDPStrategy(FULL_SHARD, activation_checkpointing_policy={Block}) on more than one device`;
    s.default('parallel.sharding.style', 'fsdp', why);
    s.default('parallel.sharding.stage', 3, why);
    s.default('training.recompute', 'full', why);
  }
  if (pretrain) s.default('training.compile', true, `${SRC}: pretrain.py compiles the model (torch.compile)`);
  // Every recipe accumulates under Fabric's no_backward_sync, which is FSDP's (and DDP's) no_sync
  // (lightning/fabric/strategies/fsdp.py _FSDPBackwardSyncControl).
  s.default('training.syncEveryMicroBatch', false,
    `${SRC}: every micro-batch but the step's last runs under fabric.no_backward_sync (FSDP no_sync)`);
}

/** LitGPT's LoRA switches (litgpt/finetune/lora.py setup) and the projections they adapt in its GPT. */
const SWITCHES: readonly (readonly [string, boolean, readonly string[]])[] = [
  ['lora_query', true, ['q']], ['lora_key', false, ['k']], ['lora_value', true, ['v']], ['lora_projection', false, ['o']],
  ['lora_mlp', false, ['gate', 'up', 'down']], ['lora_head', false, []],
];

/** LoRA targets from the lora_* switches (read only for a LoRA file: one that sets lora_r). */
export function readLitgptLora(s: FactSink, root: KNode): void {
  if (!entry(root, 'lora_r')) return;
  const targets: string[] = [];
  let where: string | undefined;
  for (const [key, on, mods] of SWITCHES) {
    const e = entry(root, key);
    const b = e?.value.kind === 'scalar' ? toBool(e.value.value) : undefined;
    // The head's adapter is not counted: its switch is no place for the targets fact.
    if (e && b !== undefined && mods.length) where ??= key;
    if (b ?? on) targets.push(...mods);
  }
  // LitGPT's LoRAQKVLinear runs one dropout for the fused q/k/v adapters; lora_dropout defaults to 0.05 (lora.py setup).
  s.derived('lora.fusedQkv', true, `${SRC}: litgpt/lora.py LoRAQKVLinear adapts the fused qkv projection with one dropout`);
  readNum(s, root, 'lora_dropout', 'lora.dropout', { min: 0, max: 1 });
  s.default('lora.dropout', 0.05, `${SRC}: lora_dropout 0.05`);
  const we = where ? entry(root, where) : undefined;
  if (we && where) s.explicit('lora.targets', targets.join(','), locOf(we, where));
  else s.default('lora.targets', targets.join(','), `${SRC}: lora_query and lora_value default to True, the rest to False`);
  if (readBool(s, root, 'lora_head') === true) {
    s.diag('unmodelled-value', 'info', 'lora_head: the adapter on the output head (rank × (hidden + vocabulary) weights and their optimizer states) is not counted.',
      entry(root, 'lora_head')?.value.range, ['lora.targets']);
  }
}

/**
 * QLoRA (quantize: bnb.*): NF4 base weights for the nf4 modes, bitsandbytes' PagedAdamW, and LitGPT's refusal to
 * quantize on more than one device.
 */
export function readLitgptQuantize(s: FactSink, root: KNode, devices: number | undefined): void {
  const qe = entry(root, 'quantize');
  const q = qe?.value.kind === 'scalar' && typeof qe.value.value === 'string' ? qe.value.value : '';
  if (!qe || !q.startsWith('bnb.')) return;
  const pv = entry(root, 'precision')?.value.value;
  const precision = typeof pv === 'string' ? pv : undefined;
  if (q.includes('nf4')) {
    s.explicit('lora.baseDtype', 'nf4', locOf(qe, 'quantize'));
    s.derived('lora.headQuantized', true, `${LIGHTNING}: BitsandbytesPrecision replaces torch.nn.Linear while the model is built (module_init_context), LitGPT's lm_head included`, locOf(qe, 'quantize'));
    // Lightning quantizes from fp16 (_Linear4bit.quantize: weight.to(torch.half)); the matmul casts the dequantized copy to the compute dtype.
    if (!precision?.startsWith('16')) {
      s.derived('lora.dequantCast', true, `${LIGHTNING}: weights quantized from fp16 (_Linear4bit.quantize), each matmul casts the dequantized copy to the compute dtype (bitsandbytes MatMul4Bit: dequantize_4bit(B).to(A.dtype))`, locOf(qe, 'quantize'));
    }
  }
  s.derived('training.pagedOptimizer', true, `${SRC}: a quantized model trains with bitsandbytes.optim.PagedAdamW`, locOf(qe, 'quantize'));
  bnbSavesInputs(s, `${SRC}: quantize ${q}`, q.includes('int8') ? 8 : 4);
  if (precision?.includes('mixed')) {
    s.diag('litgpt-quantize-mixed', 'error', `LitGPT refuses this at start-up: "Quantization and mixed precision is not supported." Use ${precision.startsWith('bf16') ? 'bf16-true' : '16-true'} with quantize.`,
      qe.value.range, ['training.precision']);
  }
  if (devices !== undefined && devices > 1) {
    s.diag('litgpt-quantize-devices', 'error', 'LitGPT refuses this at start-up: "Quantization is currently not supported for multi-GPU training. Please set devices=1 when using the --quantize flag."',
      qe.value.range, ['cluster.gpusPerNode']);
  }
}
