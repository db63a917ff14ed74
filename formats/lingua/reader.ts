/**
 * Meta Lingua train YAML (apps/main/configs and the other apps): batch, sequence, FSDP2 sharding, TP, precision, selective checkpointing
 * and the model block, read through keys.json.
 */
import lingua from './keys.json';
import { applyTable, getter, type DialectTable } from '../common/keyTable';
import type { FactSink } from '../common/sink';
import { locOf } from '../common/read';
import { toNumber } from '../common/text';
import { at, type KNode } from '../common/tree';

const TABLE = lingua as DialectTable;
const SRC = 'lingua/distributed.py';

/** Lingua: FSDP2 full_shard or replicated (no_shard, the default), over dp_shard × dp_replicate ranks. */
export function readLingua(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  applyTable(s, TABLE, getter(root));
  const type = at(root, 'distributed.fsdp_type');
  const full = type?.value.value === 'full_shard';
  if (type && (full || type.value.value === 'no_shard')) {
    s.explicit('parallel.sharding.style', full ? 'fsdp2' : 'ddp', locOf(type, 'distributed.fsdp_type'));
    s.explicit('parallel.sharding.stage', full ? 3 : 0, locOf(type, 'distributed.fsdp_type'));
  } else {
    s.default('parallel.sharding.style', 'ddp', `Lingua default fsdp_type no_shard (${SRC})`);
    s.default('parallel.sharding.stage', 0, `Lingua default fsdp_type no_shard (${SRC})`);
  }
  // dp_shard > 1 with dp_replicate > 1 is a 2-D (replicate, shard) mesh: HSDP (parallelize_model's fsdp mesh).
  const rep = at(root, 'distributed.dp_replicate');
  const shard = s.num('parallel.sharding.shardGroupSize');
  if (full && rep && (toNumber(rep.value.value) ?? 1) > 1 && shard && shard > 1) s.explicit('parallel.sharding.fsdpStrategy', 'HYBRID_SHARD', locOf(rep, 'distributed.dp_replicate'));
  if (!full) delete s.facts['parallel.sharding.shardGroupSize'];
  s.derived('engine', full ? 'fsdp2' : 'ddp', `Lingua wraps the model with FSDP2 fully_shard (${SRC} parallelize_model)`);
  s.default('training.precision', 'bf16-mixed', `Lingua default model_dtype bf16 (${SRC})`);
  s.default('training.recompute', 'none', `Lingua default selective_activation_checkpointing false (${SRC})`);
  s.default('training.gradAccum', 1, 'Lingua default grad_acc_steps 1 (apps/main/train.py)');
  s.default('training.syncEveryMicroBatch', false,
    'Lingua accumulates with model.set_requires_gradient_sync(train_state.acc_step == 0): only the step\'s last micro-batch reduces (apps/main/train.py)');
  s.default('parallel.tp', 1, `Lingua default tp_size 1 (${SRC})`);
  s.default('training.compile', false, `Lingua default compile false (${SRC})`);
  s.derived('training.normUpcast', true, "Lingua's RMSNorm (lingua/transformer.py): _norm(x.float()) times weight.float(), type_as(x); eager, its fp32 input is saved");
  linguaVocab(s, root);
  linguaFfn(s, root);
}

/**
 * Lingua's SwiGLU width (lingua/transformer.py FeedForward, built with hidden_dim = 4·dim): int(2·4·dim/3), times
 * ffn_dim_multiplier when set, rounded up to a multiple of multiple_of (BaseTransformerArgs default 256), as Llama's
 * reference model does. Not 4·dim.
 */
function linguaFfn(s: FactSink, root: KNode): void {
  const dim = s.num('model.hiddenSize');
  if (!dim || s.has('model.ffnSize')) return;
  const m = at(root, 'model.multiple_of'), f = at(root, 'model.ffn_dim_multiplier');
  const multiple = toNumber(m?.value.value) ?? 256;
  const mult = f && f.value.value !== null ? toNumber(f.value.value) : undefined;
  if (!(multiple >= 1) || (mult !== undefined && !(mult > 0))) return;
  let hidden = Math.floor((2 * 4 * dim) / 3);
  if (mult !== undefined) hidden = Math.floor(mult * hidden);
  hidden = multiple * Math.ceil(hidden / multiple);
  s.derived('model.ffnSize', hidden, `Lingua FeedForward: int(2·4·dim/3)${mult !== undefined ? ` × ${mult}` : ''} rounded up to a multiple of ${multiple}`);
}

/**
 * Lingua sizes the model from its tokenizer when model.vocab_size is unset (apps/main/train.py: `vocab_size =
 * tokenizer.n_words`). Its example configs name Llama 3's tiktoken file, `cl_toplang_128k` (the tokenizer.model of the
 * Llama 3 checkpoints, whose params give vocab_size 128,256): that size. Other tokenizers stay unknown.
 */
function linguaVocab(s: FactSink, root: KNode): void {
  if (s.has('model.vocabSize')) return;
  const path = at(root, 'data.tokenizer.path');
  const name = at(root, 'data.tokenizer.name');
  const p = typeof path?.value.value === 'string' ? path.value.value : '';
  if (path && name?.value.value === 'tiktoken' && /(^|\/)cl_toplang_128k(\.tiktoken)?\/?$/.test(p)) {
    s.derived('model.vocabSize', 128256, 'tiktoken cl_toplang_128k: Llama 3\'s tokenizer, 128,256 tokens (its checkpoints\' params.json vocab_size)', locOf(path, 'data.tokenizer.path'));
  }
}
