/** Megatron-LM command-line flags (from scripts or flag-keyed YAML) → facts, then Megatron's defaults. */
import table from './keys.json';
import type { FactValue } from '../../shared/plan/facts';
import type { TextRange } from '../../shared/plan/types';
import type { FlagArg } from '../common/shell/commandLine';
import type { FactSink, Loc } from '../common/sink';
import { toBool, toNumber } from '../common/text';
import { lookupTable } from '../../shared/lookup';
import type { PlanPath } from '../../shared/plan/paths';
import { layersPerRank, parsePipelineLayout } from './layout';
import { gptPipeSplit } from './deepspeedPipe';
import { vocabOfTokenizer } from '../common/tokenizerVocab';
import { keepBlockRecomputeLayers } from '../common/recomputeLayers';
import { gatedDeltaNetMessage } from '../../shared/model/hfFamilies';
import { readRecomputeModules } from './recomputeModules';
import { countedStageLayers } from '../../shared/plan/derived';
import { UNMODELLED_LAYERS_CODE } from '../../shared/model/hfConfig';

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
 * Multi-token prediction (`--mtp-num-layers D`, megatron/core/transformer/transformer_config.py `mtp_num_layers`;
 * multi_token_prediction.py, DeepSeek-V3 §2.2) is read as `model.mtpLayers` (shared/model/mtp.ts); an info at the flag
 * says how its modules are counted. More than the model's layers is refused as absurd.
 */
function multiTokenPrediction(s: FactSink, seen: ReadonlyMap<string, FlagArg>, mtpPerRank: readonly number[] | undefined): void {
  const flag = seen.get('--mtp-num-layers'), layout = seen.get('--pipeline-model-parallel-layout');
  // The flag's own reading (keys.json) has set the count, or warned that it is no whole number or a variable.
  if (!flag?.value || flag.unresolved) return;
  const d = toNumber(flag.value);
  if (d === undefined || !Number.isInteger(d) || d < 0) return;
  const L = s.num('model.layers');
  if (d > (L ?? 64)) {
    s.diag('invalid-value', 'warning', `${flag.flag} ${d} builds more prediction modules than the model has layers${L ? ` (${L})` : ''}; read as none.`, here(flag, flag.valueRange ?? flag.flagRange), ['model.mtpLayers']);
    delete s.facts['model.mtpLayers'];
    return;
  }
  if (d === 0) return;
  const repeated = seen.get('--mtp-use-repeated-layer');
  if (repeated && d > 1 && (repeated.value === undefined || toBool(repeated.value) === true)) {
    s.diag('megatron-mtp-repeated', 'warning', `--mtp-use-repeated-layer: Megatron holds one prediction module and runs it ${d} times (multi_token_prediction.py); ShardLens counts ${d} distinct modules, so the last stage's parameters, gradients and optimizer states read ${d - 1} module${d === 2 ? '' : 's'} too high (activations and step time are as run).`, here(repeated, repeated.flagRange), ['model.mtpLayers']);
  }
  s.diag(MTP_MODELLED, 'info', `${flag.flag} ${d}: ${mtpModelledText(d)}`, here(flag, flag.flagRange), ['model.mtpLayers']);
  // A layout places the modules itself (Megatron asserts it holds all D of them or none, get_mtp_num_layers_to_build);
  // ShardLens keeps them on the last pipeline rank, where Megatron's own recipes put them.
  if (!layout || !mtpPerRank) return;
  const perRank = mtpPerRank, pp = perRank.length;
  const placed = perRank.reduce((x, y) => x + y, 0);
  const at = here(layout, layout.valueRange ?? layout.flagRange);
  if (placed !== d) s.diag('megatron-pipeline-layout', 'warning', `--pipeline-model-parallel-layout places ${placed} MTP layer${placed === 1 ? '' : 's'} (m), --mtp-num-layers builds ${d}: Megatron stops unless they agree; ${d} are counted on the last rank.`, at, ['model.mtpLayers']);
  else if (perRank.some((n, r) => n > 0 && r !== pp - 1)) s.diag('megatron-pipeline-layout', 'warning', `--pipeline-model-parallel-layout places the MTP layers on rank ${perRank.findIndex((n) => n > 0)}; ShardLens counts them, their embedding copy and their output-layer passes on the last rank (${pp - 1}).`, at, ['model.mtpLayers']);
}

