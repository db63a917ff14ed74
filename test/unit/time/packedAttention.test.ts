/**
 * Packed samples whose attention stays within each sample (axolotl `sample_packing`, LLaMA-Factory `neat_packing`,
 * torchtune `dataset.packed`, NeMo `packed_sequence`, TRL `padding_free` or `packing` with `packing_strategy: bfd`).
 * A sample of l tokens costs l²/2 score elements, at most the S²/2 of one S-token sequence; the lengths are in the
 * dataset, so attention is timed for whole sequences and the estimate says it is an upper bound (first principles:
 * Σ lᵢ² ≤ (Σ lᵢ)² for lᵢ ≥ 0). Packing that lets samples attend to each other (LLaMA-Factory `packing` alone) is one
 * causal sequence, as timed, and says nothing.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { estimateStepTime } from '../../../shared/time/estimate';

const planOf = (file: string, text: string) => resolvePlan(parseConfig(file, text), []).plan!;
const packedInfo = (file: string, text: string) => estimateStepTime(planOf(file, text)).problems.find((p) => p.code === 'packed-attention-timing');

const AXOLOTL = (extra: string) => `base_model: meta-llama/Llama-2-7b-hf\nsequence_len: 4096\nmicro_batch_size: 1\ngradient_accumulation_steps: 4\nbf16: true\n${extra}`;

describe('packed samples', () => {
  before(async () => { await initFormats(); });

  test('axolotl sample_packing with FlashAttention: varlen, and an info naming the upper bound', () => {
    const p = planOf('/ws/axolotl.yaml', AXOLOTL('sample_packing: true\nflash_attention: true\n'));
    assert.equal(p.training.packing, 'varlen');
    const info = packedInfo('/ws/axolotl.yaml', AXOLOTL('sample_packing: true\nflash_attention: true\n'));
    assert.ok(info && info.severity === 'info');
    assert.deepEqual(info.paths, ['training.packing']);
    assert.match(info.message, /upper bound/);
    assert.match(info.message, /4,096-token/);
  });

  test('no packing, packing off, or eager attention (every block computed): nothing said', () => {
    assert.equal(packedInfo('/ws/axolotl.yaml', AXOLOTL('flash_attention: true\n')), undefined);
    assert.equal(packedInfo('/ws/axolotl.yaml', AXOLOTL('sample_packing: false\nflash_attention: true\n')), undefined);
    assert.equal(planOf('/ws/axolotl.yaml', AXOLOTL('sample_packing: false\n')).training.packing, undefined);
    assert.equal(packedInfo('/ws/axolotl.yaml', AXOLOTL('sample_packing: true\nflash_attention: false\nattn_implementation: eager\n')), undefined);
  });

  test('a packing value that is not true or false is a warning at it', () => {
    const r = parseConfig('/ws/axolotl.yaml', AXOLOTL('sample_packing: sometimes\n'));
    assert.ok(r.diagnostics.some((d) => d.code === 'invalid-value' && d.message.includes('sample_packing')), JSON.stringify(r.diagnostics));
  });

  test('LLaMA-Factory: neat_packing is varlen; packing alone lets samples attend to each other', () => {
    const lf = (extra: string) => `model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: sft\nfinetuning_type: full\ncutoff_len: 4096\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 4\nbf16: true\nflash_attn: fa2\n${extra}`;
    assert.equal(planOf('/ws/llama2_full_sft.yaml', lf('packing: true\nneat_packing: true\n')).training.packing, 'varlen');
    assert.equal(planOf('/ws/llama2_full_sft.yaml', lf('packing: true\n')).training.packing, undefined);
  });

  test('torchtune dataset.packed', () => {
    const tt = (packed: string) => `model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\ntokenizer:\n  max_seq_len: 8192\ndataset:\n  _component_: torchtune.datasets.alpaca_dataset\n  packed: ${packed}\nbatch_size: 1\ngradient_accumulation_steps: 1\ndtype: bf16\n`;
    assert.equal(planOf('/ws/8B_full.yaml', tt('True')).training.packing, 'varlen');
    assert.equal(planOf('/ws/8B_full.yaml', tt('False')).training.packing, undefined);
    // An OmegaConf interpolation is resolved by torchtune at launch: not a wrong type, so no warning and nothing read.
    const r = parseConfig('/ws/8B_full.yaml', tt('${oc.env:PACKED}'));
    assert.equal(r.diagnostics.find((d) => d.code === 'invalid-value'), undefined, JSON.stringify(r.diagnostics));
    assert.equal(r.facts['training.packing'], undefined);
    // Anything else is a warning at the value.
    assert.ok(parseConfig('/ws/8B_full.yaml', tt('sometimes')).diagnostics.some((d) => d.code === 'invalid-value' && d.message.startsWith('dataset.packed should be true or false')));
  });

  test('NeMo packed_sequence', () => {
    const nemo = `trainer:\n  devices: 8\n  num_nodes: 1\nmodel:\n  micro_batch_size: 1\n  global_batch_size: 32\n  encoder_seq_length: 4096\n  num_layers: 4\n  hidden_size: 1024\n  ffn_hidden_size: 4096\n  num_attention_heads: 16\n  data:\n    train_ds:\n      packed_sequence: True\n`;
    assert.equal(planOf('/ws/conf/fine_tuning/squad.yaml', nemo).training.packing, 'varlen');
  });

  test('TRL: padding_free, or packing with packing_strategy bfd', () => {
    const trl = (extra: string) => `model_name_or_path: meta-llama/Llama-2-7b-hf\ndataset_name: trl-lib/Capybara\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 4\nmax_length: 4096\nbf16: true\nattn_implementation: flash_attention_2\n${extra}`;
    assert.equal(planOf('/ws/sft.yaml', trl('padding_free: true\n')).training.packing, 'varlen');
    assert.equal(planOf('/ws/sft.yaml', trl('packing: true\npacking_strategy: bfd\n')).training.packing, 'varlen');
    assert.equal(planOf('/ws/sft.yaml', trl('packing: true\npacking_strategy: wrapped\n')).training.packing, undefined);
  });
});

describe('packed samples (Megatron-Bridge)', () => {
  before(async () => { await initFormats(); });
  const bridge = (size: string) => `ConfigContainer:\n  model:\n    num_layers: 4\n    hidden_size: 1024\n    num_attention_heads: 16\n    seq_length: 4096\n  train:\n    micro_batch_size: 1\n    global_batch_size: 32\n  dataset:\n    packed_sequence_specs:\n      packed_sequence_size: ${size}\n`;

  test('a positive packed_sequence_size packs in THD (each sample attends within itself); -1 and 0 are off', () => {
    const r = parseConfig('/ws/llama3_70b_finetune_override.yaml', bridge('4096'));
    assert.equal(r.facts['training.packing']?.value, 'varlen', `${r.format}: ${JSON.stringify(r.facts['training.packing'])}`);
    assert.equal(r.facts['training.packing']?.source.range?.start.line, 11);
    for (const off of ['-1', '0']) assert.equal(parseConfig('/ws/llama3_70b_finetune_override.yaml', bridge(off)).facts['training.packing'], undefined, off);
  });
  test('shardlens.sampleTokens: samples of a stated mean length, each its own causal attention (S/l samples of l²/2 scores)', () => {
    const text = AXOLOTL('sample_packing: true\nflash_attention: true\n');
    const withSetting = resolvePlan(parseConfig('/ws/axolotl.yaml', text), [], { settings: { sampleTokens: 512 } }).plan!;
    assert.equal(withSetting.training.sampleTokens, 512);
    assert.equal(withSetting.sources['training.sampleTokens']?.kind, 'setting');
    const attention = (p: typeof withSetting) => estimateStepTime(p).operatorTerms.find((x) => x.name === 'attention')!.stepSeconds;
    const ratio = attention(withSetting) / attention(planOf('/ws/axolotl.yaml', text));
    // 4,096 / 512 = 8 samples of 512²/2 scores: an eighth of the FLOPs of one 4,096-token causal sequence; the kernel
    // runs less efficiently at 512 tokens than at 4,096, so the time falls by less than 8× (and by more than 2×).
    assert.ok(ratio >= 1 / 8 && ratio < 0.5, `${ratio}`);
    const info = estimateStepTime(withSetting).problems.find((p) => p.code === 'packed-attention-timing');
    assert.match(info!.message, /samples of 512 tokens \(shardlens\.sampleTokens\)/);
    assert.match(info!.message, /lower bound/);
  });

  test('shardlens.sampleTokens is ignored where samples are not packed with their own attention, or are longer than the sequence', () => {
    const plain = resolvePlan(parseConfig('/ws/axolotl.yaml', AXOLOTL('flash_attention: true\n')), [], { settings: { sampleTokens: 512 } }).plan!;
    assert.equal(plain.training.sampleTokens, undefined);
    const text = AXOLOTL('sample_packing: true\nflash_attention: true\n');
    const long = resolvePlan(parseConfig('/ws/axolotl.yaml', text), [], { settings: { sampleTokens: 8192 } }).plan!;
    const attention = (p: typeof long) => estimateStepTime(p).operatorTerms.find((x) => x.name === 'attention')!.stepSeconds;
    assert.equal(attention(long), attention(planOf('/ws/axolotl.yaml', text)));
  });
});
