/** Shared readers for fine-tuning front-ends (Axolotl, LLaMA-Factory): precision, LoRA, FSDP lists, DeepSpeed refs. */
import type { FactSink, Loc } from './sink';
import type { ExpertsImpl, TextRange } from '../../shared/plan/types';
import { isAuto, isEmpty, locOf, readNum } from './read';
import { fsdpStrategyOf, loraTargetsOf, unsizedLoraTargets, moduleNames } from './maps';
import { toBool } from './text';
import { bitsandbytesSavesInput } from '../../shared/memory/loraSaves';
import { entry, type KEntry, type KNode } from './tree';
import { readDeepSpeed } from '../deepspeed/reader';
import peftDefaults from './peftDefaults.json';

/** `deepspeed:` as a path (reference) or an inline dict (read in place). */
export function readDeepSpeedKey(s: FactSink, root: KNode): void {
  const e = entry(root, 'deepspeed');
  if (!e || isEmpty(e)) return;
  if (e.value.kind === 'map') readDeepSpeed(s, e.value, 'deepspeed.');
  else if (e.value.kind === 'scalar') s.ref('deepspeed', String(e.value.value), e.value.range);
}

/** A model id or path (base_model, model_name_or_path …) → model.preset fact and a model reference. */
export function readModelRef(s: FactSink, root: KNode, ...keys: string[]): void {
  for (const k of keys) {
    const e = entry(root, k);
    if (!e || isEmpty(e) || e.value.kind !== 'scalar') continue;
    s.explicit('model.preset', String(e.value.value), locOf(e, k));
    s.ref('model', String(e.value.value), e.value.range);
    return;
  }
}

/** bf16/fp16/fp8 booleans (Axolotl also accepts bf16: auto). */
export function readPrecisionFlags(s: FactSink, root: KNode, fw: string): void {
  for (const [k, v] of [['fp8', 'fp8-mixed'], ['pure_bf16', 'bf16'], ['bf16', 'bf16-mixed'], ['fp16', 'fp16-mixed']] as const) {
    const e = entry(root, k);
    if (!e) continue;
    if (isAuto(e)) {
      s.explicit('training.precision', v, locOf(e, k));
      s.diag('precision-auto', 'info', `${k}: auto means ${k} when the GPU supports it; ShardLens assumes it does.`, e.value.range, ['training.precision']);
      return;
    }
    if (toBool(e.value.value) === true) { s.explicit('training.precision', v, locOf(e, k)); return; }
  }
  s.default('training.precision', 'fp32', `${fw}: no bf16/fp16 flag (fp32)`);
}

/**
 * `torch_compile` of the HF Trainer (TrainingArguments), Axolotl and LLaMA-Factory: the model is compiled, so Inductor
 * fuses each layer's elementwise chains; "auto" (Axolotl) compiles when the installed torch supports it, assumed here.
 */
export function readTorchCompile(s: FactSink, root: KNode, fw: string): void {
  const e = entry(root, 'torch_compile');
  if (!e || isEmpty(e)) return;
  if (isAuto(e)) {
    s.explicit('training.compile', true, locOf(e, 'torch_compile'));
    s.diag('compile-auto', 'info', `torch_compile: auto compiles the model when the installed torch supports it; ShardLens assumes it does (${fw}).`, e.value.range, ['training.compile']);
    return;
  }
  const on = toBool(e.value.value);
  if (on === undefined) s.diag('invalid-value', 'warning', 'torch_compile should be true, false or auto.', e.value.range, ['training.compile']);
  else s.explicit('training.compile', on, locOf(e, 'torch_compile'));
}

/**
 * transformers' `experts_implementation` (Axolotl passes it to from_pretrained; transformers integrations/moe.py):
 * grouped_mm (the default), eager (a Python loop over the experts) or batched_mm; kernels from the hub (deepgemm,
 * sonicmoe) are read as the default's grouped GEMMs.
 */
