/** Axolotl YAML (pydantic AxolotlInputConfig, src/axolotl/utils/schemas/; docs/formats/axolotl.md). */
import type { FactSink } from '../common/sink';
import { hfTrainerAccumulation, isEmpty, locOf, readBool, readNum, readOptimizer, readPacking, readSteps } from '../common/read';
import { toBool, toNumber } from '../common/text';
import { at, entry, type KNode } from '../common/tree';
import { readAttnImplementation, readDeepSpeedKey, readFsdpList, readLora, readLoraFullModules, readModelRef, readPrecisionFlags, readTorchCompile, readExpertsImpl, bnbSavesInputs } from '../common/finetune';
import { readAxolotlLiger } from '../common/liger';
import { readAxolotlCce } from './cce';

const AX = 'Axolotl default (src/axolotl/utils/schemas/config.py)';

/**
 * Checkpointed activations sent to CPU memory (or disk): `gradient_checkpointing: offload` / `offload_disk` (Unsloth's
 * offloaded checkpointer, src/axolotl/utils/gradient_checkpointing/unsloth.py) and `activation_offloading` true,
 * legacy or disk (TRL's OffloadActivations, torchtune's offloader, with checkpointing applied by axolotl's
 * ActivationOffloadingMixin). Either keeps a few layer inputs on the GPU (training.activationOffload).
 */
function readAxolotlOffload(s: FactSink, root: KNode, gc: ReturnType<typeof entry>): void {
  const off = entry(root, 'activation_offloading');
  const v = off && !isEmpty(off) ? off.value.value : undefined;
  const viaOff = off && (toBool(v) === true || v === 'legacy' || v === 'disk');
  const g = gc && !isEmpty(gc) ? gc.value.value : undefined;
  const viaGc = typeof g === 'string' && g.startsWith('offload');
  const where = viaOff ? off : viaGc ? gc : undefined;
  if (!where) return;
  const key = viaOff ? 'activation_offloading' : 'gradient_checkpointing';
  s.explicit('training.activationOffload', true, locOf(where, key));
  if (viaOff && !s.has('training.recompute')) s.derived('training.recompute', 'full', `${AX}: activation_offloading applies activation checkpointing (ActivationOffloadingMixin)`, locOf(where, key));
}

