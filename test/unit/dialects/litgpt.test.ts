/**
 * LitGPT recipes (Lightning-AI/litgpt 01fe959c: litgpt/finetune/full.py, lora.py, pretrain.py): the strategy follows
 * the device count — FSDP with every Block checkpointed for fine-tuning on more than one device, HYBRID_SHARD without
 * checkpointing and under torch.compile for pre-training, strategy "auto" (the plain model) on one device; LoRA adapts
 * the projections its lora_* switches name (lora_query and lora_value default to True); a quantized model trains with
 * bitsandbytes' PagedAdamW, on one device only.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { initFormats, parseConfig } from '../../../formats/index';

const read = (text: string, uri = 'file:///ws/lora.yaml') => parseConfig(uri, text, 'litgpt');
const value = (text: string, path: string) => (read(text).facts as Record<string, { value: unknown } | undefined>)[path]?.value;
const FINETUNE = 'checkpoint_dir: checkpoints/meta-llama/Meta-Llama-3.1-8B\nprecision: bf16-true\ntrain:\n  global_batch_size: 8\n  micro_batch_size: 2\n  max_seq_length: 512\n';

describe('LitGPT recipes', () => {
  before(async () => { await initFormats(); });

  test('one device: strategy "auto", nothing sharded, nothing recomputed', () => {
    const text = `${FINETUNE}devices: 1\n`;
    assert.equal(value(text, 'parallel.sharding.style'), 'ddp');
    assert.equal(value(text, 'parallel.sharding.stage'), 0);
    assert.equal(value(text, 'training.recompute'), 'none');
    assert.equal(value(text, 'cluster.worldSize'), 1);
  });

  test('fine-tuning on more than one device: FSDP full sharding with every Block checkpointed', () => {
    const text = `${FINETUNE}devices: 4\n`;
    assert.equal(value(text, 'parallel.sharding.style'), 'fsdp');
    assert.equal(value(text, 'parallel.sharding.stage'), 3);
    assert.equal(value(text, 'training.recompute'), 'full');
  });

  test('pre-training on two nodes: HYBRID_SHARD within each node, no checkpointing, compiled', () => {
    const text = 'model_name: pythia-160m\ndevices: 8\nnum_nodes: 2\ntrain:\n  global_batch_size: 512\n  micro_batch_size: 4\n  max_tokens: 3000000000000\n';
    assert.equal(value(text, 'parallel.sharding.fsdpStrategy'), 'HYBRID_SHARD');
    assert.equal(value(text, 'parallel.sharding.shardGroupSize'), 8);
    assert.equal(value(text, 'training.recompute'), 'none');
    assert.equal(value(text, 'training.compile'), true);
  });

  test('LoRA targets: query and value by default; every switch of the phi-3 QLoRA config', () => {
    assert.equal(value(`${FINETUNE}devices: 1\nlora_r: 8\n`, 'lora.targets'), 'q,v');
    const phi = readFileSync('test/fixtures/dialects/litgpt/config_hub/finetune/phi-3/qlora.yaml', 'utf8');
    const facts = read(phi, 'file:///ws/phi-3/qlora.yaml');
    assert.equal(facts.facts['lora.targets']?.value, 'q,k,v,o,gate,up,down');
    // lora_head: true adapts the head too, which is not counted: said at the key.
    assert.ok(facts.diagnostics.some((d) => d.code === 'unmodelled-value' && /^lora_head/.test(d.message)));
  });

  test('quantize: PagedAdamW; on more than one device LitGPT refuses it at the key', () => {
    const one = `${FINETUNE}devices: 1\nquantize: bnb.nf4\nlora_r: 8\n`;
    assert.equal(value(one, 'training.pagedOptimizer'), true);
    assert.equal(value(one, 'lora.baseDtype'), 'nf4');
    assert.equal(read(one).diagnostics.find((d) => d.code === 'litgpt-quantize-devices'), undefined);
    const four = one.replace('devices: 1', 'devices: 4');
    const d = read(four).diagnostics.find((x) => x.code === 'litgpt-quantize-devices');
    assert.equal(d?.severity, 'error');
    assert.equal(d?.range.start.line, four.split('\n').findIndex((l) => l.startsWith('quantize')));
  });

  test('quantize with a mixed precision: LitGPT refuses it ("Quantization and mixed precision is not supported.")', () => {
    // litgpt/finetune/lora.py setup: `if "mixed" in precision: raise ValueError(...)` under a bnb.* quantize.
    const mixed = `${FINETUNE.replace('bf16-true', 'bf16-mixed')}devices: 1\nquantize: bnb.nf4\nlora_r: 8\n`;
    const d = read(mixed).diagnostics.find((x) => x.code === 'litgpt-quantize-mixed');
    assert.equal(d?.severity, 'error');
    assert.match(d?.message ?? '', /bf16-true/);
    assert.equal(d?.range.start.line, mixed.split('\n').findIndex((l) => l.startsWith('quantize')));
    assert.equal(read(`${FINETUNE}devices: 1\nquantize: bnb.nf4\nlora_r: 8\n`).diagnostics.find((x) => x.code === 'litgpt-quantize-mixed'), undefined);
  });

  test('a fine-tuning file\'s train.tie_embeddings, max_norm or lr_warmup_fraction: refused at start-up, an error at the key; empty ones pass', () => {
    // litgpt/finetune/*.py validate_args: unsupported = (train, ["max_tokens", "max_norm", "tie_embeddings", "lr_warmup_fraction"]).
    const set = `${FINETUNE}  tie_embeddings: true\n  max_norm: 1.0\n  lr_warmup_fraction:\ndevices: 1\n`;
    const ds = read(set).diagnostics.filter((x) => x.code === 'litgpt-finetune-refused');
    assert.deepEqual(ds.map((d) => d.range.start.line).sort(), [6, 7]);
    assert.ok(ds.every((d) => d.severity === 'error'));
    // pretrain.py takes them (model_name marks a pretraining file), and ties the head when asked.
    const pre = `model_name: pythia-160m\n${set.replace(/^checkpoint_dir.*\n/, '')}`;
    assert.equal(read(pre).diagnostics.filter((x) => x.code === 'litgpt-finetune-refused').length, 0);
    assert.equal(value(pre, 'model.tiedEmbeddings'), true);
    // A fine-tune's GPT keeps its own lm_head, and its loop holds the previous logits.
    assert.equal(value(`${FINETUNE}devices: 1\n`, 'model.tiedEmbeddings'), false);
    assert.equal(value(`${FINETUNE}devices: 1\n`, 'training.previousOutputHeld'), true);
  });
});