/** The code of the info that says how multi-token prediction modules are counted. */
export const MTP_MODELLED = 'megatron-mtp';

/** How D multi-token prediction modules are counted (the info's text after the setting). */
export function mtpModelledText(d: number): string {
  const them = d === 1 ? 'its module sits' : `its ${d} modules sit`;
  return `multi-token prediction: ${them} on the last pipeline stage, each one transformer layer of the last decoder layer's kind, two norms, a 2h → h projection, a final norm and another pass through the output layer with its own loss, and that stage keeps a copy of the embedding; counted in the parameters, memory and step time (docs/formulas.md#multi-token-prediction).`;
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

/**
 * Evaluates a Python list expression of 0s and 1s as Megatron's `--moe-layer-freq` takes it (`([0]+[1]*26)`,
 * `[0]*3+[1]*58`, `([0]*1+[1]*1)*24`): lists, `+` concatenation, `*` repetition by a whole number, parentheses.
 * Undefined for anything else or beyond 100,000 layers.
 */
export function layerPattern(text: string): number[] | undefined {
  const src = text.replace(/\s+/g, '').replace(/^["']|["']$/g, '');
  let i = 0;
  const LIMIT = 100_000;
  const int = (): number | undefined => {
    const m = /^\d+/.exec(src.slice(i));
    if (!m) return undefined;
    i += m[0].length;
    return Number(m[0]);
  };
  let depth = 0;
  const atom = (): number[] | undefined => {
    if (src[i] === '(') {
      // A hostile nesting depth ends the parse instead of the stack.
      if (++depth > 32) return undefined;
      i++;
      const v = sum();
      depth--;
      if (src[i] !== ')') return undefined;
      i++;
      return v;
    }
    if (src[i] !== '[') return undefined;
    i++;
    const out: number[] = [];
    while (src[i] !== ']') {
      const n = int();
      if (n === undefined || n > 1) return undefined;
      out.push(n);
      if (src[i] === ',') i++;
      else if (src[i] !== ']') return undefined;
    }
    i++;
    return out;
  };
  const term = (): number[] | undefined => {
    let v = atom();
    while (v && src[i] === '*') {
      i++;
      const n = int();
      if (n === undefined || v.length * n > LIMIT) return undefined;
      v = Array.from({ length: v.length * n }, (_, k) => v![k % v!.length]);
    }
    return v;
  };
  const sum = (): number[] | undefined => {
    let v = term();
    while (v && src[i] === '+') {
      i++;
      const w = term();
      if (!w || v.length + w.length > LIMIT) return undefined;
      v = [...v, ...w];
    }
    return v;
  };
  const v = sum();
  return v && i === src.length ? v : undefined;
}

/**
 * Megatron's Mamba hybrids (pretrain_mamba.py: Nemotron-H, Nemotron 3): --num-layers counts sublayers, each Mamba,
 * attention, MLP or MoE as --hybrid-override-pattern or the ratios say (megatron/core/ssm/mamba_hybrid_layer_allocation.py).
 * ShardLens has no Mamba term and reads every layer as attention + MLP, so the figures are not this model's: a warning
 * at the flag says so.
 */
function mambaHybrid(s: FactSink, seen: Map<string, FlagArg>): void {
  const pattern = seen.get('--hybrid-override-pattern');
  const ratio = ['--hybrid-attention-ratio', '--hybrid-mlp-ratio'].map((f) => seen.get(f)).find((a) => a?.value && (toNumber(a.value) ?? 0) > 0);
  const a = pattern?.value ? pattern : ratio;
  if (!a) return;
  const text = a === pattern && !a.unresolved ? (a.value ?? '').replace(/^["']|["']$/g, '') : '';
  const kinds: [string, string][] = [['M', 'Mamba'], ['*', 'attention'], ['-', 'MLP'], ['E', 'MoE']];
  const what = text ? ` (${text.length} sublayers: ${kinds.map(([c, n]) => `${[...text].filter((x) => x === c).length} ${n}`).join(', ')})` : '';
  s.diag('megatron-hybrid-unmodelled', 'warning', `${a.flag}: a Mamba hybrid${what}. Its Mamba layers are not modelled and --num-layers counts sublayers, so every layer is read as attention + MLP: memory, communication and step time are not this model's.`, here(a, a.valueRange ?? a.flagRange), ['model.layers']);
}

/** TransformerConfig's Gated DeltaNet widths (megatron/core/transformer/transformer_config.py). */
const GDN_DEFAULTS: readonly (readonly [PlanPath, number, string])[] = [
  ['model.linearAttention.keyHeads', 16, 'linear_num_key_heads'], ['model.linearAttention.valueHeads', 32, 'linear_num_value_heads'],
  ['model.linearAttention.keyHeadDim', 128, 'linear_key_head_dim'], ['model.linearAttention.valueHeadDim', 128, 'linear_value_head_dim'],
  ['model.linearAttention.convKernel', 4, 'linear_conv_kernel_dim'],
];

/**
 * `--experimental-attention-variant gated_delta_net` (Qwen3-Next, Qwen3.5 in Megatron-LM): the layers
 * `--linear-attention-freq` makes linear (TransformerConfig: an integer N gives `0 if (i + 1) % N == 0 else 1` per
 * layer, 1 marking a Gated DeltaNet layer; a list gives the pattern), TransformerConfig's widths where no flag sets
 * them, and the warning that says what their saved activations and step time rest on (shared/memory/gatedDeltaNetSaves.ts,
 * shared/time/kernels/gatedDeltaNet.ts). The widths of a model without the variant are dropped.
 */
function gatedDeltaNet(s: FactSink, seen: Map<string, FlagArg>): void {
  const v = seen.get('--experimental-attention-variant');
  const on = !!v?.value && !v.unresolved && /^(gated_delta_net|gdn)$/.test(v.value);
  if (!on) {
    for (const [path] of GDN_DEFAULTS) delete s.facts[path];
    if (v?.value && !v.unresolved) s.diag('unmodelled-value', 'warning', `${v.flag} ${v.value} is an attention variant ShardLens does not model: its layers are read as standard attention.`, here(v, v.valueRange ?? v.flagRange), ['model']);
    return;
  }
  const L = s.num('model.layers');
  const f = seen.get('--linear-attention-freq');
  let linear: number | undefined;
  if (f?.value && !f.unresolved && L !== undefined) {
    const n = toNumber(f.value);
    if (n !== undefined && Number.isInteger(n) && n >= 1) linear = L - Math.floor(L / n);
    else {
      const list = layerPattern(f.value);
      if (list && list.length > 0) {
        linear = list.filter((x) => x === 1).length;
        if (list.length !== L) s.diag('megatron-linear-attention-pattern', 'warning', `--linear-attention-freq lists ${list.length} layers, --num-layers is ${L}.`, here(f, f.valueRange ?? f.flagRange), ['model.linearAttention.layers']);
      } else s.diag('invalid-value', 'warning', `--linear-attention-freq expects a whole number or a Python list of 0 and 1 (got "${f.value}"): every layer is read as standard attention.`, here(f, f.valueRange ?? f.flagRange), ['model.linearAttention.layers']);
    }
  } else if (!f && v) {
    s.diag('megatron-linear-attention-pattern', 'warning', `${v.flag} ${v.value} without --linear-attention-freq: which layers are linear is not said, so every layer is read as standard attention.`, here(v, v.valueRange ?? v.flagRange), ['model.linearAttention.layers']);
  }
  if (!linear || !v) return;
  const loc = locOfArg(f ?? v);
  s.derived('model.linearAttention.layers', Math.min(linear, L ?? linear), `--linear-attention-freq ${f?.value}: Gated DeltaNet layers (TransformerConfig: 0 if (i + 1) % N == 0 else 1)`, loc);
  for (const [path, d, name] of GDN_DEFAULTS) s.default(path, d, `Megatron TransformerConfig default ${name} = ${d}`);
  s.diag(UNMODELLED_LAYERS_CODE, 'warning', gatedDeltaNetMessage(`${v.flag} ${v.value}`, linear, L, 'megatron'), here(v, v.valueRange ?? v.flagRange), ['model']);
}

/**
 * `--moe-layer-freq` as a list (megatron/training/arguments.py `moe_freq_type`: 1 marks an MoE layer): dense layers
 * first and MoE after (`([0]+[1]*26)`: DeepSeek's first_k_dense_replace) or one MoE layer closing every period of f,
 * the shapes the model can hold; any other list is read as every layer MoE, with a warning at the flag.
 */
function moeLayerPattern(s: FactSink, seen: Map<string, FlagArg>): void {
  const a = seen.get('--moe-layer-freq');
  if (!a?.value || a.unresolved) return;
  const loc = locOfArg(a);
  const n = toNumber(a.value);
  if (n !== undefined) {
    // An integer N makes layer i (0-based) MoE when i % N = 0 (megatron/core/models/gpt/gpt_layer_specs.py).
    if (Number.isInteger(n) && n > 1) s.derived('model.moe.firstLayerMoe', true, `Megatron: --moe-layer-freq ${n} makes layers 0, ${n}, ${2 * n}, … MoE (gpt_layer_specs.py: i % ${n} == 0)`, loc);
    return;
  }
  const list = layerPattern(a.value);
  const layers = s.num('model.layers');
  if (list && list.length > 0 && list.includes(1)) {
    const k = list.indexOf(1);
    if (list.slice(k).every((x) => x === 1)) {
      s.explicit('model.moe.denseFirstLayers', k, loc);
      s.explicit('model.moe.layerFrequency', 1, loc);
      if (layers !== undefined && layers !== list.length) s.diag('megatron-moe-layer-pattern', 'warning', `--moe-layer-freq lists ${list.length} layers, --num-layers is ${layers}.`, here(a, a.valueRange ?? a.flagRange), ['model.moe.layerFrequency']);
      return;
    }
    const f = k + 1;
    if (list.every((x, i) => x === ((i + 1) % f === 0 ? 1 : 0))) {
      s.explicit('model.moe.layerFrequency', f, loc);
      return;
    }
    // One MoE layer opening every period ([1,0,0]*n): the frequency, first layer of each period.
    const g = k === 0 ? list.indexOf(1, 1) : -1;
    if (g > 1 && list.every((x, i) => x === (i % g === 0 ? 1 : 0))) {
      s.explicit('model.moe.layerFrequency', g, loc);
      s.explicit('model.moe.firstLayerMoe', true, loc);
      return;
    }
  }
  delete s.facts['model.moe.layerFrequency'];
  s.diag('megatron-moe-layer-pattern', 'warning', `--moe-layer-freq ${a.value} is not a pattern ShardLens can hold (dense layers first, or one MoE layer opening or closing every n): every layer is read as MoE.`, here(a, a.valueRange ?? a.flagRange), ['model.moe.layerFrequency']);
}

/**
 * Sliding-window attention (`--window-size (left, right)` and `--window-attn-skip-freq`; megatron/core/transformer/
 * utils.py `is_layer_window_attention`): a query sees the `left` keys before it and itself, so the window is left + 1
 * keys (−1: no window); an integer N keeps every N-th layer (1-based) global, a list marks the sliding layers with 1.
 */
function windowAttention(s: FactSink, seen: Map<string, FlagArg>): void {
  const a = seen.get('--window-size');
  if (!a?.value || a.unresolved) return;
  const m = /^[\s("'[]*(-?\d+)\s*,\s*(-?\d+)[\s)"'\]]*$/.exec(a.value);
  const left = m ? Number(m[1]) : NaN;
  if (!m || !Number.isInteger(left) || left < -1) {
    s.diag('invalid-value', 'warning', `--window-size expects two whole numbers, as "(128,0)" (got "${a.value}").`, here(a, a.valueRange ?? a.flagRange), ['model']);
    return;
  }
  if (left < 0) return;
  const L = s.num('model.layers');
  if (!L) return;
  const f = seen.get('--window-attn-skip-freq');
  let sliding = L;
  if (f?.value && !f.unresolved) {
    const n = toNumber(f.value);
    const list = n === undefined ? layerPattern(f.value) : undefined;
    if (n !== undefined && Number.isInteger(n) && n >= 1) sliding = L - Math.floor(L / n);
    else if (list) sliding = list.slice(0, L).filter((x) => x === 1).length;
    else {
      s.diag('invalid-value', 'warning', `--window-attn-skip-freq expects a whole number or a list pattern (got "${f.value}"); every layer is read as sliding.`, here(f, f.valueRange ?? f.flagRange), ['model']);
    }
  }
  const loc = locOfArg(a);
  s.derived('model.slidingWindow.window', left + 1, `--window-size ${a.value}: the ${left} keys before a query and itself`, loc);
  s.derived('model.slidingWindow.slidingLayers', sliding, f ? `--window-attn-skip-freq ${f.value}: ${sliding} of ${L} layers slide` : `--window-size without --window-attn-skip-freq: all ${L} layers slide`, f ? locOfArg(f) : loc);
}

/** MLA width flags and Megatron's defaults for them (megatron/training/arguments.py, NVIDIA/Megatron-LM d98e8a64). */
const MLA_FLAGS: readonly [string, PlanPath, number | undefined][] = [
  ['--q-lora-rank', 'model.mla.qLoraRank', undefined], ['--kv-lora-rank', 'model.mla.kvLoraRank', 32],
  ['--qk-head-dim', 'model.mla.qkNopeHeadDim', 128], ['--qk-pos-emb-head-dim', 'model.mla.qkRopeHeadDim', 64], ['--v-head-dim', 'model.mla.vHeadDim', 128],
];

/**
 * Multi-head latent attention (`--multi-latent-attention`, megatron/core/transformer/multi_latent_attention.py): its
 * widths at Megatron's defaults where not given (no --q-lora-rank: queries projected from the hidden state), one
 * key and value per query head (MLA rejects --group-query-attention) and the query/key head width as head dim. Without
 * the flag Megatron ignores the width flags, and so does the reader, with a warning at the first one.
 */
function latentAttention(s: FactSink, seen: Map<string, FlagArg>): void {
  const mla = seen.get('--multi-latent-attention');
  if (!mla || toBool(mla.value ?? 'true') === false) {
    const stray = MLA_FLAGS.map(([f]) => seen.get(f)).find((a) => a !== undefined);
    for (const [, p] of MLA_FLAGS) delete s.facts[p];
    if (stray) s.diag('megatron-mla-without-flag', 'warning', `${stray.flag} is ignored without --multi-latent-attention (standard attention).`, here(stray, stray.flagRange), []);
    return;
  }
  for (const [flag, p, d] of MLA_FLAGS) {
    if (!s.has(p)) s.default(p, d ?? 0, d === undefined ? `Megatron-LM default: ${flag} unset, queries projected from the hidden state (${ARGS})` : `Megatron-LM default: ${flag} ${d} (${ARGS})`);
    else if (p !== 'model.mla.qLoraRank' && s.num(p) === 0) {
      const a = seen.get(flag)!;
      s.diag('invalid-value', 'warning', `${flag} 0 leaves no latent or head width: multi-head latent attention is not modelled (standard attention).`, here(a, a.valueRange ?? a.flagRange), [p]);
    }
  }
  const nope = s.num('model.mla.qkNopeHeadDim'), rope = s.num('model.mla.qkRopeHeadDim');
  if (nope && rope) s.derived('model.headDim', nope + rope, 'Megatron MLA: query/key head = --qk-head-dim + --qk-pos-emb-head-dim', locOfArg(mla));
  const heads = s.num('model.heads');
  if (heads) s.derived('model.kvHeads', heads, 'Megatron MLA: one key and value per query head', locOfArg(mla));
  // Under MLA --qk-layernorm normalises the query and key/value latents, which the MLA model counts (mla.ts).
  const qkln = seen.get('--qk-layernorm');
  if (qkln) s.derived('model.qkNorm', false, 'Megatron MLA: --qk-layernorm normalises the latents (counted with multi-head latent attention)', locOfArg(qkln));
}

/** A range in this document, or none when the flag was written in a sourced file (the diagnostic goes to the top). */
function here(a: FlagArg, r: TextRange | undefined): TextRange | undefined {
  return a.uri ? undefined : r;
}

function locOfArg(a: FlagArg): Loc {
  return { key: a.spelled ?? a.flag, keyRange: a.flagRange, valueRange: a.valueRange ?? a.flagRange, uri: a.uri };
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

/**
 * --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split count the embedding and the loss as
 * one layer each (shared/plan/derived.ts countedStageLayers). Explicit --decoder-first/last-pipeline-num-layers win.
 */
function accountForSplit(s: FactSink, seen: Map<string, FlagArg>): void {
  const emb = seen.get('--account-for-embedding-in-pipeline-split');
  const loss = seen.get('--account-for-loss-in-pipeline-split');
  if (!emb && !loss) return;
  const L = s.num('model.layers');
  const pp = s.num('parallel.pp') ?? 1;
  if (pp < 2) return;
  if (!L) {
    // The model is known later (a preset, a recipe's Hugging Face model): the split is made then (shared/plan/derive.ts).
    const later = 'Megatron: the embedding and the loss count as one layer each in the pipeline split';
    if (emb && !s.has('parallel.firstStageLayers')) s.derived('parallel.firstStageLess', 1, later, locOfArg(emb));
    if (loss && !s.has('parallel.lastStageLayers')) s.derived('parallel.lastStageLess', 1, later, locOfArg(loss));
    return;
  }
  const split = countedStageLayers(L, pp, emb ? 1 : 0, loss ? 1 : 0);
  const flag = (emb ?? loss) as FlagArg;
  if (!split) {
    s.diag('megatron-account-split', 'warning', `With the embedding/loss counted as layers, ${L} layers do not split evenly over ${pp} stages.`, flag.flagRange, ['parallel.pp', 'model.layers']);
    return;
  }
  const why = 'Megatron: (layers + embedding + loss) / PP per stage, less the embedding on the first and the loss on the last';
  if (emb && split.first !== undefined && !s.has('parallel.firstStageLayers')) s.derived('parallel.firstStageLayers', split.first, why, locOfArg(emb));
  if (loss && split.last !== undefined && !s.has('parallel.lastStageLayers')) s.derived('parallel.lastStageLayers', split.last, why, locOfArg(loss));
}

/** A Megatron-DeepSpeed launch: `--deepspeed` (DeepSpeed runs only with it; a JSON path alone is not enough) or `--zero-stage`. */
function deepspeedLaunch(seen: Map<string, FlagArg>): boolean {
  return seen.has('--deepspeed') || seen.has('--zero-stage');
}

/**
 * What Megatron-DeepSpeed (`--deepspeed` or `--zero-stage`) does differently from Megatron-LM:
 * - core attention is the unfused path (fused scale-mask-softmax) unless a `--use-flash-attn*` flag is given
 *   (megatron/model/transformer.py `ParallelAttention`: `use_flash_attn` from the flags);
 * - the BigScience fork's `--pad-vocab-size-to N` is the padded vocabulary itself (no further rounding);
 * - with PP > 1 the DeepSpeed pipeline engine splits GPTModelPipe's layer specs by its partition method
 *   (formats/megatron/deepspeedPipe.ts), not Megatron's even split.
 */
function megatronDeepSpeed(s: FactSink, seen: Map<string, FlagArg>): void {
  if (!deepspeedLaunch(seen)) return;
  const flash = ['--use-flash-attn', '--use-flash-attn-v1', '--use-flash-attn-v2', '--use-flash-attn-triton', '--attention-backend'].some((f) => seen.has(f));
  if (!flash) s.default('training.flashAttention', false, 'Megatron-DeepSpeed: unfused core attention with the fused scale-mask-softmax kernel (no --use-flash-attn)');
  // deepspeed.initialize wraps the model: DeepSpeed's optimizer wrappers keep the weights, gradients and master copies.
  s.default('training.regime', 'deepspeed', 'Megatron-DeepSpeed: DeepSpeed\'s engine and optimizer wrappers hold the weights and optimizer states');
  // Gradients accumulate in DeepSpeed's data_types.grad_accum_dtype, the model's dtype unless the JSON says otherwise.
  s.default('training.fp32GradAccum', false, 'DeepSpeed: gradients accumulate in the model dtype (data_types.grad_accum_dtype unset)');
  const half = ({ 'bf16-mixed': 'bf16', 'fp16-mixed': 'fp16' } as Record<string, string>)[String(s.value('training.precision'))];
  if (half) s.default('training.gradDtype', half, 'DeepSpeed: gradients in the model dtype and reduced in it (communication_data_type unset)');
  const pad = seen.get('--pad-vocab-size-to');
  if (pad && s.has('model.vocabSize')) s.derived('model.vocabPadMultiple', 1, 'BigScience Megatron-DeepSpeed: --pad-vocab-size-to is the padded vocabulary', locOfArg(pad));
  const L = s.num('model.layers'), pp = s.num('parallel.pp') ?? 1;
  const zero = seen.get('--zero-stage'), stage = s.num('parallel.sharding.stage') ?? 0;
  if (pp > 1 && !seen.has('--no-pipeline-parallel') && stage >= 2) {
    // deepspeed/runtime/pipe/engine.py PipelineEngine.__init__ asserts the ZeRO stage is below 2.
    s.diag('deepspeed-pipeline-zero', 'error', `DeepSpeed's pipeline engine refuses ZeRO stage ${stage} ("ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism"): use --zero-stage 0 or 1 with PP ${pp}, or --no-pipeline-parallel.`,
      zero ? here(zero, zero.valueRange ?? zero.flagRange) : undefined, ['parallel.sharding.stage', 'parallel.pp']);
  }
  if (!L || pp < 2 || seen.has('--no-pipeline-parallel') || s.has('parallel.stageLayers')) return;
  const m = seen.get('--pp-partition-method');
  if (m?.unresolved) return;
  const method = m?.value ?? 'type:transformer';
  const split = gptPipeSplit(s, method, L, pp);
  const at = m ? here(m, m.valueRange ?? m.flagRange) : undefined;
  if ('error' in split) {
    s.diag('megatron-deepspeed-partition', 'info', `DeepSpeed's pipeline split is not known: ${split.error}; layers are spread evenly over the stages.`, at, ['parallel.stageLayers']);
    return;
  }
  if (split.layers.some((x) => x === 0)) {
    s.diag('megatron-deepspeed-partition', 'warning', `DeepSpeed's ${method} split leaves a pipeline stage without transformer layers (${split.layers.join(', ')}).`, at, ['parallel.pp', 'parallel.stageLayers']);
  }
  if (split.layers.every((x) => x === split.layers[0])) return;
  s.derived('parallel.stageLayers', split.layers, `DeepSpeed PipelineModule partition_method ${method} over GPTModelPipe's layer specs (Megatron-DeepSpeed)`, m ? locOfArg(m) : undefined);
}

/**
 * --pipeline-model-parallel-layout places every layer (formats/megatron/layout.ts): the decoder layers of each pipeline
 * rank become the stage split and the stage count over PP the virtual stages. Megatron rejects it together with the
 * uneven-split flags and with a virtual stage count that disagrees (megatron/training/arguments.py); the layout wins here.
 * Returns the MTP layers (m) each rank holds, for multiTokenPrediction, once the stages divide over the ranks.
 */
function pipelineLayout(s: FactSink, seen: Map<string, FlagArg>): number[] | undefined {
  const a = seen.get('--pipeline-model-parallel-layout');
  if (!a || a.value === undefined || a.unresolved) return undefined;
  const at = here(a, a.valueRange ?? a.flagRange);
  const warn = (msg: string, paths: PlanPath[]) => s.diag('megatron-pipeline-layout', 'warning', `--pipeline-model-parallel-layout: ${msg}.`, at, paths);
  const parsed = parsePipelineLayout(a.value);
  if ('error' in parsed) { warn(parsed.error, ['parallel.stageLayers']); return undefined; }
  const pp = s.num('parallel.pp') ?? 1;
  const n = parsed.stages.length;
  if (n % pp !== 0) { warn(`its ${n} stages are not a multiple of the ${pp} pipeline ranks`, ['parallel.pp', 'parallel.stageLayers']); return undefined; }
  const mtp = layersPerRank(parsed, pp, 'm');
  const perRank = layersPerRank(parsed, pp);
  const total = perRank.reduce((x, y) => x + y, 0);
  const L = s.num('model.layers');
  if (L !== undefined && total !== L) { warn(`it places ${total} decoder layers, the model has ${L}`, ['model.layers', 'parallel.stageLayers']); return mtp; }
  const vpp = n / pp;
  const given = s.num('parallel.vpp');
  if (given !== undefined && given !== vpp && vpp > 1) warn(`its ${n} stages make ${vpp} virtual stages per rank, not ${given}`, ['parallel.vpp']);
  const loc = locOfArg(a);
  if (pp > 1) s.explicit('parallel.stageLayers', perRank, loc);
  if (vpp > 1) s.explicit('parallel.vpp', vpp, loc);
  for (const p of ['parallel.firstStageLayers', 'parallel.lastStageLayers'] as const) delete s.facts[p];
  return mtp;
}