export function readAxolotl(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  readModelRef(s, root, 'base_model_config', 'base_model');
  readNum(s, root, 'micro_batch_size', 'training.microBatch', { int: true, min: 1 });
  readNum(s, root, 'gradient_accumulation_steps', 'training.gradAccum', { int: true, min: 1 });
  // batch_size is micro batch × accumulation per GPU; derivePlan divides it by the micro batch.
  const bs = s.has('training.gradAccum') ? undefined : readNum(s, root, 'batch_size', 'training.deviceBatch', { int: true, min: 1 });
  s.default('training.microBatch', 1, AX);
  if (bs === undefined) s.default('training.gradAccum', 1, AX);
  readNum(s, root, 'sequence_len', 'training.seqLen', { int: true, min: 1 });
  s.default('training.seqLen', 512, AX);
  readSteps(s, root, 'max_steps');
  const gc = entry(root, 'gradient_checkpointing');
  if (gc && !isEmpty(gc)) {
    const v = gc.value.value;
    const on = typeof v === 'string' ? v.startsWith('offload') || toBool(v) === true : toBool(v) === true;
    s.explicit('training.recompute', on ? 'full' : 'none', locOf(gc, 'gradient_checkpointing'));
  }
  readAxolotlOffload(s, root, gc);
  s.default('training.recompute', 'none', `${AX}: gradient_checkpointing off`);
  readPrecisionFlags(s, root, 'Axolotl');
  readTorchCompile(s, root, 'Axolotl');
  readExpertsImpl(s, root, 'Axolotl');
  readOptimizer(s, entry(root, 'optimizer'), 'optimizer');
  s.default('training.optimizer', 'adamw', `${AX}: adamw_torch_fused`);
  hfTrainerAccumulation(s, 'Axolotl (HF Trainer)', root);
  readBool(s, root, 'flash_attention', 'training.flashAttention');
  // Multipack (src/axolotl/utils/samplers/multipack.py) with FlashAttention's variable-length kernel over position ids.
  readPacking(s, root, 'sample_packing');
  readAxolotlLiger(s, root);
  readAxolotlCce(s, root);
  readAttnImplementation(s, root);
  const adapter = entry(root, 'adapter');
  const ad = adapter && typeof adapter.value.value === 'string' ? adapter.value.value : '';
  if (adapter && (ad === 'lora' || ad === 'qlora')) s.explicit('lora.enabled', true, locOf(adapter, 'adapter'));
  readLora(s, root, { rankKey: 'lora_r', targetKey: 'lora_target_modules', enabled: ad === 'lora' || ad === 'qlora' });
  if (ad === 'lora' || ad === 'qlora') {
    readLoraFullModules(s, root, 'lora_modules_to_save');
    // peft_use_dora (axolotl/utils/schemas/peft.py), passed to PEFT's LoraConfig use_dora.
    readBool(s, root, 'peft_use_dora', 'lora.dora');
  }
  if (ad === 'qlora' || toBool(entry(root, 'load_in_4bit')?.value.value)) s.explicit('lora.baseDtype', 'nf4', locOf(adapter ?? entry(root, 'load_in_4bit')!, adapter ? 'adapter' : 'load_in_4bit'));
  else if (ad) s.default('lora.baseDtype', toBool(entry(root, 'load_in_8bit')?.value.value) ? 'int8' : 'bf16', AX);
  if (ad && (s.value('lora.baseDtype') === 'nf4' || s.value('lora.baseDtype') === 'int8')) bnbSavesInputs(s, 'Axolotl quantizes with bitsandbytes', s.value('lora.baseDtype') === 'int8' ? 8 : 4);
  if (ad) s.default('lora.dropout', 0, `${AX}: lora_dropout 0.0`);
  readDeepSpeedKey(s, root);
  readFsdpList(s, root);
  const ver = entry(root, 'fsdp_version') ?? at(root, 'fsdp_config.fsdp_version') ?? at(root, 'fsdp_config.version');
  const fc = entry(root, 'fsdp_config');
  if (ver && toNumber(ver.value.value) === 2) s.explicit('parallel.sharding.style', 'fsdp2', locOf(ver, 'fsdp_version'));
  if (fc && fc.value.kind === 'map') {
    if (!s.has('parallel.sharding.style')) s.explicit('parallel.sharding.style', 'fsdp', locOf(fc, 'fsdp_config'));
    for (const k of ['offload_params', 'fsdp_offload_params']) {
      const b = readBool(s, fc.value, k, 'parallel.sharding.offloadParams', (x) => (x ? 'cpu' : 'none'));
      if (b !== undefined) readBool(s, fc.value, k, 'parallel.sharding.offloadOptimizer', (x) => (x ? 'cpu' : 'none'));
    }
    for (const k of ['reshard_after_forward', 'fsdp_reshard_after_forward']) {
      const b = readBool(s, fc.value, k, 'parallel.sharding.reshardAfterForward');
      if (b !== undefined) readBool(s, fc.value, k, 'parallel.sharding.stage', (x) => (x ? 3 : 2));
    }
    for (const k of ['activation_checkpointing', 'fsdp_activation_checkpointing']) readBool(s, fc.value, k, 'training.recompute', (x) => (x ? 'full' : 'none'));
    if (!s.has('parallel.sharding.stage')) s.default('parallel.sharding.stage', 3, `${AX}: FSDP full shard`);
  }
  readNum(s, root, 'tensor_parallel_size', 'parallel.tp', { int: true, min: 1 });
  if (readNum(s, root, 'context_parallel_size', 'parallel.cp', { int: true, min: 1 }) === undefined) readNum(s, root, 'sequence_parallel_degree', 'parallel.cp', { int: true, min: 1 });
  const ep = readNum(s, root, 'expert_parallel_size', 'parallel.ep', { int: true, min: 1 });
  if (ep !== undefined && ep > 1) { readAxolotlExpertParallel(s, root, ep); return; }
  const shard = readNum(s, root, 'dp_shard_size', 'parallel.sharding.shardGroupSize', { int: true, min: 1 });
  const rep = readNum(s, root, 'dp_replicate_size', 'parallel.dpReplicate', { int: true, min: 1 });
  if (shard !== undefined && rep !== undefined) s.derived('parallel.dp', shard * rep, 'Axolotl: dp_replicate_size × dp_shard_size');
}

