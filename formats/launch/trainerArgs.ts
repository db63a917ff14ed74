/**
 * The trainer a launch script runs and the dialect its arguments speak: Megatron-LM flags, Hugging Face Trainer
 * arguments (TRL, LLaVA, ms-swift `swift sft`, `llamafactory-cli train`), DeepSpeed-Chat, OpenRLHF, or Hydra
 * overrides (verl). Each flag dialect is a key table in data/formats/dialects/; the one that recognises most of the
 * arguments reads them.
 */
import dsChat from '../deepspeed-chat/keys.json';
import hfTrainer from '../hf-trainer/keys.json';
import openrlhf from '../openrlhf/keys.json';
import { applyTable, canonical, type DialectTable, type Found } from '../common/keyTable';
import type { FactSink } from '../common/sink';
import { hfTrainerAccumulation } from '../common/read';
import { bnbFlagSaves, loraFullModuleWords, loraTargetWords, peftArgumentDefaults, resizedVocabTrainsEmbeddings } from '../common/finetune';
import { toBool } from '../common/text';
import type { FlagArg, Invocation } from '../common/shell/commandLine';
import { MEGATRON_FLAGS } from '../megatron/args';
import { applyLiger, hfLigerUse, llamaFactoryLigerUse } from '../common/liger';

export type FlagDialect = 'megatron' | 'hf-trainer' | 'deepspeed-chat' | 'openrlhf';

export const FLAG_TABLES: Readonly<Record<Exclude<FlagDialect, 'megatron'>, DialectTable>> = {
  'hf-trainer': hfTrainer as DialectTable,
  'deepspeed-chat': dsChat as DialectTable,
  openrlhf: openrlhf as DialectTable,
};

/** Flags that name a dialect on their own (shared names such as --bf16 do not count). */
const TELLS: Record<FlagDialect, RegExp> = {
  megatron: /^--(tensor[-_]model[-_]parallel[-_]size|num[-_]layers|micro[-_]batch[-_]size|global[-_]batch[-_]size|seq[-_]length|pipeline[-_]model[-_]parallel[-_]size|num[-_]attention[-_]heads|hidden[-_]size)$/,
  'hf-trainer': /^--(per_device_train_batch_size|model_max_length|max_seq_length|cutoff_len|tuner_type|train_type|finetuning_type|lora_enable|deepspeed|deepspeed_stage)$/,
  'deepspeed-chat': /^--(zero_stage|actor_zero_stage|per_device_training_batch_size|max_seq_len|max_prompt_seq_len|lora_dim|actor_lora_dim)$/,
  openrlhf: /^--(micro_train_batch_size|train_batch_size|pretrain|prompt_max_len|ds\.|train\.|actor\.|data\.max_len|ring_attn_size|actor_num_gpus_per_node)/,
};

/** Which flag dialect the arguments of `inv` speak (the program name decides first). */
export function flagDialect(inv: Invocation, args: readonly FlagArg[]): FlagDialect | undefined {
  if (/^openrlhf\./.test(inv.program)) return 'openrlhf';
  if (inv.program.startsWith('megatron ')) return 'megatron';
  if (inv.program.startsWith('swift ') || inv.program.startsWith('llamafactory-cli')) return 'hf-trainer';
  const score = (d: FlagDialect) => args.filter((a) => TELLS[d].test(a.flag)).length;
  const order: FlagDialect[] = ['megatron', 'openrlhf', 'deepspeed-chat', 'hf-trainer'];
  let best: FlagDialect | undefined;
  let top = 0;
  for (const d of order) {
    const n = score(d);
    if (n > top) { best = d; top = n; }
  }
  if (best === 'hf-trainer' && args.some((a) => a.flag === '--zero_stage')) return 'deepspeed-chat';
  return best;
}

/** How many of `args` a dialect reads (used to pick the training command among several). */
export function recognised(args: readonly FlagArg[]): number {
  let n = 0;
  for (const a of args) {
    const megatron = MEGATRON_FLAGS[a.flag.replace(/_/g, '-')]?.plan !== undefined;
    if (megatron || Object.values(FLAG_TABLES).some((t) => canonical(t, a.flag) !== undefined)) n++;
  }
  return n;
}

/** Found values of flags by canonical key (a later flag wins, as argparse does). */
export function lookupFlags(table: DialectTable, args: readonly FlagArg[]): (key: string) => Found | undefined {
  const byKey = new Map<string, FlagArg>();
  for (const a of args) byKey.set(canonical(table, a.flag) ?? a.flag, a);
  return (key) => {
    const a = byKey.get(key);
    return a ? { value: a.value, keyRange: a.flagRange, valueRange: a.valueRange, unresolved: a.unresolved, uri: a.uri } : undefined;
  };
}

