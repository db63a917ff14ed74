/** Megatron-LM command-line flags (from scripts or flag-keyed YAML) → facts, then Megatron's defaults. */
import table from './keys.json';
import type { FactValue } from '../../shared/plan/facts';
import type { FlagArg } from '../common/shell/commandLine';
import type { FactSink, Loc } from '../common/sink';
import { here, locOfArg } from './argLoc';
import { gatedDeltaNet, latentAttention, mambaHybrid, moeLayerPattern, multiTokenPrediction, windowAttention } from './modelArgs';
import { accountForSplit, deepspeedLaunch, megatronDeepSpeed, pipelineLayout } from './pipelineArgs';
import { toBool, toNumber } from '../common/text';
import { lookupTable } from '../../shared/lookup';
import type { PlanPath } from '../../shared/plan/paths';
import { vocabOfTokenizer } from '../common/tokenizerVocab';
import { keepBlockRecomputeLayers } from '../common/recomputeLayers';
import { readRecomputeModules } from './recomputeModules';

export type { FlagArg } from '../common/shell/commandLine';

interface FlagSpec { readonly type: string; readonly plan?: PlanPath; readonly value?: FactValue; readonly enum?: readonly string[]; readonly default?: unknown; readonly description: string }
export const MEGATRON_FLAGS: Readonly<Record<string, FlagSpec>> = lookupTable(table.keys as Record<string, FlagSpec>);
const ARGS = 'megatron/training/arguments.py';

function mapped(flag: string, raw: string): FactValue | undefined {
  const v = raw.trim();
  switch (flag) {
    case '--position-embedding-type':
      return ({ learned_absolute: 'learned', rope: 'rotary', yarn: 'rotary', mrope: 'rotary', none: 'none', relative: 'none', alibi: 'alibi' } as Record<string, string>)[v];
    case '--normalization': return v.toLowerCase() === 'rmsnorm' ? 'rmsnorm' : v.toLowerCase() === 'layernorm' ? 'layernorm' : undefined;
    case '--recompute-granularity': return v === 'full' || v === 'selective' ? v : undefined;
    case '--activations-checkpoint-method': return v === 'uniform' || v === 'block' ? 'full' : undefined;
    case '--fp8-format': return v === 'e4m3' || v === 'hybrid' ? 'fp8-mixed' : undefined;
    case '--fp8-recipe': return ['delayed', 'tensorwise', 'mxfp8', 'blockwise'].includes(v) ? v : undefined;
    case '--optimizer': return ({ adam: 'adamw', adamw: 'adamw', sgd: 'sgd-momentum', lion: 'lion', muon: 'muon' } as Record<string, string>)[v.toLowerCase()];
    case '--attention-backend': return v === 'flash' ? true : v === 'unfused' || v === 'local' ? false : undefined;
    // flex means DeepEP unless --moe-flex-dispatcher-backend hybridep (applySpecial); alltoall_seq is an all-to-all.
    case '--moe-token-dispatcher-type': return ({ allgather: 'allgather', alltoall: 'alltoall', alltoall_seq: 'alltoall', flex: 'deepep' } as Record<string, string>)[v];
    // A softmax with an offset in its denominator, learned or fixed, is an attention sink (transformer_config.py).
    case '--softmax-type': return v === 'learnable' || v === 'off-by-one' ? true : v === 'vanilla' ? false : undefined;
    case '--cuda-graph-impl': return ['none', 'local', 'transformer_engine', 'full_iteration'].includes(v) ? v : undefined;
    case '--moe-layer-freq': { const n = toNumber(v); return n !== undefined && Number.isInteger(n) && n >= 1 ? n : undefined; }
    default: return undefined;
  }
}

/**
 * NVFP4 training (`--fp4-format e2m1`, megatron/training/arguments.py; Transformer Engine's NVFP4 recipe on Blackwell)
 * runs the linears' GEMMs on FP4 tensor cores at twice the FP8 rate (NVIDIA B200: 9 PFLOPS FP4 dense against 4.5 FP8).
 * ShardLens has no FP4 GEMM, cast or scaling-factor term: the plan keeps the precision the other flags give and the
 * file is told, at the flag, that the step time is likely too long.
 */