export function readExpertsImpl(s: FactSink, root: KNode, fw: string): void {
  const e = entry(root, 'experts_implementation');
  if (!e || isEmpty(e)) return;
  const v = typeof e.value.value === 'string' ? e.value.value : '';
  const known: Record<string, ExpertsImpl> = { grouped_mm: 'grouped_mm', eager: 'eager', batched_mm: 'batched_mm', deepgemm: 'grouped_mm', sonicmoe: 'grouped_mm' };
  if (known[v]) s.explicit('training.expertsImpl', known[v], locOf(e, 'experts_implementation'));
  else s.diag('invalid-value', 'warning', `experts_implementation should be one of ${Object.keys(known).join(', ')} (${fw} passes it to transformers).`, e.value.range, ['training.expertsImpl']);
}

/** LoRA / QLoRA settings. */
export function readLora(s: FactSink, root: KNode, o: { rankKey: string; targetKey: string; quantKey?: string; enabled: boolean; loc?: KNode }): void {
  if (!o.enabled) return;
  const r = entry(root, o.rankKey);
  if (r && typeof r.value.value === 'number') s.explicit('lora.rank', r.value.value, locOf(r, o.rankKey));
  readLoraTargets(s, root, o.targetKey);
  const lin = entry(root, 'lora_target_linear');
  if (lin && toBool(lin.value.value)) s.explicit('lora.targets', 'q,k,v,o,gate,up,down', locOf(lin, 'lora_target_linear'));
  // Each adapter's input dropout (PEFT LoraConfig lora_dropout): p > 0 saves a dropped copy and its mask per adapter.
  readNum(s, root, 'lora_dropout', 'lora.dropout', { min: 0, max: 1 });
}

