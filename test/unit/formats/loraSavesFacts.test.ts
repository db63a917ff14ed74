/**
 * The LoRA facts what a block saves depends on (shared/memory/loraSaves.ts), as each front end states them: the
 * adapters' dropout (PEFT LoraConfig lora_dropout, 0.0 by default in Axolotl and LLaMA-Factory; torchtune's builders 0.0;
 * LitGPT's lora.py 0.05), LitGPT's fused q/k/v adapters, and bitsandbytes' quantized base linears: the 8-bit one saves
 * its input (bitsandbytes/autograd/_functions.py MatMul8bitLt: ctx.tensors = (CAt, subA, A), 0.42 to 0.50.2), the
 * 4-bit one only up to 0.43.1 (MatMul4Bit: ctx.tensors = (A, B); from 0.43.2 on (None, B)), so a 4-bit base is read
 * as a current release's, and its provenance says what older ones keep.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import type { FormatId } from '../../../shared/plan/facts';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { memoryHost, rangeOf } from './helpers';

const facts = (uri: string, text: string, format: FormatId) => parseConfig(uri, text, format).facts as Record<string, { value: unknown; source: { kind: string } } | undefined>;
const kindOf = (f: { value: unknown; source: { kind: string } } | undefined) => [f?.value, f?.source.kind];

describe('LoRA dropout, fused q/k/v and bitsandbytes base linears, per front end', () => {
  before(async () => { await initFormats(); });

  test('Axolotl: lora_dropout read, 0 by default; QLoRA as bitsandbytes ≥ 0.43.2 runs it (no base inputs), 8-bit keeps them', () => {
    const base = 'base_model: meta-llama/Llama-3.1-8B\nsequence_len: 2048\nmicro_batch_size: 1\nlora_r: 16\n';
    const lora = facts('file:///ws/a.yaml', `${base}adapter: lora\nlora_dropout: 0.05\n`, 'axolotl');
    assert.equal(lora['lora.dropout']?.value, 0.05);
    assert.equal(lora['lora.baseSavesInputs'], undefined);
    const qlora = facts('file:///ws/a.yaml', `${base}adapter: qlora\n`, 'axolotl');
    assert.equal(qlora['lora.dropout']?.value, 0);
    assert.deepEqual(kindOf(qlora['lora.baseSavesInputs']), [false, 'derived']);
    assert.deepEqual(kindOf(facts('file:///ws/a.yaml', `${base}adapter: lora\nload_in_8bit: true\n`, 'axolotl')['lora.baseSavesInputs']), [true, 'derived']);
  });

  test('LLaMA-Factory: bitsandbytes 8-bit keeps the base inputs, 4-bit as releases since 0.43.2 do not; hqq says nothing', () => {
    const base = 'model_name_or_path: meta-llama/Llama-3.1-8B\nstage: sft\nfinetuning_type: lora\nlora_dropout: 0.1\nquantization_bit: 4\n';
    const bnb = facts('file:///ws/lf.yaml', base, 'llamafactory');
    assert.equal(bnb['lora.dropout']?.value, 0.1);
    assert.deepEqual(kindOf(bnb['lora.baseSavesInputs']), [false, 'derived']);
    assert.deepEqual(kindOf(facts('file:///ws/lf.yaml', base.replace('quantization_bit: 4', 'quantization_bit: 8'), 'llamafactory')['lora.baseSavesInputs']), [true, 'derived']);
    assert.equal(facts('file:///ws/lf.yaml', `${base}quantization_method: hqq\n`, 'llamafactory')['lora.baseSavesInputs'], undefined);
  });

  test('torchtune: model.lora_dropout, 0 by default; torchao\'s NF4 linear keeps no input', () => {
    const text = 'model:\n  _component_: torchtune.models.llama3_1.qlora_llama3_1_8b\n  lora_attn_modules: [q_proj, v_proj]\n  lora_rank: 8\n';
    const f = facts('file:///ws/8B_qlora_single_device.yaml', text, 'torchtune');
    assert.equal(f['lora.dropout']?.value, 0);
    assert.equal(f['lora.baseSavesInputs'], undefined);
    assert.equal(facts('file:///ws/8B_qlora_single_device.yaml', text.replace('lora_rank: 8', 'lora_rank: 8\n  lora_dropout: 0.05'), 'torchtune')['lora.dropout']?.value, 0.05);
  });

  test('LitGPT: 0.05 by default, fused q/k/v adapters, bitsandbytes with quantize', () => {
    const text = 'checkpoint_dir: checkpoints/meta-llama/Meta-Llama-3.1-8B\ndevices: 1\nlora_r: 8\n';
    const f = facts('file:///ws/lora.yaml', text, 'litgpt');
    assert.equal(f['lora.dropout']?.value, 0.05);
    assert.equal(f['lora.fusedQkv']?.value, true);
    assert.deepEqual(kindOf(facts('file:///ws/lora.yaml', `${text}quantize: bnb.nf4\n`, 'litgpt')['lora.baseSavesInputs']), [false, 'derived']);
    // Lightning's "int8-training" mode is bnb.nn.Linear8bitLt (bitsandbytes.py mode_to_cls).
    assert.deepEqual(kindOf(facts('file:///ws/lora.yaml', `${text}quantize: bnb.int8-training\n`, 'litgpt')['lora.baseSavesInputs']), [true, 'derived']);
  });

  test('TRL / HF Trainer flags: --lora_dropout, and --load_in_4bit through bitsandbytes', () => {
    const text = '#!/bin/bash\naccelerate launch trl/scripts/sft.py --model_name_or_path meta-llama/Llama-3.1-8B --use_peft --lora_r 16 --lora_dropout 0.05 --load_in_4bit --per_device_train_batch_size 2\n';
    const f = facts('file:///ws/sft.sh', text, 'megatron-script');
    assert.equal(f['lora.dropout']?.value, 0.05);
    assert.deepEqual(kindOf(f['lora.baseSavesInputs']), [false, 'derived']);
    // The same flag in a TRL recipe YAML.
    const y = facts('file:///ws/sft.yaml', 'model_name_or_path: meta-llama/Llama-3.1-8B\nuse_peft: true\nload_in_4bit: true\n', 'hf-trainer');
    assert.deepEqual(kindOf(y['lora.baseSavesInputs']), [false, 'derived']);
  });

  test('TRL --use_peft without its settings takes ModelConfig\'s: rank 16, dropout 0.05, PEFT\'s q and v for a Llama', () => {
    // trl/trainer/model_config.py: lora_r 16, lora_dropout 0.05, lora_target_modules None (PEFT's per-model list,
    // q_proj and v_proj for Llama: peft/utils/constants.py TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING).
    const text = '#!/bin/bash\naccelerate launch trl/scripts/sft.py --model_name_or_path meta-llama/Llama-3.1-8B --use_peft --per_device_train_batch_size 2\n';
    const f = facts('file:///ws/sft.sh', text, 'megatron-script');
    assert.equal(f['lora.rank']?.value, 16);
    assert.equal(f['lora.dropout']?.value, 0.05);
    assert.equal(f['lora.targets']?.value, 'q,v');
    // Flags the file gives win, all-linear included.
    const given = facts('file:///ws/sft.sh', text.replace('--use_peft', '--use_peft --lora_r 64 --lora_dropout 0 --lora_target_modules all-linear'), 'megatron-script');
    assert.equal(given['lora.rank']?.value, 64);
    assert.equal(given['lora.dropout']?.value, 0);
    assert.equal(given['lora.targets']?.value, 'q,k,v,o,gate,up,down');
    // --use_peft false trains the full model: no LoRA facts at all.
    const off = facts('file:///ws/sft.sh', text.replace('--use_peft', '--use_peft false'), 'megatron-script');
    assert.equal(off['lora.rank'], undefined);
    assert.equal(off['lora.dropout'], undefined);
    // The same keys in a TRL recipe (YAML).
    const y = facts('file:///ws/config_lora.yaml', 'model_name_or_path: meta-llama/Llama-3.1-8B\nuse_peft: true\nper_device_train_batch_size: 2\n', 'hf-trainer');
    assert.deepEqual([y['lora.rank']?.value, y['lora.dropout']?.value, y['lora.targets']?.value], [16, 0.05, 'q,v']);
    // alignment-handbook's zephyr-7b-beta QLoRA recipe lists its targets: every projection of the block.
    const listed = facts('file:///ws/config_qlora.yaml', 'model_name_or_path: mistralai/Mistral-7B-v0.1\nuse_peft: true\nlora_r: 16\nlora_target_modules:\n- q_proj\n- k_proj\n- v_proj\n- o_proj\n- gate_proj\n- up_proj\n- down_proj\n', 'hf-trainer');
    assert.equal(listed['lora.targets']?.value, 'q,k,v,o,gate,up,down');
    assert.equal(facts('file:///ws/c.yaml', 'use_peft: true\nlora_target_modules: all-linear\n', 'hf-trainer')['lora.targets']?.value, 'q,k,v,o,gate,up,down');
  });

  test('LLaVA --lora_enable without its settings takes its TrainingArguments\': rank 64, dropout 0.05, every linear', () => {
    // llava/train/train.py TrainingArguments: lora_r 64, lora_dropout 0.05; find_all_linear_names targets every linear
    // of the language model.
    const text = '#!/bin/bash\ndeepspeed llava/train/train_mem.py --lora_enable True --model_name_or_path lmsys/vicuna-13b-v1.5 --per_device_train_batch_size 16 --model_max_length 2048\n';
    const f = facts('file:///ws/finetune_lora.sh', text, 'megatron-script');
    assert.deepEqual([f['lora.rank']?.value, f['lora.dropout']?.value, f['lora.targets']?.value], [64, 0.05, 'q,k,v,o,gate,up,down']);
    assert.equal(facts('file:///ws/finetune_lora.sh', text.replace('True', 'True --lora_r 128'), 'megatron-script')['lora.rank']?.value, 128);
  });

  test('ms-swift trains LoRA unless told otherwise: rank 8, dropout 0.05, all-linear; --tuner_type full and Megatron-SWIFT do not', () => {
    // swift/arguments/base_args/base_args.py: tuner_type defaults to lora; swift/arguments/tuner_args.py: lora_rank 8,
    // lora_dropout 0.05, target_modules ['all-linear']. swift/megatron/arguments/megatron_args.py: tuner_type full.
    const sft = '#!/bin/bash\nswift sft --model Qwen/Qwen2.5-7B-Instruct --per_device_train_batch_size 1 --max_length 2048 --torch_dtype bfloat16\n';
    const f = facts('file:///ws/sft.sh', sft, 'megatron-script');
    assert.deepEqual([f['lora.enabled']?.value, f['lora.rank']?.value, f['lora.dropout']?.value, f['lora.targets']?.value], [true, 8, 0.05, 'q,k,v,o,gate,up,down']);
    const full = facts('file:///ws/sft.sh', sft.replace('--per_device', '--tuner_type full --per_device'), 'megatron-script');
    assert.equal(full['lora.enabled'], undefined);
    assert.equal(full['lora.rank'], undefined);
    // ms-swift 2.x spelled it --sft_type.
    assert.equal(facts('file:///ws/sft.sh', sft.replace('--per_device', '--sft_type full --per_device'), 'megatron-script')['lora.rank'], undefined);
    // The same trainer run as a script under torchrun (ms-swift's examples/train/multi-node/torchrun).
    const cli = '#!/bin/bash\ntorchrun --nproc_per_node 4 swift/cli/sft.py --model Qwen/Qwen2.5-7B-Instruct --per_device_train_batch_size 1\n';
    assert.equal(facts('file:///ws/cli.sh', cli, 'megatron-script')['lora.rank']?.value, 8);
    // A list of targets after one flag (argparse nargs): every name is read.
    const listed = facts('file:///ws/sft.sh', sft.replace('--per_device', '--target_modules q_proj v_proj --per_device'), 'megatron-script');
    assert.equal(listed['lora.targets']?.value, 'q,v');
    const megatron = facts('file:///ws/m.sh', '#!/bin/bash\nmegatron sft --model Qwen/Qwen2.5-7B-Instruct --micro_batch_size 1 --max_length 2048\n', 'megatron-script');
    assert.equal(megatron['lora.enabled'], undefined);
  });

  test('TRL --lora_target_modules takes every name of its list', () => {
    const text = '#!/bin/bash\naccelerate launch trl/scripts/sft.py --model_name_or_path meta-llama/Llama-3.1-8B --use_peft --lora_target_modules q_proj k_proj v_proj o_proj --per_device_train_batch_size 2\n';
    assert.equal(facts('file:///ws/sft.sh', text, 'megatron-script')['lora.targets']?.value, 'q,k,v,o');
  });

  test('a target list written as a Python list in one word, and fused projections, are read', () => {
    const line = (targets: string) => `#!/bin/bash\naccelerate launch trl/scripts/sft.py --model_name_or_path meta-llama/Llama-3.1-8B --use_peft --lora_target_modules ${targets} --per_device_train_batch_size 2\n`;
    const targets = (t: string) => facts('file:///ws/sft.sh', line(t), 'megatron-script')['lora.targets']?.value;
    // alpaca-lora's README passes python-fire a bracketed list: --lora_target_modules '[q_proj,k_proj,v_proj,o_proj]'.
    assert.equal(targets("'[q_proj,k_proj,v_proj,o_proj]'"), 'q,k,v,o');
    // A Python literal in one quoted word (an argument parsed with ast.literal_eval): quotes and spaces inside.
    assert.equal(targets(`"['q_proj', 'v_proj']"`), 'q,v');
    // Falcon, BLOOM and GPT-NeoX fuse q, k and v into query_key_value (PEFT's per-model default for them); Phi-3 fuses
    // q, k, v into qkv_proj and gate and up into gate_up_proj (transformers modeling_phi3.py).
    assert.equal(targets('query_key_value'), 'q,k,v');
    assert.equal(targets('qkv_proj,o_proj,gate_up_proj,down_proj'), 'q,k,v,o,gate,up,down');
    // Names no plan projection matches leave the targets unstated (the plan's fallback, listed as an assumption).
    assert.equal(targets('"[]"'), undefined);
  });

  test('llamafactory-cli train with flags trains LoRA unless --finetuning_type says otherwise, with its defaults', () => {
    // src/llamafactory/hparams/finetuning_args.py: finetuning_type lora, lora_rank 8, lora_dropout 0.0, lora_target all.
    const text = '#!/bin/bash\nllamafactory-cli train --stage sft --do_train --model_name_or_path meta-llama/Meta-Llama-3-8B-Instruct --lora_target q_proj,v_proj --per_device_train_batch_size 1 --cutoff_len 1024 --bf16\n';
    const f = facts('file:///ws/lf.sh', text, 'megatron-script');
    assert.deepEqual([f['lora.enabled']?.value, f['lora.rank']?.value, f['lora.dropout']?.value, f['lora.targets']?.value], [true, 8, 0, 'q,v']);
    const all = facts('file:///ws/lf.sh', text.replace(' --lora_target q_proj,v_proj', ''), 'megatron-script');
    assert.equal(all['lora.targets']?.value, 'q,k,v,o,gate,up,down');
    assert.equal(facts('file:///ws/lf.sh', text.replace('--do_train', '--do_train --finetuning_type full'), 'megatron-script')['lora.rank'], undefined);
  });

  test('OpenRLHF: --lora_rank switches LoRA on over all-linear without dropout; --load_in_4bit is bitsandbytes QLoRA', () => {
    // openrlhf/cli/train_sft.py: --lora_rank 0, --target_modules all-linear, --lora_dropout 0, --load_in_4bit
    // (BitsAndBytesConfig; its 4-bit linear keeps no input from bitsandbytes 0.43.2 on).
    const text = '#!/bin/bash\ndeepspeed --module openrlhf.cli.train_sft --pretrain meta-llama/Meta-Llama-3-8B --micro_train_batch_size 2 --max_len 2048 --zero_stage 2 --bf16 --lora_rank 16\n';
    const f = facts('file:///ws/sft.sh', text, 'megatron-script');
    assert.deepEqual([f['lora.rank']?.value, f['lora.dropout']?.value, f['lora.targets']?.value, f['lora.baseDtype']], [16, 0, 'q,k,v,o,gate,up,down', undefined]);
    const q = facts('file:///ws/sft.sh', text.replace('--lora_rank 16', '--lora_rank 16 --target_modules q_proj v_proj --lora_dropout 0.1 --load_in_4bit'), 'megatron-script');
    assert.deepEqual([q['lora.targets']?.value, q['lora.dropout']?.value, q['lora.baseDtype']?.value, q['lora.baseSavesInputs']?.value], ['q,v', 0.1, 'nf4', false]);
    assert.equal(facts('file:///ws/sft.sh', text.replace('--lora_rank 16', '--lora_rank 0'), 'megatron-script')['lora.targets'], undefined);
  });

  test('DeepSpeed-Chat: --lora_dim adapts every linear of the blocks without dropout', () => {
    // dschat/utils/module/lora.py: convert_linear_layer_to_lora replaces every nn.Linear whose name holds
    // --lora_module_name (decoder.layers. by default), LinearLayer_LoRA(lora_droppout=0).
    const text = '#!/bin/bash\ndeepspeed main.py --model_name_or_path facebook/opt-1.3b --per_device_train_batch_size 8 --max_seq_len 512 --zero_stage 0 --lora_dim 128 --lora_module_name decoder.layers. --only_optimize_lora\n';
    const f = facts('file:///ws/run_1.3b_lora.sh', text, 'megatron-script');
    assert.deepEqual([f['lora.rank']?.value, f['lora.dropout']?.value, f['lora.targets']?.value], [128, 0, 'q,k,v,o,gate,up,down']);
    assert.equal(f['lora.fullModules'], undefined);
    // Without --only_optimize_lora the embeddings, norms, biases and head train too (only_optimize_lora_parameters is
    // what freezes them): the embedding and head are counted as trained in place (no copy), and an info at --lora_dim
    // says the norms and biases are not.
    const warned = (t: string) => parseConfig('file:///ws/run.sh', t, 'megatron-script').diagnostics.filter((d) => d.code === 'lora-trains-rest');
    assert.equal(warned(text).length, 0);
    const restText = text.replace(' --only_optimize_lora', '');
    const rest = warned(restText);
    assert.equal(rest.length, 1);
    assert.equal(rest[0]!.severity, 'info');
    assert.equal(rest[0]!.range.start.line, 1);
    assert.match(rest[0]!.message, /--lora_dim without --only_optimize_lora.*norms and biases .* are not/);
    const g = facts('file:///ws/run.sh', restText, 'megatron-script');
    assert.deepEqual([g['lora.fullModules']?.value, g['lora.fullModulesCopied']?.value], ['embed,head', false]);
  });

  test('PEFT modules_to_save, as each trainer names it, trains the embedding and head in full', () => {
    const got = (f: Record<string, { value: unknown } | undefined>) => [f['lora.fullModules']?.value, f['lora.fullModulesCopied']?.value];
    // Axolotl lora_modules_to_save (axolotl/utils/schemas/peft.py), a list under an adapter.
    const ax = 'base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nlora_r: 16\nlora_modules_to_save:\n  - embed_tokens\n  - lm_head\n';
    assert.deepEqual(got(facts('file:///ws/a.yml', ax, 'axolotl')), ['embed,head', true]);
    assert.equal(facts('file:///ws/a.yml', ax.replace('adapter: lora\n', ''), 'axolotl')['lora.fullModules'], undefined, 'no adapter: a full fine-tune, nothing to add');
    // LLaMA-Factory additional_target (comma list), and resize_vocab without it (src/llamafactory/model/adapter.py).
    const lf = 'model_name_or_path: meta-llama/Llama-3.1-8B\nstage: sft\nfinetuning_type: lora\n';
    assert.deepEqual(got(facts('file:///ws/lf.yaml', `${lf}additional_target: lm_head\n`, 'llamafactory')), ['head', true]);
    assert.deepEqual(got(facts('file:///ws/lf.yaml', `${lf}resize_vocab: true\n`, 'llamafactory')), ['embed,head', true]);
    assert.deepEqual(got(facts('file:///ws/lf.yaml', `${lf}resize_vocab: true\nadditional_target: embed_tokens\n`, 'llamafactory')), ['embed', true], 'additional_target wins over resize_vocab');
    assert.equal(facts('file:///ws/lf.yaml', `${lf.replace('lora', 'full')}resize_vocab: true\n`, 'llamafactory')['lora.fullModules'], undefined);
    // TRL ModelConfig lora_modules_to_save in a recipe and as a list flag; ms-swift --modules_to_save; LLaMA-Factory
    // --additional_target and a bare --resize_vocab.
    assert.deepEqual(got(facts('file:///ws/r.yaml', 'model_name_or_path: meta-llama/Llama-3.1-8B\nuse_peft: true\nlora_modules_to_save: [lm_head, embed_tokens]\n', 'hf-trainer')), ['head,embed', true]);
    const sh = (line: string) => facts('file:///ws/run.sh', `#!/bin/bash\n${line}\n`, 'megatron-script');
    assert.deepEqual(got(sh('accelerate launch trl/scripts/sft.py --model_name_or_path meta-llama/Llama-3.1-8B --use_peft --lora_modules_to_save lm_head embed_tokens --per_device_train_batch_size 2')), ['head,embed', true]);
    assert.deepEqual(got(sh('swift sft --model Qwen/Qwen2.5-7B-Instruct --modules_to_save embed_tokens lm_head --max_length 2048')), ['embed,head', true]);
    assert.deepEqual(got(sh('llamafactory-cli train --stage sft --model_name_or_path meta-llama/Llama-3.1-8B --additional_target embed_tokens,lm_head --cutoff_len 2048')), ['embed,head', true]);
    assert.deepEqual(got(sh('llamafactory-cli train --stage sft --model_name_or_path meta-llama/Llama-3.1-8B --resize_vocab --cutoff_len 2048')), ['embed,head', true]);
    assert.equal(sh('swift sft --model Qwen/Qwen2.5-7B-Instruct --tuner_type full --modules_to_save embed_tokens')['lora.fullModules'], undefined, 'a full fine-tune trains everything anyway');
  });

  test('modules_to_save names ShardLens does not size get an info at the key, and the rest still counts', () => {
    const text = 'model_name_or_path: meta-llama/Llama-3.1-8B\nstage: sft\nfinetuning_type: lora\nadditional_target: embed_tokens,norm\n';
    const r = parseConfig('file:///ws/lf.yaml', text, 'llamafactory');
    assert.equal((r.facts as Record<string, { value: unknown } | undefined>)['lora.fullModules']?.value, 'embed');
    const d = r.diagnostics.filter((x) => x.code === 'lora-module-unsized');
    assert.equal(d.length, 1);
    assert.equal(d[0]!.severity, 'info');
    assert.equal(d[0]!.range.start.line, 3);
    assert.match(d[0]!.message, /^`norm` trains in full beside the adapters/);
    // In a YAML list the info sits on the item.
    const ax = 'base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nlora_modules_to_save:\n  - embed_tokens\n  - lm_head\n  - score\n';
    const a = parseConfig('file:///ws/a.yml', ax, 'axolotl');
    const item = a.diagnostics.find((x) => x.code === 'lora-module-unsized');
    assert.deepEqual(item?.range, rangeOf(ax, 'score'));
    assert.equal((a.facts as Record<string, { value: unknown } | undefined>)['lora.fullModules']?.value, 'embed,head');
  });

  test('LoRA with no rank or targets anywhere is still LoRA, at PEFT\'s r = 8 on q, k, v, o, and the verdict says it assumed them', () => {
    // Axolotl's adapter: lora switches LoRA on whatever else the file says; PEFT LoraConfig's r defaults to 8.
    const text = 'base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nmicro_batch_size: 1\nsequence_len: 2048\nbf16: true\n';
    assert.equal(facts('file:///ws/lora.yml', text, 'axolotl')['lora.enabled']?.value, true);
    const r = loadConfigGraph('/ws/lora.yml', memoryHost({ '/ws/lora.yml': text }), { settings: { worldSize: 8 } }).resolved;
    assert.equal(r.plan?.lora?.rank, 8);
    assert.deepEqual(r.plan?.lora?.targets, ['q', 'k', 'v', 'o']);
    const paths = r.assumptions.map((a) => a.path);
    assert.ok(paths.includes('lora.rank') && paths.includes('lora.targets'), JSON.stringify(paths));
    // A rank and targets in the file leave nothing to assume.
    const stated = loadConfigGraph('/ws/lora.yml', memoryHost({ '/ws/lora.yml': `${text}lora_r: 16\nlora_target_linear: true\n` }), { settings: { worldSize: 8 } }).resolved;
    assert.ok(!stated.assumptions.some((a) => a.path.startsWith('lora.')), JSON.stringify(stated.assumptions));
  });

  test('FastChat train_lora.py always trains LoRA: rank 8, dropout 0.05 on q and v; --q_lora True is bitsandbytes NF4', () => {
    // fastchat/train/train_lora.py LoraArguments: lora_r 8, lora_dropout 0.05, lora_target_modules [q_proj, v_proj];
    // q_lora loads the model with BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4").
    const text = '#!/bin/bash\ndeepspeed fastchat/train/train_lora.py --model_name_or_path lmsys/vicuna-7b-v1.5 --per_device_train_batch_size 2 --model_max_length 2048 --q_lora False --deepspeed ds.json\n';
    const f = facts('file:///ws/train_lora.sh', text, 'megatron-script');
    assert.deepEqual([f['lora.enabled']?.value, f['lora.rank']?.value, f['lora.dropout']?.value, f['lora.targets']?.value, f['lora.baseDtype']], [true, 8, 0.05, 'q,v', undefined]);
    const q = facts('file:///ws/train_lora.sh', text.replace('--q_lora False', '--q_lora True'), 'megatron-script');
    assert.deepEqual([q['lora.baseDtype']?.value, q['lora.baseSavesInputs']?.value], ['nf4', false]);
    // FastChat's full trainer is not LoRA.
    assert.equal(facts('file:///ws/train.sh', text.replace('train_lora.py', 'train_mem.py'), 'megatron-script')['lora.enabled'], undefined);
  });

  test('LLaVA --bits 8 keeps the base inputs (MatMul8bitLt), --bits 4 as bitsandbytes ≥ 0.43.2 does not', () => {
    const text = '#!/bin/bash\ndeepspeed llava/train/train_mem.py --lora_enable True --bits 8 --model_name_or_path lmsys/vicuna-13b-v1.5 --per_device_train_batch_size 16 --model_max_length 2048\n';
    const eight = facts('file:///ws/finetune_lora.sh', text, 'megatron-script');
    assert.deepEqual([eight['lora.baseDtype']?.value, ...kindOf(eight['lora.baseSavesInputs'])], ['int8', true, 'derived']);
    const four = facts('file:///ws/finetune_lora.sh', text.replace('--bits 8', '--bits 4'), 'megatron-script');
    assert.deepEqual([four['lora.baseDtype']?.value, ...kindOf(four['lora.baseSavesInputs'])], ['nf4', false, 'derived']);
    // The default --bits 16 quantizes nothing.
    assert.equal(facts('file:///ws/finetune_lora.sh', text.replace('--bits 8', '--bits 16'), 'megatron-script')['lora.baseSavesInputs'], undefined);
  });

  test('A 4-bit bitsandbytes base says in its provenance which releases keep more', () => {
    const text = 'base_model: meta-llama/Llama-3.1-8B\nsequence_len: 2048\nmicro_batch_size: 1\nadapter: qlora\nlora_r: 16\nlora_target_linear: true\n';
    const r = loadConfigGraph('/ws/qlora.yml', memoryHost({ '/ws/qlora.yml': text }), { settings: { worldSize: 1 } }).resolved;
    const src = r.plan?.sources['lora.baseSavesInputs'];
    assert.ok(src && src.kind === 'derived' && /from bitsandbytes 0\.43\.2 on/.test(src.detail) && /0\.43\.1 and earlier/.test(src.detail), JSON.stringify(src));
    assert.equal(r.plan?.lora?.baseSavesInputs, false);
  });
});
