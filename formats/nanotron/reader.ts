/** nanotron YAML (src/nanotron/config/config.py, parallelism_config.py; docs/formats/nanotron.md). */
import type { FactSink } from '../common/sink';
import { locOf, readBool, readNum, readOptimizer, readSteps } from '../common/read';
import { precisionOf } from '../common/maps';
import { toBool } from '../common/text';
import { at, entry, type KNode } from '../common/tree';
import { readHfModel } from '../hf-config/reader';

const NT = 'nanotron default (src/nanotron/config/parallelism_config.py)';

export function readNanotron(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  readNum(s, root, 'parallelism.dp', 'parallel.dp', { int: true, min: 1 });
  readNum(s, root, 'parallelism.tp', 'parallel.tp', { int: true, min: 1 });
  readNum(s, root, 'parallelism.pp', 'parallel.pp', { int: true, min: 1 });
  readNum(s, root, 'parallelism.context_parallel_size', 'parallel.cp', { int: true, min: 1 });
  readNum(s, root, 'parallelism.expert_parallel_size', 'parallel.ep', { int: true, min: 1 });
  const eng = at(root, 'parallelism.pp_engine');
  if (eng && typeof eng.value.value === 'string') s.explicit('parallel.schedule', eng.value.value.toLowerCase() === '1f1b' ? '1f1b' : 'gpipe', locOf(eng, 'parallelism.pp_engine'));
  s.default('parallel.schedule', 'gpipe', `${NT}: pp_engine afab (all-forward-all-backward)`);
  const mode = at(root, 'parallelism.tp_mode');
  if (mode && typeof mode.value.value === 'string') s.explicit('parallel.sp', mode.value.value.toUpperCase() === 'REDUCE_SCATTER', locOf(mode, 'parallelism.tp_mode'));
  s.default('parallel.sp', false, `${NT}: tp_mode ALL_REDUCE`);
  readBool(s, root, 'parallelism.tp_linear_async_communication', 'parallel.tpCommOverlap');
  readBool(s, root, 'parallelism.recompute_layer', 'training.recompute', (b) => (b ? 'full' : 'none'));
  s.default('training.recompute', 'none', `${NT}: recompute_layer false`);
  readNum(s, root, 'tokens.micro_batch_size', 'training.microBatch', { int: true, min: 1 });
  readNum(s, root, 'tokens.batch_accumulation_per_replica', 'training.gradAccum', { int: true, min: 1 });
  readNum(s, root, 'tokens.sequence_length', 'training.seqLen', { int: true, min: 1 });
  readSteps(s, root, 'tokens.train_steps');
  const dt = at(root, 'model.dtype');
  const prec = dt && typeof dt.value.value === 'string' ? precisionOf(dt.value.value) : undefined;
  if (dt && prec) s.explicit('training.precision', prec === 'bf16' ? 'bf16-mixed' : prec, locOf(dt, 'model.dtype'));
  s.default('training.precision', 'bf16-mixed', 'nanotron default: model.dtype bfloat16 with fp32 master weights');
  const cap = at(root, 'model.ddp_bucket_cap_mb');
  if (cap && typeof cap.value.value === 'number') s.explicit('parallel.sharding.reduceBucketElems', Math.round((cap.value.value * 1024 * 1024) / 4), locOf(cap, 'model.ddp_bucket_cap_mb'));
  readNum(s, root, 'optimizer.zero_stage', 'parallel.sharding.stage', { int: true, min: 0, map: (n) => (n > 0 ? 1 : 0) });
  readBool(s, root, 'optimizer.accumulate_grad_in_fp32', 'training.fp32GradAccum');
  readOptimizer(s, at(root, 'optimizer.optimizer_factory.name'), 'optimizer.optimizer_factory.name');
  s.default('training.optimizer', 'adamw', 'nanotron default: adamW');
  const mc = at(root, 'model.model_config');
  if (mc) {
    mambaModel(s, mc.value);
    readHfModel(s, mc.value, 'model.model_config.');
    const moe = entry(mc.value, 'moe_config');
    if (moe) {
      readNum(s, moe.value, 'num_experts', 'model.moe.experts', { int: true, min: 1 });
      readNum(s, moe.value, 'top_k', 'model.moe.topK', { int: true, min: 1 });
      readNum(s, moe.value, 'moe_intermediate_size', 'model.moe.expertFfnSize', { int: true, min: 1 });
      const sh = readBool(s, moe.value, 'enable_shared_expert');
      if (sh) readNum(s, moe.value, 'shared_expert_intermediate_size', 'model.moe.sharedExpertFfnSize', { int: true, min: 1 });
    }
    if (s.has('model.moe.experts') && !s.has('model.moe.expertFfnSize') && s.has('model.ffnSize')) s.derived('model.moe.expertFfnSize', s.num('model.ffnSize')!, 'nanotron LlaMoE: experts use intermediate_size');
    s.default('model.tiedEmbeddings', false, 'nanotron LlamaConfig default: tie_word_embeddings False');
  }
}

/**
 * nanotron's Mamba model (examples/mamba: `is_mamba_config: true` with `d_model`, `num_hidden_layers` and `ssm_cfg`,
 * Mamba-1 blocks of mamba_ssm's selective scan). ShardLens has no state-space layer, so it cannot estimate this model:
 * a warning at the key says the figures are those of the model it assumes instead.
 */
function mambaModel(s: FactSink, mc: KNode): void {
  const flag = entry(mc, 'is_mamba_config');
  const ssm = entry(mc, 'ssm_cfg');
  const at = flag && toBool(flag.value.value) === true ? flag : ssm;
  if (!at) return;
  const width = entry(mc, 'd_model')?.value.value, layers = entry(mc, 'num_hidden_layers')?.value.value;
  const shape = typeof width === 'number' && typeof layers === 'number' ? ` (${layers} Mamba blocks of width ${width})` : '';
  s.diag('nanotron-mamba-unmodelled', 'warning', `A Mamba model${shape}: ShardLens does not model state-space (Mamba) layers, so the memory, communication and step time shown are those of the model it assumes (shardlens.model), not this one's.`, at.keyRange, ['model.layers']);
}