function fp4Training(s: FactSink, fp4: FlagArg | undefined, fp8: boolean): void {
  if (!fp4) return;
  const as = fp8 ? 'FP8' : '16-bit';
  s.diag('megatron-fp4-timing', 'warning', `${fp4.flag}: NVFP4 GEMMs are not modelled; the linears are timed at ${as} rates (FP4 tensor cores run about twice FP8 on Blackwell), so the step time is likely too long, and memory counts ${as} weight copies.`, here(fp4, fp4.flagRange), ['training.precision']);
}

/**
 * Transformer Engine's FP8 fused attention (`--fp8-dot-product-attention`, megatron/training/arguments.py; the
 * Megatron-Bridge field `fp8_dot_product_attention`): ShardLens has no FP8 attention curve, so attention stays timed at
 * 16-bit rates and the file is told, at the flag, that the step time is likely too long.
 */
function fp8Attention(s: FactSink, flag: FlagArg | undefined): void {
  if (!flag || toBool(flag.value ?? 'true') === false) return;
  s.diag('megatron-fp8-attention-timing', 'warning', `${flag.flag}: FP8 fused attention is not modelled; attention is timed at 16-bit rates, so the step time is likely too long.`, here(flag, flag.flagRange), ['training.flashAttention']);
}

/**
 * The deprecated `--cuda-graph-scope full_iteration` (with `--enable-cuda-graph` or without an implementation) is the
 * full-iteration graph: Megatron migrates it to `--cuda-graph-impl full_iteration`
 * (megatron/core/transformer/transformer_config.py `__post_init__`, "deprecated values full_iteration").
 */