/**
 * Arguments of a script integrated through `deepspeed.add_config_arguments(parser)` (DeepSpeed's documented way:
 * `--deepspeed --deepspeed_config ds.json`, deepspeed/__init__.py), when no trainer dialect knows the script:
 * the JSON named by `--deepspeed_config` is a reference, and only the spellings that mean one thing in every trainer
 * are read (sequence length, checkpointing, accumulation, precision switches); a bare `--batch_size` is not, as
 * scripts use it for the micro or the global batch.
 */
const GENERIC = new Set(['--max_seq_length', '--max_length', '--model_max_length', '--block_size', '--gradient_checkpointing', '--gradient_accumulation_steps', '--bf16', '--fp16', '--model_name_or_path']);

/** True when the command is a DeepSpeed-integrated script: launched by `deepspeed` or given `--deepspeed_config`. */
export function isDeepSpeedScript(inv: Invocation, args: readonly FlagArg[]): boolean {
  return inv.launcher.some((w) => /(^|\/)deepspeed$/.test(w.t)) || args.some((a) => /^--deepspeed[_-]config$/.test(a.flag));
}

export function applyDeepSpeedScript(s: FactSink, args: readonly FlagArg[], cwd: string): void {
  const ds = args.filter((a) => /^--deepspeed[_-]config$/.test(a.flag) && a.value && !a.unresolved && /\.json$/i.test(a.value)).pop();
  if (ds?.value) s.ref('deepspeed', ds.value, ds.uri ? undefined : ds.valueRange, cwd);
  const table = FLAG_TABLES['hf-trainer'];
  const get = lookupFlags(table, args);
  applyTable(s, { keys: Object.fromEntries(Object.entries(table.keys).filter(([k]) => GENERIC.has(k))) }, get);
  s.derived('engine', 'deepspeed', 'a DeepSpeed-integrated script (deepspeed launcher or --deepspeed_config)');
  s.derived('parallel.sharding.style', 'deepspeed', 'a DeepSpeed-integrated script: ZeRO from its DeepSpeed config');
}

/** FSDP options of the HF Trainer's `--fsdp "full_shard auto_wrap offload"`. */
function fsdpOptions(s: FactSink, a: FlagArg | undefined): void {
  if (!a?.value || a.unresolved) return;
  const opts = a.value.toLowerCase().split(/[\s,]+/);
  const loc = { key: a.flag, keyRange: a.flagRange, valueRange: a.valueRange, uri: a.uri };
  if (opts.includes('fsdp2')) {
    // ms-swift `--fsdp fsdp2`: its bundled FSDP2 preset (fully_shard with reshard_after_forward).
    s.explicit('parallel.sharding.style', 'fsdp2', loc);
    s.explicit('parallel.sharding.stage', 3, loc);
    s.explicit('engine', 'fsdp2', loc);
    return;
  }
  const stage = opts.includes('shard_grad_op') ? 2 : opts.includes('no_shard') ? 0 : opts.some((o) => o === 'full_shard' || o === 'hybrid_shard') ? 3 : undefined;
  if (stage === undefined) return;
  s.explicit('parallel.sharding.style', 'fsdp', loc);
  s.explicit('parallel.sharding.stage', stage, loc);
  if (opts.includes('hybrid_shard')) s.explicit('parallel.sharding.fsdpStrategy', 'HYBRID_SHARD', loc);
  if (opts.includes('offload')) s.explicit('parallel.sharding.offloadParams', 'cpu', loc);
  s.explicit('engine', 'fsdp1', loc);
}

/**
 * A target-module list flag (TRL `--lora_target_modules`, ms-swift `--target_modules`: argparse nargs lists of PEFT
 * module names, or all-linear; LLaMA-Factory `--lora_target q_proj,v_proj` or all) as lora.targets; true when the
 * flag is given, read or not.
 */
function loraTargetFlag(s: FactSink, a: FlagArg | undefined): boolean {
  if (!a) return false;
  if (a.value === undefined || a.unresolved) return true;
  loraTargetWords(s, [a.value, ...(a.more ?? [])], { key: a.flag, keyRange: a.flagRange, valueRange: a.valueRange, uri: a.uri });
  return true;
}

/**
 * DeepSpeed-Chat's LoRA without --only_optimize_lora: convert_linear_layer_to_lora freezes the linears it adapts
 * (LinearLayer_LoRA sets weight.requires_grad = False), but only only_optimize_lora_parameters freezes the rest, so
 * the embeddings, norms, biases and the head train too (dschat/utils/module/lora.py; step1 main.py). The embedding and
 * head are counted as trained in full (the modules themselves, no copy); the norms and biases (0.004 % of Llama 2
 * 7B's parameters, about 0.012 % of OPT-66B's with its biases) are not, and an info at the flag says so.
 */