/** LoRA target modules from words, each a PEFT name, "all-linear" or a comma-separated list of them, as lora.targets. */
export function loraTargetWords(s: FactSink, words: readonly string[], loc: Loc): void {
  const targets = loraTargetsOf(words);
  if (targets) s.explicit('lora.targets', targets, loc);
  // A module name ShardLens does not size is said, not dropped in silence: its adapters are small, but missing.
  const other = unsizedLoraTargets(words);
  if (other.length) {
    s.diag('lora-target-unsized', 'info', `${other.map((n) => `\`${n}\``).join(', ')}: LoRA ${other.length > 1 ? 'targets' : 'target'} ShardLens does not size; ${other.length > 1 ? 'their' : 'its'} adapters are not in the estimate (r·(in + out) parameters per layer each).`, loc.uri ? undefined : loc.valueRange ?? loc.keyRange, ['lora.targets']);
  }
}

/**
 * Module names PEFT's `modules_to_save` takes → the module ShardLens sizes: the input embedding (Llama, Mistral, Qwen
 * `embed_tokens`; GPT-2 `wte`; BLOOM and Falcon `word_embeddings`; GPT-NeoX `embed_in`; Meta's `tok_embeddings`) and
 * the output head (`lm_head`; GPT-NeoX `embed_out`; Meta's `output`).
 */
const FULL_MODULES: Readonly<Record<string, 'embed' | 'head'>> = {
  embed_tokens: 'embed', wte: 'embed', word_embeddings: 'embed', embed_in: 'embed', tok_embeddings: 'embed',
  lm_head: 'head', embed_out: 'head', output: 'head',
};

/**
 * Modules LoRA trains in full beside its adapters (PEFT LoraConfig modules_to_save: ModulesToSaveWrapper trains a
 * deep copy and freezes the original, peft/utils/other.py), from words (names, comma lists, a Python list in one word),
 * as lora.fullModules. A name ShardLens does not size (a norm, a classifier's `score`) gets an info at the key: its
 * gradient and optimizer states are not counted.
 */
export function loraFullModuleWords(s: FactSink, words: readonly string[], loc: Loc, rangeOfName?: (name: string) => TextRange | undefined): void {
  const names = moduleNames(words);
  const known = [...new Set(names.map((n) => (Object.hasOwn(FULL_MODULES, n) ? FULL_MODULES[n] : undefined)).filter((x): x is 'embed' | 'head' => !!x))];
  if (known.length) {
    s.explicit('lora.fullModules', known.join(','), loc);
    s.derived('lora.fullModulesCopied', true, 'PEFT modules_to_save: ModulesToSaveWrapper trains a copy of each module and freezes the original (peft/utils/other.py)', loc);
  }
  const other = names.filter((n) => !Object.hasOwn(FULL_MODULES, n));
  if (other.length) {
    s.diag('lora-module-unsized', 'info',
      `${other.map((n) => `\`${n}\``).join(', ')} ${other.length > 1 ? 'train' : 'trains'} in full beside the adapters; ShardLens sizes only the embedding and the output head trained this way, so ${other.length > 1 ? 'their' : 'its'} gradient and optimizer states are not in the estimate.`,
      loc.uri ? undefined : (other.length === 1 ? rangeOfName?.(other[0]) : undefined) ?? loc.valueRange ?? loc.keyRange, ['lora.fullModules']);
  }
}

/**
 * LLaMA-Factory's resize_vocab without additional_target: the input and output embeddings join PEFT's modules_to_save
 * ("Vocab has been resized, add … to trainable params", src/llamafactory/model/adapter.py).
 */
export function resizedVocabTrainsEmbeddings(s: FactSink, loc: Loc): void {
  const why = 'LLaMA-Factory resize_vocab without additional_target trains the input and output embeddings as PEFT modules_to_save (src/llamafactory/model/adapter.py)';
  s.derived('lora.fullModules', 'embed,head', why, loc);
  s.derived('lora.fullModulesCopied', true, why, loc);
}

/** The words of a YAML value that lists module names: a list's items, or a string's one word (commas split later). */
function entryWords(t: KEntry): string[] {
  return t.value.kind === 'list' ? (t.value.items ?? []).map((i) => String(i.value)) : typeof t.value.value === 'string' ? [t.value.value] : [];
}

/** PEFT modules_to_save under a YAML key (a list or a comma-separated string); true when the key is present. */
export function readLoraFullModules(s: FactSink, root: KNode, key: string): boolean {
  const t = entry(root, key);
  if (!t || isEmpty(t)) return false;
  const items = t.value.kind === 'list' ? t.value.items ?? [] : [];
  loraFullModuleWords(s, entryWords(t), locOf(t, key), (name) => items.find((i) => String(i.value).trim() === name)?.range);
  return true;
}

/** LoRA target modules as a list or a comma-separated string (PEFT names, "all-linear"); true when the key is present. */
export function readLoraTargets(s: FactSink, root: KNode, key: string): boolean {
  const t = entry(root, key);
  if (!t) return false;
  loraTargetWords(s, entryWords(t), locOf(t, key));
  return true;
}

/** The trainers whose argument classes default LoRA's settings (formats/common/peftDefaults.json). */
export type PeftSwitch = 'trl' | 'llava' | 'swift' | 'llamafactory' | 'openrlhf' | 'dschat' | 'fastchat' | 'megatron-bridge';

interface PeftDefault {
  readonly source: string;
  readonly rank?: readonly [number, string];
  readonly dropout: readonly [number, string];
  readonly targets: readonly [string, string];
}
const PEFT_DEFAULTS = peftDefaults as unknown as Readonly<Record<PeftSwitch, PeftDefault>>;

/**
 * LoRA settings a file leaves to its trainer's argument class, as that class defaults them (formats/common/
 * peftDefaults.json, each with its source): TRL's ModelConfig, LLaVA's and FastChat's argument classes, ms-swift's
 * TunerArguments, LLaMA-Factory's FinetuningArguments, OpenRLHF's and DeepSpeed-Chat's flags. Only where LoRA is on;
 * a value the file states wins (FactSink.default). `targetsGiven` keeps the targets unset where the file names them
 * in a form not read here.
 */
export function peftArgumentDefaults(s: FactSink, by: PeftSwitch | undefined, targetsGiven = false): void {
  if (!by || s.value('lora.enabled') !== true) return;
  const d = PEFT_DEFAULTS[by];
  if (d.rank) s.default('lora.rank', d.rank[0], `${d.source}: ${d.rank[1]}`);
  s.default('lora.dropout', d.dropout[0], `${d.source}: ${d.dropout[1]}`);
  if (!targetsGiven) s.default('lora.targets', d.targets[0], `${d.source}: ${d.targets[1]}`);
}

/**
 * Whether the frozen bitsandbytes linears of a `bits`-bit base keep their inputs for the backward
 * (shared/memory/loraSaves.ts `bitsandbytesSavesInput`): the 8-bit one does; the 4-bit one did up to 0.43.1, and a
 * 4-bit base is read as a current release's, its provenance naming the older releases' difference.
 */
export function bnbSavesInputs(s: FactSink, why: string, bits: 4 | 8): void {
  if (bits === 8) {
    s.derived('lora.baseSavesInputs', bitsandbytesSavesInput(8), `${why}: bitsandbytes' 8-bit linear keeps its input for the backward (bitsandbytes/autograd/_functions.py MatMul8bitLt: ctx.tensors = (CAt, subA, A))`);
  } else {
    s.derived('lora.baseSavesInputs', bitsandbytesSavesInput(4), `${why}: from bitsandbytes 0.43.2 on (July 2024) its 4-bit linear keeps only its packed weight for the backward (bitsandbytes/autograd/_functions.py MatMul4Bit: ctx.tensors = (None, B)); 0.43.1 and earlier also kept each quantized linear's input, more activation memory than shown`);
  }
}

