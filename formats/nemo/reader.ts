/**
 * NeMo YAML: NeMo 1 configs (examples/nlp/language_modeling/conf, tuning/conf), NeMo-Framework-Launcher stage configs
 * (launcher_scripts/conf/training|fine_tuning|peft) and NeMo 2 recipe overrides (`trainer.strategy.*`, `data.*`, as
 * literal dotted keys inside Megatron-LM test YAMLs' MODEL_ARGS), read through keys.json.
 */
import nemo from './keys.json';
import { applyTable, getter, type DialectTable } from '../common/keyTable';
import type { FactSink } from '../common/sink';
import { at, entry, type KNode } from '../common/tree';
import { boolAt, isEmpty, isUnresolved, locOf, readStr } from '../common/read';
import { keepBlockRecomputeLayers } from '../common/recomputeLayers';
import { toBool, toNumber } from '../common/text';
import { vocabOfTokenizer } from '../common/tokenizerVocab';
import type { PlanPath } from '../../shared/plan/paths';
import type { FactValue } from '../../shared/plan/facts';

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

/**
 * FP8 of NeMo 1 and the launcher (nemo/collections/nlp/models/language_modeling/megatron_base_model.py
 * build_transformer_config): `model.fp8` turns it on and the format is E4M3 when `fp8_e4m3` is true, else HYBRID when
 * `fp8_hybrid` is; with neither NeMo raises "fp8 enabled but fp8_format (fp8_e4m3 | fp8_hybrid) is not set". The
 * scaling is Transformer Engine's delayed recipe (amax history `fp8_amax_history_len`). `fp8_params` only counts with
 * FP8 on.
 */
function nemoFp8(s: FactSink, root: KNode): void {
  const on = at(root, 'model.fp8');
  const flag = (k: string) => { const e = at(root, k); return e?.value.kind === 'scalar' ? toBool(e.value.value) === true : false; };
  for (const k of ['model.fp8', 'model.fp8_e4m3', 'model.fp8_hybrid']) boolAt(s, root, k, ['training.precision']);
  if (!on || on.value.kind !== 'scalar' || toBool(on.value.value) !== true) {
    delete s.facts['training.fp8.paramGather'];
    return;
  }
  if (!flag('model.fp8_e4m3') && !flag('model.fp8_hybrid')) {
    delete s.facts['training.fp8.paramGather'];
    s.diag('invalid-value', 'warning', 'model.fp8 is true but neither model.fp8_e4m3 nor model.fp8_hybrid is: NeMo stops with "fp8 enabled but fp8_format (fp8_e4m3 | fp8_hybrid) is not set". Set model.fp8_hybrid: True (E4M3 forward, E5M2 gradients); the estimate stays 16-bit.', on.value.range, ['training.precision']);
    return;
  }
  s.explicit('training.precision', 'fp8-mixed', locOf(on, 'model.fp8'));
  s.default('training.fp8.recipe', 'delayed', 'NeMo 1 FP8 uses Transformer Engine\'s delayed scaling (fp8_amax_history_len, fp8_amax_compute_algo)');
  s.default('training.fp8.paramGather', false, 'no model.fp8_params');
}

/**
 * The vocabulary NeMo builds from `model.tokenizer` when no size is written (the embedding is sized from the tokenizer,
 * padded to make_vocab_size_divisible_by): library `megatron` with a Megatron type (GPT2BPETokenizer), or library
 * `huggingface` with a Hub id of a bundled model (formats/common/tokenizerVocab.ts). A SentencePiece model path says
 * nothing by its name.
 */
function nemoTokenizer(s: FactSink, root: KNode): void {
  if (s.has('model.vocabSize')) return;
  const type = at(root, 'model.tokenizer.type');
  const lib = at(root, 'model.tokenizer.library');
  const text = (e: typeof type) => (e?.value.kind === 'scalar' && typeof e.value.value === 'string' ? e.value.value : undefined);
  const library = text(lib)?.toLowerCase(), name = text(type);
  if (!type || !name || isUnresolved(name)) return;
  const v = library === 'huggingface' ? vocabOfTokenizer({ model: name }) : library === 'megatron' ? vocabOfTokenizer({ type: name }) : undefined;
  if (v) s.derived('model.vocabSize', v.vocab, v.why, locOf(type, 'model.tokenizer.type'));
}

/**
 * The architecture NeMo builds from an inline model (megatron_base_model.py build_transformer_config and the model
 * classes): `activation` ending in `glu` is a gated MLP (`gated_linear_unit = activation.endswith('glu')`), `bias`
 * puts biases on every linear layer and `qkv_bias` on QKV alone; unset, NeMo takes gelu, bias True, LayerNorm,
 * learned absolute positions, tied output weights and a vocabulary padded to 128 (`self.cfg.get(…)` defaults), GPT-3's
 * layout rather than Llama's. Only applied when the file writes the model's sizes.
 */
function nemoArchitecture(s: FactSink, root: KNode): void {
  if (!s.has('model.layers')) return;
  const scalar = (k: string) => { const e = at(root, k); return !isEmpty(e) && e?.value.kind === 'scalar' ? e : undefined; };
  const act = scalar('model.activation');
  if (act && typeof act.value.value === 'string' && !/\$\{/.test(act.value.value)) s.explicit('model.gatedMlp', act.value.value.trim().toLowerCase().endsWith('glu'), locOf(act, 'model.activation'));
  for (const k of ['model.bias', 'model.qkv_bias']) boolAt(s, root, k, ['model.attnBias']);
  const bias = scalar('model.bias'), qkv = scalar('model.qkv_bias');
  const b = bias ? toBool(bias.value.value) : undefined, q = qkv ? toBool(qkv.value.value) : undefined;
  if (bias && b !== undefined) {
    s.explicit('model.mlpBias', b, locOf(bias, 'model.bias'));
    const onQkv = !b && q === true && qkv !== undefined;
    s.explicit('model.attnBias', b ? 'all' : onQkv ? 'qkv' : 'none', onQkv ? locOf(qkv, 'model.qkv_bias') : locOf(bias, 'model.bias'));
  } else if (qkv && q) s.explicit('model.attnBias', 'all', locOf(qkv, 'model.qkv_bias'));
  const d = (p: PlanPath, v: FactValue, why: string) => s.default(p, v, `NeMo default: ${why} (megatron_base_model.py)`);
  d('model.gatedMlp', false, 'activation gelu, a plain MLP');
  d('model.mlpBias', true, 'bias True');
  d('model.attnBias', 'all', 'bias True');
  d('model.norm', 'layernorm', 'normalization layernorm');
  d('model.positions', 'learned', 'position_embedding_type learned_absolute');
  d('model.tiedEmbeddings', true, 'share_embeddings_and_output_weights True');
  d('model.vocabPadMultiple', 128, 'make_vocab_size_divisible_by 128');
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
  nemoFp8(s, root);
  keepBlockRecomputeLayers(s, readStr(root, 'model.activations_checkpoint_method'));
  nemoTokenizer(s, root);
  nemoArchitecture(s, root);
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

