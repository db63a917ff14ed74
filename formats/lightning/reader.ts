/** Lightning CLI, LitGPT and torchtune YAML (docs/formats/lightning.md). */
import type { FactSink } from '../common/sink';
import { locOf, readBool, readNum, readOptimizer, readPacking, readStr, readTorchAdamImpl } from '../common/read';
import { precisionOf } from '../common/maps';
import { toNumber } from '../common/text';
import { at, entry, type KNode } from '../common/tree';
import { readHfModel } from '../hf-config/reader';
import { readTorchtuneLora, readTorchtuneTraining } from './torchtune';
import { litgptPretrain, readLitgptLora, readLitgptModelLoop, readLitgptRefused, readLitgptQuantize, readLitgptStrategy } from './litgpt';

function precision(s: FactSink, root: KNode, path: string): void {
  const e = at(root, path);
  const p = e && e.value.kind === 'scalar' ? precisionOf(String(e.value.value)) : undefined;
  if (e && p) s.explicit('training.precision', p, locOf(e, path));
}

/** Lightning `trainer:` section. */
export function readLightning(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  precision(s, root, 'trainer.precision');
  // Lightning's `devices: -1` and `devices: auto` mean every GPU of the node: the GPU count then comes from settings.
  const dev = allDevices(at(root, 'trainer.devices')?.value.value) ? undefined : readNum(s, root, 'trainer.devices', 'cluster.gpusPerNode', { int: true, min: 1 });
  const nodes = readNum(s, root, 'trainer.num_nodes', 'cluster.nodes', { int: true, min: 1 });
  if (dev) s.derived('cluster.worldSize', dev * (nodes ?? 1), 'Lightning: devices × num_nodes');
  readNum(s, root, 'trainer.accumulate_grad_batches', 'training.gradAccum', { int: true, min: 1 });
  s.default('training.gradAccum', 1, 'Lightning default: accumulate_grad_batches 1 (lightning/pytorch/trainer/trainer.py)');
  nemoModel(s, root);
  const st = at(root, 'trainer.strategy');
  const name = st?.value.kind === 'scalar' ? String(st.value.value) : readStr(root, 'trainer.strategy.class_path') ?? readStr(root, 'trainer.strategy._target_') ?? '';
  if (!st) return;
  const l = locOf(st, 'trainer.strategy');
  const m = /deepspeed_stage_(\d)(_offload)?/.exec(name);
  if (m) {
    s.explicit('parallel.sharding.style', 'deepspeed', l);
    s.explicit('parallel.sharding.stage', Number(m[1]), l);
    if (m[2]) s.explicit('parallel.sharding.offloadOptimizer', 'cpu', l);
  } else if (/fsdp|FSDPStrategy/i.test(name)) {
    s.explicit('parallel.sharding.style', 'fsdp', l);
    const ss = at(root, 'trainer.strategy.init_args.sharding_strategy');
    const v = ss ? String(ss.value.value) : 'FULL_SHARD';
    s.explicit('parallel.sharding.stage', v === 'NO_SHARD' ? 0 : v.includes('SHARD_GRAD_OP') ? 2 : 3, ss ? locOf(ss, 'sharding_strategy') : l);
    if (/offload/.test(name)) s.explicit('parallel.sharding.offloadParams', 'cpu', l);
  } else if (/ddp/i.test(name)) {
    s.explicit('parallel.sharding.style', 'ddp', l);
    s.explicit('parallel.sharding.stage', 0, l);
  }
}

/**
 * NeMo's Lightning models that are not Megatron (BERT from text, ASR, TTS): the training dataset's per-GPU batch
 * (`model.train_ds.batch_size`, each rank builds its own DataLoader), the sequence length (`model.max_seq_length`)
 * and a language model given as a Hugging Face config block (`model.language_model.config`).
 */
function nemoModel(s: FactSink, root: KNode): void {
  readNum(s, root, 'model.train_ds.batch_size', 'training.microBatch', { int: true, min: 1 });
  const len = at(root, 'model.max_seq_length') ? 'model.max_seq_length' : 'model.train_ds.max_seq_length';
  if (typeof at(root, len)?.value.value === 'number') readNum(s, root, len, 'training.seqLen', { int: true, min: 1 });
  const lm = at(root, 'model.language_model.config');
  if (lm?.value.kind === 'map') readHfModel(s, lm.value, 'model.language_model.config.');
}