function cudaGraphScope(s: FactSink, seen: Map<string, FlagArg>): void {
  const scope = seen.get('--cuda-graph-scope');
  if (!scope?.value || scope.unresolved || !/^["']?full_iteration["']?$/.test(scope.value.trim())) return;
  const impl = s.value('training.cudaGraph');
  if (impl === undefined || impl === 'local') s.explicit('training.cudaGraph', 'full_iteration', locOfArg(scope));
}

/**
 * Drop and pad to capacity: `--moe-pad-expert-input-to-capacity` with `--moe-expert-capacity-factor c` makes every
 * expert run exactly ⌈T·k/E · c⌉ tokens (megatron/core/transformer/moe/token_dispatcher.py `drop_and_pad`,
 * moe_utils.py `get_capacity`), read as model.moe.capacityFactor. Megatron refuses the flag without a factor
 * (transformer_config.py `__post_init__`), so the flag alone is a warning and the plan stays dropless; a factor alone only drops tokens past capacity, which balanced
 * routing never reaches, and changes nothing here.
 */
function moeCapacity(s: FactSink, seen: Map<string, FlagArg>): void {
  const pad = seen.get('--moe-pad-expert-input-to-capacity');
  if (!pad || toBool(pad.value ?? 'true') === false) return;
  const cf = seen.get('--moe-expert-capacity-factor');
  const c = cf?.value !== undefined && !cf.unresolved ? toNumber(cf.value) : undefined;
  if (cf && c !== undefined && c > 0 && c <= 1000) s.explicit('model.moe.capacityFactor', c, locOfArg(cf));
  else if (cf && !cf.unresolved) s.diag('invalid-value', 'warning', `${cf.flag} expects a positive number (got "${cf.value ?? ''}"); the experts are timed dropless.`, here(cf, cf.valueRange ?? cf.flagRange), ['model.moe.capacityFactor']);
  else if (!cf) s.diag('megatron-pad-without-capacity', 'warning', `${pad.flag} needs --moe-expert-capacity-factor: Megatron stops with an error without one (transformer_config.py); the experts are timed dropless.`, here(pad, pad.flagRange), ['model.moe.capacityFactor']);
}

/**
 * The vocabulary the tokenizer gives when no --vocab-size is written (Megatron sizes the embedding from
 * `tokenizer.vocab_size`, megatron/training/tokenizer/tokenizer.py): GPT-2 BPE files, Llama2Tokenizer, or a Hub id of a
 * bundled model in --tokenizer-model (Megatron-DeepSpeed: --tokenizer-name-or-path), formats/common/tokenizerVocab.ts.
 */
function tokenizerVocab(s: FactSink, seen: Map<string, FlagArg>): void {
  if (s.has('model.vocabSize')) return;
  const arg = (f: string) => { const a = seen.get(f); return a && !a.unresolved ? a.value : undefined; };
  // pretrain_gpt.py passes args_defaults={'tokenizer_type': 'GPT2BPETokenizer'}: a BPE vocabulary and merge file with no
  // --tokenizer-type is GPT-2's, whatever the files are called.
  const bpe = !seen.has('--tokenizer-type') && seen.has('--vocab-file') && seen.has('--merge-file');
  const v = vocabOfTokenizer({ type: arg('--tokenizer-type') ?? (bpe ? 'GPT2BPETokenizer' : undefined), model: arg('--tokenizer-model') ?? arg('--tokenizer-name-or-path'), vocabFile: arg('--vocab-file') });
  const flag = { type: [bpe ? '--vocab-file' : '--tokenizer-type'], model: ['--tokenizer-model', '--tokenizer-name-or-path'], vocabFile: ['--vocab-file'] };
  const at = v ? flag[v.from].map((f) => seen.get(f)).find((a) => a) : undefined;
  const why = bpe && v ? `${v.why}: no --tokenizer-type with --vocab-file and --merge-file is pretrain_gpt.py's default GPT2BPETokenizer (args_defaults)` : v?.why;
  if (v && at && why) s.derived('model.vocabSize', v.vocab, why, locOfArg(at));
}

/** Flags whose values applySpecial reads (not through `mapped`). */
const SPECIAL_VALUES: ReadonlySet<string> = new Set(['--moe-flex-dispatcher-backend']);

/** Applies flags in order (a later flag wins, as argparse does) and then Megatron's defaults. */
export function applyMegatronArgs(s: FactSink, args: readonly FlagArg[], o: { modelDefaults?: boolean; defaults?: boolean } = {}): void {
  const seen = new Map<string, FlagArg>();
  for (const a of args) {
    const flag = a.flag.replace(/_/g, '-').replace(/^--deepspeed-config$/, '--deepspeed_config');
    const key = a.flag.startsWith('--deepspeed_config') ? '--deepspeed_config' : flag;
    const spec = MEGATRON_FLAGS[key];
    // A switch set false (a YAML field `use_megatron_fsdp: false`) is off, as if never given: the readers below that
    // look a switch up by name must not see it.
    const off = a.value !== undefined && (spec?.type === 'flag' ? toBool(a.value) === false : !spec && /^false$/i.test(a.value));
    if (off) seen.delete(key); else seen.set(key, a);
    const loc: Loc = { key: a.spelled ?? a.flag, keyRange: a.flagRange, valueRange: a.valueRange ?? a.flagRange, uri: a.uri };
    if (key === '--deepspeed_config' || key === '--deepspeed-config') {
      if (a.value && !a.unresolved) s.ref('deepspeed', a.value, a.valueRange);
      continue;
    }
    if (!spec || !spec.plan) continue;
    if (spec.type === 'flag') {
      const on = a.value === undefined ? true : toBool(a.value);
      if (on === true && spec.value !== undefined) s.explicit(spec.plan, spec.value, loc);
      continue;
    }
    if (a.value === undefined) { s.diag('megatron-missing-value', 'warning', `${a.flag} needs a value.`, here(a, a.flagRange), [spec.plan]); continue; }
    if (a.unresolved) { s.unresolved('megatron-unresolved', a.flag, `${a.flag} uses a variable ShardLens could not evaluate ("${a.value}").`, here(a, a.valueRange ?? a.flagRange), [spec.plan]); continue; }
    if (spec.type === 'int' || spec.type === 'float') {
      const n = toNumber(a.value);
      if (n === undefined || (spec.type === 'int' && !Number.isInteger(n)) || n < 0) {
        s.diag('invalid-value', 'warning', `${a.flag} expects a ${spec.type === 'int' ? 'whole number' : 'number'} (got "${a.value}").`, here(a, a.valueRange ?? a.flagRange), [spec.plan]);
        continue;
      }
      s.explicit(spec.plan, n, loc);
      continue;
    }
    const m = mapped(key, a.value);
    if (m !== undefined) s.explicit(spec.plan, m, loc);
    else if (spec.enum && !spec.enum.includes(a.value)) s.diag('invalid-value', 'warning', `${a.flag} should be one of ${spec.enum.join(', ')}.`, here(a, a.valueRange ?? a.flagRange), [spec.plan]);
    // A value Megatron takes that ShardLens does not model (`--optimizer soap`) is said, never replaced silently by the
    // default (the flex dispatcher's backend is read with its dispatcher, in applySpecial).
    else if (spec.enum && !SPECIAL_VALUES.has(key)) s.diag('unmodelled-value', 'warning', `${a.flag} ${a.value} is a Megatron-LM choice ShardLens does not model: the estimate uses Megatron's default instead (${spec.default ?? 'see the hover'}).`, here(a, a.valueRange ?? a.flagRange), [spec.plan]);
  }
  applySpecial(s, seen);
  // A recipe launch (Megatron-Bridge overrides) takes what it does not override from the recipe, not from Megatron's CLI defaults.
  if (o.defaults !== false) applyDefaults(s, o.modelDefaults !== false);
}

/** Flags whose meaning depends on other flags. */
function applySpecial(s: FactSink, seen: Map<string, FlagArg>): void {
  const gqa = seen.get('--group-query-attention');
  const groups = seen.get('--num-query-groups');
  if (groups && !gqa) {
    delete s.facts['model.kvHeads'];
    s.diag('megatron-groups-without-gqa', 'warning', '--num-query-groups is ignored without --group-query-attention (KV heads = attention heads).', here(groups, groups.flagRange), ['model.kvHeads']);
  }
  latentAttention(s, seen);
  moeLayerPattern(s, seen);
  windowAttention(s, seen);
  gatedDeltaNet(s, seen);
  mambaHybrid(s, seen);
  readRecomputeModules(s, seen, (a) => here(a, a.valueRange ?? a.flagRange));
  const nobias = seen.get('--disable-bias-linear');
  if (nobias) {
    if (!seen.has('--add-qkv-bias')) s.explicit('model.attnBias', 'none', locOfArg(nobias));
    s.explicit('model.mlpBias', false, locOfArg(nobias));
  }
  const fsdp = seen.get('--use-megatron-fsdp');
  const torchFsdp = seen.get('--use-torch-fsdp2');
  const distopt = seen.get('--use-distributed-optimizer');
  if (torchFsdp && toBool(torchFsdp.value ?? 'true') !== false) {
    // torch FSDP2 shards parameters, gradients and optimizer states (fully_shard; TorchFullyShardedDataParallel).
    s.explicit('parallel.sharding.style', 'fsdp2', locOfArg(torchFsdp));
    s.explicit('parallel.sharding.stage', 3, locOfArg(torchFsdp));
  } else if (fsdp) {
    const strat = seen.get('--data-parallel-sharding-strategy');
    const stage = ({ no_shard: 0, optim: 1, optim_grads: 2, optim_grads_params: 3 } as Record<string, number>)[strat?.value ?? 'optim_grads_params'];
    s.explicit('parallel.sharding.style', 'fsdp', locOfArg(fsdp));
    if (stage !== undefined) s.explicit('parallel.sharding.stage', stage, locOfArg(strat ?? fsdp));
  } else if (distopt) {
    s.explicit('parallel.sharding.style', 'megatron-distopt', locOfArg(distopt));
    s.explicit('parallel.sharding.stage', 1, locOfArg(distopt));
  } else if (deepspeedLaunch(seen)) {
    s.derived('parallel.sharding.style', 'deepspeed', 'Megatron-DeepSpeed (--deepspeed / --zero-stage)');
  }
  // Multimodal (examples/multimodal): --seq-length is the vision encoder's, the language model trains on
  // --decoder-seq-length. An encoder-decoder model (T5: --encoder-num-layers / --encoder-seq-length) keeps its encoder's.
  const dec = seen.get('--decoder-seq-length');
  const decLen = dec?.value !== undefined && !dec.unresolved ? toNumber(dec.value) : undefined;
  const encoder = ['--encoder-num-layers', '--encoder-seq-length'].some((f) => seen.has(f));
  if (dec && decLen !== undefined && Number.isInteger(decLen) && decLen > 0 && (!encoder || !s.has('training.seqLen'))) s.explicit('training.seqLen', decLen, locOfArg(dec));
  encoderDecoderLayers(s, seen);
  accountForSplit(s, seen);
  const mtpPerRank = pipelineLayout(s, seen);
  megatronDeepSpeed(s, seen);
  // FP8 runs on top of --bf16/--fp16 (Transformer Engine autocast), whichever order the flags come in.
  const fp8 = seen.get('--fp8-format');
  if (fp8?.value && mapped('--fp8-format', fp8.value)) s.explicit('training.precision', 'fp8-mixed', locOfArg(fp8));
  fp4Training(s, seen.get('--fp4-format'), fp8 !== undefined);
  fp8Attention(s, seen.get('--fp8-dot-product-attention'));
  moeCapacity(s, seen);
  multiTokenPrediction(s, seen, mtpPerRank);
  cudaGraphScope(s, seen);
  tokenizerVocab(s, seen);
  keepBlockRecomputeLayers(s, seen.get('--recompute-method')?.value?.replace(/["']/g, ''));
  const inst = seen.get('--num-distributed-optimizer-instances');
  const n = inst?.value ? toNumber(inst.value) : undefined;
  if (inst && n && n > 1) s.explicit('parallel.sharding.instances', n, locOfArg(inst));
  flexBackend(s, seen);
  const tp = s.num('parallel.tp') ?? 1;
  const sp = seen.get('--sequence-parallel');
  // Megatron turns sequence parallelism off at TP = 1 (arguments.py); derivePlan applies it, the file is told here.
  if (sp && tp === 1 && s.value('parallel.sp') === true) {
    s.diag('megatron-sp-tp1', 'info', 'Megatron turns --sequence-parallel off when TP = 1.', here(sp, sp.flagRange), ['parallel.sp']);
  }
}

/**
 * The flex dispatcher's kernels: --moe-flex-dispatcher-backend deepep (the default) or hybridep
 * (megatron/training/arguments.py; megatron/core/transformer/moe/token_dispatcher.py MoEFlexTokenDispatcher).
 */
function flexBackend(s: FactSink, seen: Map<string, FlagArg>): void {
  const disp = seen.get('--moe-token-dispatcher-type');
  const be = seen.get('--moe-flex-dispatcher-backend');
  if (!be || be.value === undefined || be.unresolved) return;
  const v = be.value.trim().replace(/["']/g, '');
  if (v !== 'deepep' && v !== 'hybridep') {
    s.diag('invalid-value', 'warning', `${be.flag} should be one of deepep, hybridep.`, here(be, be.valueRange ?? be.flagRange), ['parallel.epDispatcher']);
    return;
  }
  if (disp?.value?.trim() === 'flex') s.explicit('parallel.epDispatcher', v, locOfArg(be));
}

/** Megatron's defaults for everything the flags left unset (docs/formats/megatron.md). */
function applyDefaults(s: FactSink, model: boolean): void {
  const d = (p: PlanPath, v: FactValue, why: string) => s.default(p, v, `Megatron-LM default: ${why} (${ARGS})`);
  if (model) modelDefaults(s, d);
  parallelDefaults(s, d);
}

type D = (p: PlanPath, v: FactValue, why: string) => void;

function modelDefaults(s: FactSink, d: D): void {
  d('model.tiedEmbeddings', true, 'embeddings tied unless --untie-embeddings-and-output-weights');
  d('model.attnBias', 'all', 'linear biases on unless --disable-bias-linear');
  d('model.mlpBias', true, 'linear biases on unless --disable-bias-linear');
  d('model.norm', 'layernorm', '--normalization LayerNorm');
  d('model.positions', 'learned', '--position-embedding-type learned_absolute');
  d('model.gatedMlp', false, 'plain MLP unless --swiglu');
  d('model.vocabPadMultiple', 128, '--make-vocab-size-divisible-by 128');
  d('model.qkNorm', false, 'no --qk-layernorm');
  const h = s.num('model.hiddenSize');
  const heads = s.num('model.heads');
  if (h && !s.has('model.ffnSize')) {
    const ffn = s.value('model.gatedMlp') === true ? Math.floor((4 * h * 2) / 3 / 64) * 64 : 4 * h;
    s.derived('model.ffnSize', ffn, s.value('model.gatedMlp') === true ? 'Megatron: int(4h·2/3/64)·64 with --swiglu' : 'Megatron: 4h');
  }
  if (heads && !s.has('model.kvHeads')) s.derived('model.kvHeads', heads, 'Megatron: KV heads = attention heads without --group-query-attention');
  if (h && heads && !s.has('model.headDim')) s.derived('model.headDim', h / heads, 'Megatron: kv_channels = h / heads');
  if (s.has('model.moe.experts') && !s.has('model.moe.topK')) d('model.moe.topK', 2, '--moe-router-topk 2');
}

function parallelDefaults(s: FactSink, d: D): void {
  d('parallel.tp', 1, '--tensor-model-parallel-size 1');
  d('parallel.pp', 1, '--pipeline-model-parallel-size 1');
  d('parallel.cp', 1, '--context-parallel-size 1');
  d('parallel.ep', 1, '--expert-model-parallel-size 1');
  d('parallel.epDispatcher', 'allgather', '--moe-token-dispatcher-type allgather');
  d('parallel.sp', false, 'no --sequence-parallel');
  d('parallel.sharding.style', 'ddp', 'Megatron DDP without --use-distributed-optimizer');
  d('parallel.sharding.stage', 0, 'optimizer states replicated without --use-distributed-optimizer');
  d('parallel.sharding.overlapComm', false, 'no --overlap-grad-reduce');
  d('training.precision', 'fp32', 'neither --fp16 nor --bf16');
  d('training.optimizer', 'adamw', '--optimizer adam (decoupled weight decay)');
  d('training.recompute', 'none', 'no --recompute-granularity');
  // Only bf16 forces fp32 gradient accumulation and all-reduce; an --fp16 run keeps them in fp16 unless
  // --accumulate-allreduce-grads-in-fp32 (megatron/training/arguments.py, "bfloat16 requires gradient accumulation and
  // all-reduce to be done in fp32"; DDP grad_reduce_in_fp32 = accumulate_allreduce_grads_in_fp32).
  const fp16 = s.value('training.precision') === 'fp16-mixed' && s.value('training.fp32GradAccum') !== true;
  d('training.fp32GradAccum', !fp16, fp16 ? 'fp16 main_grad buffers with --fp16 (no --accumulate-allreduce-grads-in-fp32)' : 'fp32 main_grad buffers');
  d('training.gradDtype', fp16 ? 'fp16' : 'fp32', fp16 ? 'gradients reduced in fp16 with --fp16 (no --accumulate-allreduce-grads-in-fp32)' : 'gradients reduced in fp32 unless --grad-reduce-in-bf16');
  if (s.value('training.precision') === 'fp8-mixed') {
    d('training.fp8.recipe', 'delayed', '--fp8-recipe delayed');
    d('training.fp8.paramGather', false, 'no --fp8-param-gather');
  }
  // VPP from --num-layers-per-virtual-pipeline-stage and the schedule from VPP are derived by derivePlan.
}

/**
 * An encoder-decoder model (T5) given as --encoder-num-layers and --decoder-num-layers without --num-layers has that
 * many transformer blocks in all (megatron/core/models/T5/t5_model.py builds an encoder and a decoder block; the
 * memory model counts both as layers, the decoder's cross-attention not separately).
 */
function encoderDecoderLayers(s: FactSink, seen: Map<string, FlagArg>): void {
  const enc = seen.get('--encoder-num-layers');
  const dec = seen.get('--decoder-num-layers');
  if (!enc || !dec || seen.has('--num-layers') || enc.unresolved || dec.unresolved) return;
  const [e, d] = [toNumber(enc.value), toNumber(dec.value)];
  if (!e || !d || !Number.isInteger(e) || !Number.isInteger(d)) return;
  s.derived('model.layers', e + d, `Megatron encoder-decoder: --encoder-num-layers ${e} + --decoder-num-layers ${d}`, locOfArg(enc));
}