/** The bitsandbytes flags of keys.json tables that set `lora.baseDtype` (TRL, LLaVA, FastChat, OpenRLHF). */
const BNB_FLAGS: ReadonlySet<string> = new Set(['--load_in_4bit', '--q_lora', '--bits']);

/** After a flag table: the saves of a base a bitsandbytes flag quantized (`bnbSavesInputs`). */
export function bnbFlagSaves(s: FactSink, who: string): void {
  const f = s.facts['lora.baseDtype'];
  if (!f?.key || !BNB_FLAGS.has(f.key) || (f.value !== 'nf4' && f.value !== 'int8')) return;
  bnbSavesInputs(s, `${who} ${f.key} quantizes with bitsandbytes`, f.value === 'int8' ? 8 : 4);
}

/** HF Trainer / Axolotl `fsdp:` list or string ("full_shard auto_wrap offload"). */
export function readFsdpList(s: FactSink, root: KNode): void {
  const e = entry(root, 'fsdp');
  if (!e || isEmpty(e)) return;
  const words = e.value.kind === 'list' ? (e.value.items ?? []).map((i) => String(i.value)) : String(e.value.value).split(/\s+/);
  const strat = words.map((w) => fsdpStrategyOf(w)).find(Boolean);
  if (!strat) return;
  s.explicit('parallel.sharding.style', 'fsdp', locOf(e, 'fsdp'));
  s.explicit('parallel.sharding.stage', strat.stage, locOf(e, 'fsdp'));
  s.explicit('parallel.sharding.fsdpStrategy', strat.strategy, locOf(e, 'fsdp'));
  if (words.includes('offload')) { s.explicit('parallel.sharding.offloadParams', 'cpu', locOf(e, 'fsdp')); s.explicit('parallel.sharding.offloadOptimizer', 'cpu', locOf(e, 'fsdp')); }
}

/**
 * transformers' `attn_implementation` as a trainer YAML gives it (axolotl): a FlashAttention or FlexAttention kernel
 * (`flash_attention_2`, `flash_attention_3`, `flex_attention`, hub kernels such as `kernels-community/vllm-flash-attn3`)
 * skips the blocks a sliding window masks, `eager` is unfused attention; `sdpa` (transformers' default) is left as the
 * default.
 */
export function readAttnImplementation(s: FactSink, root: KNode, key = 'attn_implementation'): void {
  const e = entry(root, key);
  const v = e && typeof e.value.value === 'string' ? e.value.value.toLowerCase() : undefined;
  if (!e || !v) return;
  if (/flash|flex/.test(v)) s.explicit('training.flashAttention', true, locOf(e, key));
  else if (v === 'eager') s.explicit('training.flashAttention', false, locOf(e, key));
}