/** LitGPT finetune/pretrain YAML; the strategy is FSDP full shard with block checkpointing (litgpt/finetune/full.py). */
export function readLitgpt(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  for (const k of ['checkpoint_dir', 'model_name']) {
    const e = entry(root, k);
    if (e && e.value.kind === 'scalar' && e.value.value) { const v = String(e.value.value); s.explicit('model.preset', v, locOf(e, k)); s.ref('model', v, e.value.range); break; }
  }
  precision(s, root, 'precision');
  const dv = at(root, 'devices');
  // LitGPT's `devices: -1` / `auto` mean every GPU of the node: the GPU count then comes from settings.
  const dev = dv && !allDevices(dv.value.value) ? readNum(s, root, 'devices', 'cluster.gpusPerNode', { int: true, min: 1 }) : undefined;
  readNum(s, root, 'num_nodes', 'cluster.nodes', { int: true, min: 1 });
  if (dev) s.derived('cluster.worldSize', dev * (s.num('cluster.nodes') ?? 1), 'LitGPT: devices × num_nodes');
  readNum(s, root, 'train.global_batch_size', 'training.globalBatch', { int: true, min: 1 });
  readNum(s, root, 'train.micro_batch_size', 'training.microBatch', { int: true, min: 1 });
  readNum(s, root, 'train.max_seq_length', 'training.seqLen', { int: true, min: 1 });
  const pretrain = litgptPretrain(root);
  readLitgptStrategy(s, dev, s.num('cluster.nodes'), pretrain);
  readLitgptModelLoop(s, root, pretrain);
  readLitgptRefused(s, root, pretrain);
  readNum(s, root, 'lora_r', 'lora.rank', { int: true, min: 1 });
  readLitgptLora(s, root);
  readLitgptQuantize(s, root, dev);
  const opt = readStr(root, 'optimizer') ?? readStr(root, 'optimizer.class_path');
  if (opt) readOptimizer(s, entry(root, 'optimizer'), 'optimizer', opt);
  // LitGPT resolves a bare name in torch.optim (litgpt/utils.py instantiate_torch_optimizer).
  if (opt && !s.value('training.pagedOptimizer')) readTorchAdamImpl(s, root, opt, entry(root, 'optimizer'), 'optimizer', 'optimizer.init_args.fused');
}