function dschatTrainableRest(s: FactSink, args: readonly FlagArg[]): void {
  if (s.value('lora.enabled') !== true || args.some((a) => /^--(actor_|critic_)?only_optimize_lora$/.test(a.flag))) return;
  const dim = args.filter((a) => /^--(actor_|critic_)?lora_dim$/.test(a.flag)).pop();
  if (!dim) return;
  const loc = { key: dim.flag, keyRange: dim.flagRange, valueRange: dim.valueRange, uri: dim.uri };
  const why = `${dim.flag} without --only_optimize_lora: DeepSpeed-Chat freezes only the linears it adapts (dschat/utils/module/lora.py), so the embedding and head train as well`;
  s.derived('lora.fullModules', 'embed,head', why, loc);
  s.derived('lora.fullModulesCopied', false, why, loc);
  s.diag('lora-trains-rest', 'info',
    `${dim.flag} without --only_optimize_lora: DeepSpeed-Chat freezes only the linears it adapts, so the embeddings, norms, biases and the output head train as well. The embedding and head are counted with their gradients and optimizer states; the norms and biases (well under 0.1 % of the parameters: 0.27 M of Llama 2 7B, about 8 M of OPT-66B) are not. Add --only_optimize_lora to train the adapters alone.`,
    dim.uri ? undefined : dim.flagRange, ['lora.fullModules']);
}

/**
 * The modules_to_save flag of an HF-Trainer-style launcher (a list after the flag, comma lists, a Python list) as
 * lora.fullModules; with `resizeVocab` (LLaMA-Factory), `--resize_vocab` without the flag trains both embeddings.
 */
function loraFullModuleFlags(s: FactSink, args: readonly FlagArg[], flag: string, resizeVocab: boolean): void {
  const a = args.filter((x) => x.flag === flag).pop();
  if (a) {
    if (a.value !== undefined && !a.unresolved) loraFullModuleWords(s, [a.value, ...(a.more ?? [])], { key: a.flag, keyRange: a.flagRange, valueRange: a.valueRange, uri: a.uri });
    return;
  }
  const r = resizeVocab ? args.filter((x) => x.flag === '--resize_vocab').pop() : undefined;
  if (r && !r.unresolved && (r.value === undefined || toBool(r.value) !== false)) resizedVocabTrainsEmbeddings(s, { key: r.flag, keyRange: r.flagRange, valueRange: r.valueRange, uri: r.uri });
}

/**
 * ms-swift's trainers (`swift sft`, `swift pt`, `swift rlhf`, or their swift/cli/*.py under torchrun) train LoRA unless
 * told otherwise: BaseArguments tuner_type defaults to lora (swift/arguments/base_args/base_args.py; train_type before
 * 2026, sft_type before that). Megatron-SWIFT (`megatron sft`) defaults to full and speaks the Megatron dialect.
 */
const SWIFT_TRAINER = /^swift (sft|pt|rlhf)\b|(^|\/)swift\/cli\/(sft|pt|rlhf)\.py$/;

/** FastChat's LoRA trainer, which always trains LoRA (fastchat/train/train_lora.py, train_lora_t5.py). */
const FASTCHAT_LORA = /(^|\/)fastchat\/train\/train_lora(_t5)?\.py$/;

/** LLaMA-Factory's trainer given flags: finetuning_type defaults to lora (src/llamafactory/hparams/finetuning_args.py). */
const LLAMAFACTORY_TRAINER = /^llamafactory-cli train\b|(^|\/)src\/train\.py$|(^|\/)llamafactory\/launcher\.py$/;

/**
 * Liger-Kernel as flags (formats/common/liger.ts): TrainingArguments --use_liger_kernel (with --liger_kernel_config /
 * --liger_kernel_kwargs as JSON), LLaMA-Factory's --enable_liger_kernel with its --stage (sft when absent).
 */
function ligerFlags(s: FactSink, args: readonly FlagArg[]): void {
  const last = (f: string) => args.filter((a) => a.flag === f && !a.unresolved).pop();
  const on = (f: string) => {
    const a = last(f);
    return a && (a.value === undefined || toBool(a.value) === true) ? a : undefined;
  };
  const lf = on('--enable_liger_kernel');
  const a = lf ?? on('--use_liger_kernel');
  if (!a) return;
  const loc = { key: a.flag, keyRange: a.flagRange, valueRange: a.valueRange, uri: a.uri };
  if (lf) {
    applyLiger(s, loc, 'LLaMA-Factory', llamaFactoryLigerUse((last('--stage')?.value ?? 'sft').trim().toLowerCase()));
    return;
  }
  // The keyword arguments as JSON text: a kernel set false is off.
  const cfg = last('--liger_kernel_kwargs') ?? last('--liger_kernel_config');
  const off = (k: string) => new RegExp(`["']?${k}["']?\\s*:\\s*(false|False|0)\\b`).test(cfg?.value ?? '');
  applyLiger(s, loc, 'The HF Trainer', hfLigerUse(off, cfg?.flag ?? '--liger_kernel_config'));
}