const EP = 'Axolotl expert-parallel plugin (src/axolotl/integrations/expert_parallel/plugin.py, monkeypatch/accelerate/parallelism_config.py)';

/**
 * Axolotl's expert parallelism (the DeepEP plugin) puts `ep` outside `dp_shard` in the device mesh
 * (ep, dp_shard, cp, tp): each EP rank reads its own batch, the routed experts are split E/ep per rank and then
 * FSDP-sharded over dp_shard only, and the outer FSDP wrap shards every other weight over ep × dp_shard × cp. In
 * ShardLens's layout (EP inside the shard group, as torchtitan and Megatron count it) that is a shard group of
 * ep × dp_shard: the dense weights shard over it and the experts over it / ep. The plugin requires
 * ep × dp_shard × tp × cp to be the world size (`_resolve_ep_group`), so the file sets the world size, and it has no
 * dp_replicate axis and no EP × TP (NotImplementedError).
 */
function readAxolotlExpertParallel(s: FactSink, root: KNode, ep: number): void {
  const shardE = entry(root, 'dp_shard_size');
  const shard = readNum(s, root, 'dp_shard_size', 'parallel.sharding.shardGroupSize', { int: true, min: 1 }) ?? 1;
  const epLoc = locOf(entry(root, 'expert_parallel_size')!, 'expert_parallel_size');
  const tp = s.num('parallel.tp') ?? 1, cp = s.num('parallel.cp') ?? 1;
  if (shard > 1) s.derived('parallel.sharding.shardGroupSize', ep * shard, `${EP}: the dense weights shard over ep × dp_shard (${ep} × ${shard}), the experts over dp_shard`, locOf(shardE!, 'dp_shard_size'));
  const repE = entry(root, 'dp_replicate_size');
  const rep = repE && !isEmpty(repE) ? toNumber(repE.value.value) : undefined;
  if (repE && rep !== undefined && rep > 1) {
    s.diag('axolotl-ep-replicate', 'error', `Axolotl's expert-parallel plugin has no replicate axis: it requires expert_parallel_size × dp_shard_size × tensor_parallel_size × context_parallel_size to equal the world size and stops otherwise (plugin.py _resolve_ep_group). Remove dp_replicate_size, or fold it into dp_shard_size.`, repE.value.range, ['parallel.dpReplicate']);
  }
  if (tp > 1) s.diag('axolotl-ep-tp', 'error', `Axolotl's expert-parallel plugin does not run with tensor parallelism (EP × TP raises NotImplementedError); set tensor_parallel_size: 1.`, epLoc.valueRange, ['parallel.ep', 'parallel.tp']);
  // The plugin's only backend is DeepEP (args.py expert_parallel_backend: Literal["deep_ep"]): its fused dispatch and
  // combine kernels move the tokens.
  s.derived('parallel.epDispatcher', 'deepep', `${EP}: expert_parallel_backend deep_ep, the only backend`, epLoc);
  // Each EP rank reads its own batch: data parallelism is ep × dp_shard (the patched dp_dim_names).
  s.derived('parallel.dp', ep * shard, `${EP}: the EP ranks are data-parallel (ep × dp_shard)`, epLoc);
  s.derived('cluster.worldSize', ep * shard * tp * cp, `${EP}: expert_parallel_size × dp_shard_size × tensor_parallel_size × context_parallel_size must equal the world size`, epLoc);
}