/** torchtune recipe YAML (recipes/full_finetune_distributed.py). */
export function readTorchtune(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  const comp = at(root, 'model._component_');
  if (comp && typeof comp.value.value === 'string') {
    const id = comp.value.value.split('.').pop() ?? '';
    s.explicit('model.preset', id, locOf(comp, 'model._component_'));
    s.ref('model', id, comp.value.range);
    if (/lora|qlora/.test(id)) {
      s.derived('lora.enabled', true, 'torchtune LoRA builder');
      readNum(s, root, 'model.lora_rank', 'lora.rank', { int: true, min: 1 });
      readTorchtuneLora(s, root);
      if (id.startsWith('qlora')) s.derived('lora.baseDtype', 'nf4', 'torchtune qlora_* builder: NF4 base weights');
    }
  }
  const T = 'torchtune default (recipes/full_finetune_distributed.py)';
  // torchtune builds its own decoder in plain PyTorch (torchtune/modules/transformer.py): a Llama block like
  // torchtitan's, whatever the recipe shards it with (single-device recipes would otherwise read as transformers').
  s.derived('training.modelImpl', 'torchtitan', 'torchtune decoder (torchtune/modules/transformer.py): plain-PyTorch blocks, saved as torchtitan\'s');
  s.derived('training.normUpcast', true, 'torchtune RMSNorm (torchtune/modules/rms_norm.py): x.float(); eager, its fp32 input and unscaled output are saved');
  readNum(s, root, 'batch_size', 'training.microBatch', { int: true, min: 1 });
  readNum(s, root, 'gradient_accumulation_steps', 'training.gradAccum', { int: true, min: 1 });
  s.default('training.gradAccum', 1, T);
  readNum(s, root, 'tokenizer.max_seq_len', 'training.seqLen', { int: true, min: 1 });
  readBool(s, root, 'enable_activation_checkpointing', 'training.recompute', (b) => (b ? 'full' : 'none'));
  s.default('training.recompute', 'none', T);
  const dt = at(root, 'dtype');
  const p = dt ? precisionOf(String(dt.value.value)) : undefined;
  if (dt && p) s.explicit('training.precision', p === 'bf16-mixed' ? 'bf16' : p, locOf(dt, 'dtype'));
  // data_parallel_shard_dim -1 (all remaining ranks) or > 1 states FSDP sharding over those ranks.
  const shard = at(root, 'data_parallel_shard_dim');
  const sv = shard ? toNumber(shard.value.value) : undefined;
  if (shard && sv !== undefined && (sv === -1 || sv > 1)) s.explicit('parallel.sharding.style', 'fsdp2', locOf(shard, 'data_parallel_shard_dim'));
  // torchtune names the configs of its single-device recipes *_single_device.yaml (`tune run full_finetune_single_device
  // --config llama3_1/8B_full_single_device`): those recipes train the model on one GPU without FSDP.
  if (!s.has('parallel.sharding.style') && /single_device/i.test(s.file)) {
    s.derived('parallel.sharding.style', 'ddp', 'torchtune *_single_device config: recipes/*_single_device.py train on one GPU, no FSDP');
    s.derived('parallel.sharding.stage', 0, 'torchtune *_single_device config: nothing sharded');
    s.derived('cluster.worldSize', 1, 'torchtune *_single_device config: the recipe runs on one GPU');
  }
  s.default('parallel.sharding.style', 'fsdp2', `${T}: FSDP2 fully_shard`);
  readBool(s, root, 'fsdp_reshard_after_forward', 'parallel.sharding.stage', (b) => (b ? 3 : 2));
  if (shard && sv !== undefined && (sv === -1 || sv > 1) && !s.has('parallel.sharding.stage')) s.derived('parallel.sharding.stage', 3, `${T}: data_parallel_shard_dim ${sv} shards parameters, gradients and optimizer states (fsdp_reshard_after_forward True)`, locOf(shard, 'data_parallel_shard_dim'));
  s.default('parallel.sharding.stage', 3, `${T}: fsdp_reshard_after_forward True`);
  const off = readBool(s, root, 'fsdp_cpu_offload', 'parallel.sharding.offloadParams', (b) => (b ? 'cpu' : 'none'));
  if (off !== undefined) readBool(s, root, 'fsdp_cpu_offload', 'parallel.sharding.offloadOptimizer', (b) => (b ? 'cpu' : 'none'));
  readNum(s, root, 'tensor_parallel_dim', 'parallel.tp', { int: true, min: 1 });
  readNum(s, root, 'context_parallel_dim', 'parallel.cp', { int: true, min: 1 });
  if (shard && sv !== undefined && sv > 0) s.explicit('parallel.sharding.shardGroupSize', sv, locOf(shard, 'data_parallel_shard_dim'));
  readNum(s, root, 'data_parallel_replicate_dim', 'parallel.dpReplicate', { int: true, min: 1 });
  readOptimizer(s, at(root, 'optimizer._component_'), 'optimizer._component_', readStr(root, 'optimizer._component_'));
  readTorchAdamImpl(s, root, readStr(root, 'optimizer._component_'), at(root, 'optimizer._component_'), 'optimizer._component_', 'optimizer.fused');
  // torchtune's PackedDataset gives each pack a block-causal mask (torchtune/datasets/_packed.py), run by FlexAttention.
  readPacking(s, root, 'dataset.packed');
  readTorchtuneTraining(s, root);
}

/** Lightning and LitGPT spell "all GPUs of the node" as -1 or "auto". */
function allDevices(v: unknown): boolean {
  return v === -1 || v === '-1' || (typeof v === 'string' && v.trim().toLowerCase() === 'auto');
}
