/** GPT-NeoX configs (configs/*.yml): YAML with JSON-like braces, read through keys.json. */
import gptNeox from './keys.json';
import { applyTable, found, type DialectTable } from '../common/keyTable';
import type { FactSink } from '../common/sink';
import { at, type KEntry, type KNode } from '../common/tree';
import { gptPipeSplit } from '../megatron/deepspeedPipe';

const NEOX = gptNeox as DialectTable;
const ARGS = 'megatron/neox_arguments/neox_args.py';

/**
 * attention_config lists the attention kind of every layer ([[["global"], n_layers]] by default, GPT-NeoX's own
 * scaled-masked-softmax attention); "flash" layers run FlashAttention (megatron/model/transformer.py).
 */
function neoxAttention(s: FactSink, e: KEntry | undefined): void {
  const text = e ? nodeText(e.value) : '';
  if (e && /flash/i.test(text)) {
    s.explicit('training.flashAttention', true, { key: 'attention_config', keyRange: e.keyRange, valueRange: e.value.range ?? e.keyRange });
    return;
  }
  s.default('training.flashAttention', false, `GPT-NeoX: attention_config ${e ? 'without "flash"' : 'global on every layer by default'} (unfused attention with the fused softmax)`);
}

/**
 * The vocabulary before padding comes from the tokenizer: GPT2BPETokenizer (the default) has GPT-2's 50,257 tokens; an
 * HFTokenizer on GPT-NeoX-20B's tokenizer file (20B_tokenizer.json, also Pythia's) has 50,277 — the models pad it to
 * 50,432 at TP 2 (GPT-NeoX-20B) and 50,304 at TP 1 (Pythia), make_vocab_size_divisible_by 128 × TP. Other tokenizers
 * stay unknown (the estimate assumes and says so).
 */
function neoxVocabulary(s: FactSink, type: KEntry | undefined, file: KEntry | undefined): void {
  if (s.has('model.vocabSize')) return;
  const t = type ? nodeText(type.value).replace(/["']/g, '').trim() : 'GPT2BPETokenizer';
  if (t === 'GPT2BPETokenizer') {
    s.derived('model.vocabSize', 50257, `GPT-NeoX: ${type ? 'tokenizer_type' : 'default tokenizer'} GPT2BPETokenizer, GPT-2's 50,257 tokens`, type ? { key: 'tokenizer_type', keyRange: type.keyRange, valueRange: type.value.range } : undefined);
    return;
  }
  const f = file ? nodeText(file.value).replace(/["']/g, '').trim() : '';
  if (t === 'HFTokenizer' && /(^|\/)20B_tokenizer\.json$/.test(f) && file) {
    s.derived('model.vocabSize', 50277, 'GPT-NeoX-20B tokenizer (20B_tokenizer.json): 50,277 tokens', { key: 'vocab_file', keyRange: file.keyRange, valueRange: file.value.range });
  }
}

/** The scalar values of a node joined by spaces (a list or map's, depth first): enough to look for a word in it. */
function nodeText(n: KNode): string {
  if (n.kind === 'scalar') return String(n.value ?? '');
  const parts = n.kind === 'list' ? (n.items ?? []) : (n.entries ?? []).map((e) => e.value);
  return parts.map(nodeText).join(' ');
}

/**
 * The pipeline split DeepSpeed's PipelineModule makes of GPT2ModelPipe's layer specs (megatron/model/gpt2_model.py
 * `init_specs`: the embedding, a reshaping function, the transformer layers, another function, NormPipe, the head — the
 * same two specs before and three after the layers as Megatron-DeepSpeed's GPTModelPipe, so formats/megatron/deepspeedPipe.ts
 * splits both) by `pipe_partition_method`, "type:transformer|mlp" by default (neox_args.py).
 */
function neoxPipeSplit(s: FactSink, e: KEntry | undefined): void {
  const L = s.num('model.layers'), pp = s.num('parallel.pp') ?? 1;
  if (!L || pp < 2 || s.has('parallel.stageLayers')) return;
  const method = e ? nodeText(e.value).replace(/["']/g, '').trim() : 'type:transformer|mlp';
  const split = gptPipeSplit(s, method, L, pp);
  const where = e ? { key: 'pipe_partition_method', keyRange: e.keyRange, valueRange: e.value.range ?? e.keyRange } : undefined;
  if ('error' in split) {
    s.diag('gpt-neox-partition', 'info', `DeepSpeed's pipeline split is not known: ${split.error}; layers are spread evenly over the stages.`, where?.valueRange, ['parallel.stageLayers']);
    return;
  }
  if (split.layers.every((x) => x === split.layers[0])) return;
  s.derived('parallel.stageLayers', split.layers, `DeepSpeed PipelineModule partition_method ${method} over GPT2ModelPipe's layer specs (GPT-NeoX)`, where);
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
  neoxAttention(s, byKey.get('attention_config'));
  neoxVocabulary(s, byKey.get('tokenizer_type'), byKey.get('vocab_file'));
  // GPT-NeoX's own defaults (megatron/neox_arguments/neox_args.py), not another framework's.
  const d = (p: Parameters<FactSink['default']>[0], v: Parameters<FactSink['default']>[1], why: string) => s.default(p, v, `GPT-NeoX default: ${why} (${ARGS})`);
  d('model.norm', 'layernorm', 'norm "layernorm"');
  d('model.positions', 'learned', 'pos_emb "learned"');
  d('model.tiedEmbeddings', true, 'no_weight_tying false');
  d('model.gatedMlp', false, 'activation "gelu"');
  d('model.vocabPadMultiple', 128, 'make_vocab_size_divisible_by 128');
  d('model.attnBias', 'all', 'linear layers with biases');
  d('model.mlpBias', true, 'linear layers with biases');
  neoxPipeSplit(s, byKey.get('pipe_partition_method'));
  s.derived('engine', 'deepspeed', 'GPT-NeoX runs on DeepSpeed');
  if (!s.has('parallel.sharding.style')) s.default('parallel.sharding.style', 'deepspeed', 'GPT-NeoX runs on DeepSpeed');
  s.default('parallel.sharding.stage', 0, 'DeepSpeed default: ZeRO stage 0');
}