/** Reads the arguments of a flag dialect (not Megatron) and records the engine they imply. */
export function applyFlagDialect(s: FactSink, dialect: Exclude<FlagDialect, 'megatron'>, args: readonly FlagArg[], cwd: string, program = ''): void {
  const table = FLAG_TABLES[dialect];
  const ds = args.filter((a) => a.flag === '--deepspeed' && a.value && !a.unresolved && /\.json$/i.test(a.value)).pop();
  if (ds?.value) s.ref('deepspeed', ds.value, ds.uri ? undefined : ds.valueRange, cwd);
  applyTable(s, table, lookupFlags(table, args));
  bnbFlagSaves(s, dialect === 'openrlhf' ? 'OpenRLHF' : 'The trainer');
  if (dialect === 'hf-trainer') ligerFlags(s, args);
  if (dialect === 'hf-trainer') {
    const ac = args.filter((a) => a.flag === '--accelerator_config' && a.value !== undefined && !a.unresolved).pop();
    hfTrainerAccumulation(s, 'HF Trainer', undefined, ac ? { value: ac.value, loc: { key: ac.flag, keyRange: ac.flagRange, valueRange: ac.valueRange, uri: ac.uri } } : undefined);
  }
  if (s.value('lora.enabled') === false) { delete s.facts['lora.rank']; delete s.facts['lora.enabled']; }
  if (dialect === 'hf-trainer') {
    const has = (f: string) => args.some((a) => a.flag === f);
    const swift = SWIFT_TRAINER.test(program);
    const lf = LLAMAFACTORY_TRAINER.test(program) && has('--stage');
    if (swift && !['--tuner_type', '--train_type', '--sft_type'].some(has)) s.default('lora.enabled', true, 'ms-swift BaseArguments default tuner_type lora (swift/arguments/base_args/base_args.py)');
    if (lf && !has('--finetuning_type')) s.default('lora.enabled', true, 'LLaMA-Factory FinetuningArguments default finetuning_type lora (src/llamafactory/hparams/finetuning_args.py)');
    const fastchat = FASTCHAT_LORA.test(program);
    if (fastchat) s.default('lora.enabled', true, 'fastchat/train/train_lora.py trains LoRA adapters (get_peft_model)');
    const listFlag = swift ? '--target_modules' : lf ? '--lora_target' : '--lora_target_modules';
    const named = s.value('lora.enabled') === true && loraTargetFlag(s, args.filter((a) => a.flag === listFlag).pop());
    peftArgumentDefaults(s, swift ? 'swift' : lf ? 'llamafactory' : fastchat ? 'fastchat' : has('--use_peft') ? 'trl' : has('--lora_enable') ? 'llava' : undefined, named);
    // PEFT modules_to_save as each trainer names it: ms-swift TunerArguments modules_to_save, LLaMA-Factory
    // additional_target (and resize_vocab without it), TRL ModelConfig lora_modules_to_save.
    if (s.value('lora.enabled') === true) loraFullModuleFlags(s, args, swift ? '--modules_to_save' : lf ? '--additional_target' : '--lora_modules_to_save', lf);
  }
  if (dialect === 'deepspeed-chat') {
    peftArgumentDefaults(s, 'dschat');
    dschatTrainableRest(s, args);
  }
  if (dialect === 'openrlhf') peftArgumentDefaults(s, 'openrlhf', s.value('lora.enabled') === true && loraTargetFlag(s, args.filter((a) => a.flag === '--target_modules').pop()));
  fsdpOptions(s, args.filter((a) => a.flag === '--fsdp').pop());
  const deepspeed = dialect !== 'hf-trainer' || !!ds || s.value('parallel.sharding.style') === 'deepspeed';
  if (!s.has('engine')) s.derived('engine', deepspeed ? 'deepspeed' : 'ddp', deepspeed ? `${dialect} runs the DeepSpeed engine` : 'HF Trainer without --deepspeed or --fsdp: DDP');
  if (dialect === 'deepspeed-chat') s.default('training.precision', 'fp16-mixed', 'DeepSpeed-Chat default --dtype fp16 (dschat/utils/ds_utils.py)');
  if (deepspeed && !s.has('parallel.sharding.style') && dialect !== 'hf-trainer') s.derived('parallel.sharding.style', 'deepspeed', `${dialect} runs the DeepSpeed engine`);
}
