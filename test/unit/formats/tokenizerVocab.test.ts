/**
 * The vocabulary of a Megatron or NeMo file that writes no size: the tokenizer gives it (Megatron sizes the embedding
 * from `tokenizer.vocab_size`, megatron/training/tokenizer/tokenizer.py; pretrain_gpt.py passes
 * args_defaults={'tokenizer_type': 'GPT2BPETokenizer'}). Expected sizes: GPT-2's BPE vocabulary has 50,257 entries
 * (openai/gpt-2 encoder.json), Llama 2's SentencePiece model 32,000 (Touvron et al. 2023), Llama 3.1's tokenizer
 * 128,256 (meta-llama/Llama-3.1-8B config.json vocab_size). A tokenizer whose size its name does not tell leaves an
 * assumption the verdict lists, never a silent 32,000.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';

const script = (extra: string) => `#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 \\
    --micro-batch-size 4 --global-batch-size 64 --bf16 ${extra}
`;
const parse = (extra: string) => parseConfig('/ws/train.sh', script(extra));
const resolved = (extra: string) => resolvePlan(parse(extra), []);

describe('vocabulary from the tokenizer (Megatron scripts)', () => {
  before(async () => { await initFormats(); });

  test('GPT2BPETokenizer is 50,257, placed at the flag', () => {
    const text = script('--tokenizer-type GPT2BPETokenizer --vocab-file /data/vocab.json --merge-file /data/merges.txt');
    const f = parseConfig('/ws/train.sh', text).facts['model.vocabSize'];
    assert.equal(f?.value, 50257);
    assert.equal(f?.source.kind, 'derived');
    const line = text.split('\n').findIndex((l) => l.includes('GPT2BPETokenizer'));
    assert.equal(f?.source.range?.start.line, line);
    assert.equal(resolved('--tokenizer-type GPT2BPETokenizer').plan!.model.vocabSize, 50257);
  });

  test("a vocabulary and merge file with no type is pretrain_gpt.py's default GPT-2 BPE, even behind a placeholder path", () => {
    for (const files of ['--vocab-file gpt2-vocab.json --merge-file gpt2-merges.txt', '--vocab-file $VOCAB --merge-file $MERGES']) {
      assert.equal(parse(files).facts['model.vocabSize']?.value, 50257, files);
    }
  });

  test('a Hub id of a bundled model gives that model\'s vocabulary', () => {
    assert.equal(parse('--tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Llama-3.1-8B').facts['model.vocabSize']?.value, 128256);
    assert.equal(parse('--tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Meta-Llama-3.1-8B').facts['model.vocabSize']?.value, 128256);
  });

  test("Llama2Tokenizer is Llama 2's 32,000, stated as derived", () => {
    const f = parse('--tokenizer-type Llama2Tokenizer --tokenizer-model /data/tokenizer.model').facts['model.vocabSize'];
    assert.equal(f?.value, 32000);
    assert.equal(f?.source.kind, 'derived');
  });

  test('--vocab-size wins over the tokenizer', () => {
    assert.equal(parse('--tokenizer-type GPT2BPETokenizer --vocab-size 51200').facts['model.vocabSize']?.value, 51200);
  });

  test('an unknown tokenizer is an assumption the verdict lists', () => {
    for (const extra of ['--tokenizer-type HuggingFaceTokenizer --tokenizer-model /models/my-tokenizer', '--tokenizer-type NullTokenizer', '']) {
      const r = resolved(extra);
      assert.equal(r.plan!.model.vocabSize, 32000, extra);
      assert.equal(r.plan!.sources['model.vocabSize']?.kind, 'assumed', extra);
      const a = r.assumptions.find((x) => x.path === 'model.vocabSize');
      assert.ok(a && /assumed 32,000/.test(a.detail), `${extra}: ${JSON.stringify(r.assumptions)}`);
    }
  });

  test('a known vocabulary is not an assumption', () => {
    for (const extra of ['--vocab-size 50304', '--tokenizer-type GPT2BPETokenizer']) {
      const r = resolved(extra);
      assert.equal(r.assumptions.some((x) => x.path === 'model.vocabSize'), false, extra);
    }
  });
});

describe('vocabulary from the tokenizer (NeMo YAML)', () => {
  before(async () => { await initFormats(); });
  const yaml = (tok: string) => `trainer:\n  devices: 8\n  num_nodes: 1\nmodel:\n  micro_batch_size: 1\n  global_batch_size: 64\n  encoder_seq_length: 4096\n  num_layers: 32\n  hidden_size: 4096\n  ffn_hidden_size: 14336\n  num_attention_heads: 32\n  num_query_groups: 8\n  tokenizer:\n${tok}`;
  const nemo = (tok: string) => resolvePlan(parseConfig('/ws/conf/llama3_1_8b.yaml', yaml(tok)), []);

  test('library huggingface with a bundled model id (NeMo-Framework-Launcher llama3_1_8b.yaml)', () => {
    const r = nemo('    library: huggingface\n    type: meta-llama/Meta-Llama-3.1-8B\n');
    assert.equal(r.plan!.model.vocabSize, 128256);
    assert.equal(r.assumptions.some((a) => a.path === 'model.vocabSize'), false);
    // Named after a base model of that shape, not a distilled copy with the same widths.
    assert.match(r.plan!.model.name, /\(Llama-3(\.1)?-8B shape\)/);
  });

  test('library megatron with GPT2BPETokenizer (the launcher\'s gpt3 configs)', () => {
    assert.equal(nemo("    library: 'megatron'\n    type: 'GPT2BPETokenizer'\n    model: null\n").plan!.model.vocabSize, 50257);
  });

  test('a SentencePiece model path says nothing by its name: assumed, and listed', () => {
    const r = nemo('    library: sentencepiece\n    model: /data/tokenizer.model\n');
    assert.equal(r.plan!.model.vocabSize, 32000);
    assert.ok(r.assumptions.some((a) => a.path === 'model.vocabSize'));
  });
});

describe('vocabulary from the tokenizer (Megatron-Bridge YAML)', () => {
  before(async () => { await initFormats(); });

  test("the tokenizer block's Hub id sizes the vocabulary; the rest of the block is not read", () => {
    // Megatron-Bridge TokenizerConfig (src/megatron/bridge/training/tokenizers/config.py): tokenizer_type, tokenizer_model.
    const yaml = 'ConfigContainer:\n  model:\n    num_layers: 32\n    hidden_size: 4096\n    ffn_hidden_size: 14336\n    num_attention_heads: 32\n    num_query_groups: 8\n    seq_length: 8192\n  train:\n    micro_batch_size: 1\n    global_batch_size: 128\n  tokenizer:\n    tokenizer_type: HuggingFaceTokenizer\n    tokenizer_model: meta-llama/Meta-Llama-3-8B\n    seq_length: 99\n';
    const r = parseConfig('/ws/llama3_8b_pretrain_override.yaml', yaml);
    assert.equal(r.facts['model.vocabSize']?.value, 128256, `${r.format}: ${JSON.stringify(r.facts['model.vocabSize'])}`);
    assert.equal(r.facts['model.vocabSize']?.source.range?.start.line, 13);
    assert.notEqual(r.facts['training.seqLen']?.value, 99);
  });
});

describe('vocabulary from a local tokenizer path named after its model', () => {
  before(async () => { await initFormats(); });

  test('a folder named after a bundled model, or its tokenizer file, gives that model\'s vocabulary', () => {
    for (const path of ['/models/Llama-3.1-8B', '/models/Meta-Llama-3.1-8B/original/tokenizer.model', '/ckpt/llama-3.1-8b/tokenizer.json']) {
      assert.equal(parse(`--tokenizer-type HuggingFaceTokenizer --tokenizer-model ${path}`).facts['model.vocabSize']?.value, 128256, path);
    }
  });

  test('generic folders and unknown names stay unknown', () => {
    for (const path of ['/data/tokenizer.model', '/models/original/tokenizer.model', '/models/my-company-llm/tokenizer.json', 'tokenizer.model']) {
      assert.equal(parse(`--tokenizer-type HuggingFaceTokenizer --tokenizer-model ${path}`).facts['model.vocabSize'], undefined, path);
    }
  });
});
