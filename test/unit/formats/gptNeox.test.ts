/**
 * GPT-NeoX configs read with GPT-NeoX's own defaults (megatron/neox_arguments/neox_args.py: norm "layernorm", pos_emb
 * "learned", no_weight_tying false, activation "gelu", make_vocab_size_divisible_by 128, tokenizer_type
 * "GPT2BPETokenizer", attention_config all "global") instead of another framework's.
 *
 * Expected counts from first principles and the published models: GPT-NeoX-20B (configs/20B.yml) has 44 layers of
 * 12h² + 13h (h = 6144: QKV, output and MLP weights with biases, two LayerNorms), untied input and output embeddings of
 * the padded vocabulary 50,432 (EleutherAI/gpt-neox-20b config.json vocab_size) and a final LayerNorm:
 * 44 · 453,064,704 + 2 · 50,432 · 6,144 + 2 · 6,144 = 20,554,567,680. Pythia pads the same 50,277-token tokenizer to
 * 50,304 at TP 1 (EleutherAI/pythia-* config.json vocab_size).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { countParams, paddedVocabSize } from '../../../shared/model/params';

// configs/20B.yml, the keys that shape the model (EleutherAI/gpt-neox at 252ddc5).
const NEOX_20B = `{
  "vocab-file": "./20B_checkpoints/20B_tokenizer.json",
  "pipe-parallel-size": 4,
  "model-parallel-size": 2,
  "num-layers": 44,
  "hidden-size": 6144,
  "num-attention-heads": 64,
  "seq-length": 2048,
  "max-position-embeddings": 2048,
  "norm": "layernorm",
  "pos-emb": "rotary",
  "rotary_pct": 0.25,
  "no-weight-tying": true,
  "gpt_j_residual": true,
  "zero_optimization": { "stage": 1 },
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 32,
  "checkpoint-activations": true,
  "fp16": { "enabled": true },
  "tokenizer_type": "HFTokenizer",
}
`;

const planOf = (text: string) => {
  const c = parseConfig('/x/configs/model.yml', text);
  assert.equal(c.format, 'gpt-neox');
  const plan = resolvePlan(c, [], { settings: { gpu: 'a100-40gb', worldSize: 96 } }).plan;
  assert.ok(plan);
  return plan;
};

describe('GPT-NeoX configs', () => {
  before(async () => { await initFormats(); });

  test('GPT-NeoX-20B as configs/20B.yml writes it: 20,554,567,680 parameters, untied, rotary, LayerNorm, GELU, no flash', () => {
    const plan = planOf(NEOX_20B);
    assert.equal(plan.model.vocabSize, 50277);
    assert.equal(paddedVocabSize(plan.model.vocabSize, plan.model.vocabPadMultiple, plan.parallel.tp), 50432);
    assert.equal(plan.model.tiedEmbeddings, false);
    assert.equal(plan.model.positions, 'rotary');
    assert.equal(plan.model.norm, 'layernorm');
    assert.equal(plan.model.gatedMlp, false);
    assert.equal(plan.training.flashAttention, false);
    assert.equal(countParams(plan.model, undefined, plan.parallel.tp).parameters, 20_554_567_680);
  });

  test('Pythia\'s padding of the same tokenizer at TP 1 is 50,304', () => {
    const plan = planOf(NEOX_20B.replace('"model-parallel-size": 2', '"model-parallel-size": 1'));
    assert.equal(paddedVocabSize(plan.model.vocabSize, plan.model.vocabPadMultiple, 1), 50304);
  });

  test('GPT-NeoX\'s defaults when the file says nothing: GPT-2 BPE (50,257), learned positions, tied, LayerNorm, GELU', () => {
    const plan = planOf('{ "pipe-parallel-size": 1, "num-layers": 24, "hidden-size": 2048, "num-attention-heads": 16, "seq-length": 2048, "train_micro_batch_size_per_gpu": 4 }\n');
    assert.equal(plan.model.vocabSize, 50257);
    assert.equal(plan.model.positions, 'learned');
    assert.equal(plan.model.tiedEmbeddings, true);
    assert.equal(plan.model.norm, 'layernorm');
    assert.equal(plan.model.gatedMlp, false);
    assert.equal(plan.training.flashAttention, false);
  });

  test('attention_config with "flash", SwiGLU and RMSNorm are read', () => {
    const plan = planOf('{ "pipe-parallel-size": 1, "num-layers": 24, "hidden-size": 2048, "num-attention-heads": 16, "seq-length": 2048, "train_micro_batch_size_per_gpu": 4, "norm": "rmsnorm", "activation": "swiglu", "intermediate_size": 5632, "attention-config": [[["flash"], 24]] }\n');
    assert.equal(plan.training.flashAttention, true);
    assert.equal(plan.model.gatedMlp, true);
    assert.equal(plan.model.norm, 'rmsnorm');
    assert.equal(plan.model.ffnSize, 5632);
  });

  // The splits DeepSpeed 0.19.8's own partition_balanced and partition_uniform (deepspeed/runtime/utils.py) make of
  // GPT2ModelPipe's spec list, [embedding, function, L layers, function, NormPipe, head], computed in the venv.
  const SPLITS: [number, number, string | undefined, number[] | undefined][] = [
    [44, 3, undefined, [15, 15, 14]], // the default method, type:transformer|mlp
    [30, 4, undefined, [8, 8, 7, 7]],
    [30, 4, 'uniform', [7, 9, 9, 5]],
    [24, 5, 'uniform', [4, 6, 6, 6, 2]],
    [44, 4, undefined, undefined], // even: no split stated
  ];
  for (const [L, pp, method, want] of SPLITS) {
    test(`${L} layers over PP ${pp} by ${method ?? 'the default method'}: ${want?.join(', ') ?? 'even'}`, () => {
      const m = method ? `, "pipe_partition_method": "${method}"` : '';
      const plan = planOf(`{ "pipe-parallel-size": ${pp}, "num-layers": ${L}, "hidden-size": 2048, "num-attention-heads": 16, "seq-length": 2048, "train_micro_batch_size_per_gpu": 4${m} }\n`);
      assert.deepEqual(plan.parallel.stageLayers, want);
    });
  }
});
