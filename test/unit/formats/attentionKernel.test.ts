/**
 * The attention kernel a fine-tuning config asks for, which decides whether a sliding window's masked blocks are
 * skipped (docs/time-model.md § Attention). Expected values from the trainers' source: LLaMA-Factory
 * hparams/model_args.py `flash_attn` (AttentionFunction auto, disabled, sdpa, fa2, fa3; extras/constants.py), TRL and
 * open-r1 `attn_implementation` / `model_init_kwargs.attn_implementation` (transformers: flash_attention_2,
 * flash_attention_3, flex_attention, sdpa, eager), axolotl `flash_attention` / `sdp_attention`; and the model code an
 * FSDP2 config runs (Axolotl, Accelerate, TRL load transformers' AutoModelForCausalLM; torchtitan its own modules).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';

describe('attention kernel settings', () => {
  before(async () => { await initFormats(); });
  const flash = (path: string, text: string) => {
    const f = parseConfig(path, text).facts['training.flashAttention'];
    return f ? `${f.value} ${f.source.kind}` : 'unset';
  };

  const cases: [string, string, string, string][] = [
    ['LLaMA-Factory fa2', '/ws/sft.yaml', 'model_name_or_path: google/gemma-3-12b-it\nstage: sft\nfinetuning_type: lora\nflash_attn: fa2\ncutoff_len: 8192\n', 'true explicit'],
    ['LLaMA-Factory disabled (eager)', '/ws/sft.yaml', 'model_name_or_path: google/gemma-3-12b-it\nstage: sft\nfinetuning_type: lora\nflash_attn: disabled\n', 'false explicit'],
    ['TRL model_init_kwargs', '/ws/config_sft.yaml', 'model_name_or_path: openai/gpt-oss-20b\nmodel_init_kwargs:\n  attn_implementation: flash_attention_2\nper_device_train_batch_size: 1\nmax_length: 8192\nlearning_rate: 2.0e-5\ngradient_checkpointing: true\nbf16: true\n', 'true explicit'],
    ['TRL sdpa', '/ws/config_sft.yaml', 'model_name_or_path: openai/gpt-oss-20b\nattn_implementation: sdpa\nper_device_train_batch_size: 1\nmax_length: 8192\nlearning_rate: 2.0e-5\ngradient_checkpointing: true\nbf16: true\n', 'unset'],
  ];
  for (const [name, path, text, want] of cases) test(name, () => assert.equal(flash(path, text).replace(/^true default$/, 'unset'), want));

  test('LLaMA-Factory: sdpa and auto leave transformers\' SDPA (no fact); a typo is a warning at the value', () => {
    for (const v of ['sdpa', 'auto']) assert.equal(parseConfig('/ws/sft.yaml', `model_name_or_path: x\nstage: sft\nflash_attn: ${v}\n`).facts['training.flashAttention']?.source.kind ?? 'unset', 'unset');
    const r = parseConfig('/ws/sft.yaml', 'model_name_or_path: x\nstage: sft\nflash_attn: fa4\n');
    assert.ok(r.diagnostics.some((d) => d.code === 'invalid-value' && d.paths.includes('training.flashAttention') && d.range.start.line === 2));
  });

  test('an FSDP2 config of a transformers trainer runs transformers\' model code; torchtitan its own', async () => {
    const axolotl = 'base_model: openai/gpt-oss-20b\nsequence_len: 4096\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\nbf16: true\nfsdp_version: 2\nfsdp_config:\n  offload_params: false\n  reshard_after_forward: true\n';
    const p = resolvePlan(parseConfig('/ws/ax.yaml', axolotl), []).plan;
    assert.equal(p?.engine, 'fsdp2');
    assert.equal(p?.training.modelImpl, 'hf');
    assert.equal(p?.sources['training.modelImpl']?.kind, 'derived');
    const titan = resolvePlan(parseConfig('/ws/t.toml', '[model]\nname = "llama3"\nflavor = "8B"\n[training]\nseq_len = 4096\nlocal_batch_size = 1\n[parallelism]\ndata_parallel_shard_degree = 8\n'), []).plan;
    assert.equal(titan?.engine, 'fsdp2');
    assert.equal(titan?.training.modelImpl, undefined, 'torchtitan keeps its own model code (modelImplOf: torchtitan)');
  });
});
