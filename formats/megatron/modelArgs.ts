/**
 * Megatron-LM flags that shape the model beyond its widths (formats/megatron/args.ts reads them after the key table):
 * multi-token prediction, hybrid layer patterns (Mamba, MoE), Gated DeltaNet, window attention and multi-head latent
 * attention, each with Megatron's defaults and what ShardLens says about it.
 */
import type { PlanPath } from '../../shared/plan/paths';
import type { FlagArg } from '../common/shell/commandLine';
import type { FactSink } from '../common/sink';
import { toBool, toNumber } from '../common/text';
import { gatedDeltaNetMessage } from '../../shared/model/hfFamilies';
import { UNMODELLED_LAYERS_CODE } from '../../shared/model/hfConfig';
import { here, locOfArg } from './argLoc';

const ARGS = 'megatron/training/arguments.py';

/**
 * Multi-token prediction (`--mtp-num-layers D`, megatron/core/transformer/transformer_config.py `mtp_num_layers`;
 * multi_token_prediction.py, DeepSeek-V3 §2.2) is read as `model.mtpLayers` (shared/model/mtp.ts); an info at the flag
 * says how its modules are counted. More than the model's layers is refused as absurd.
 */
export function multiTokenPrediction(s: FactSink, seen: ReadonlyMap<string, FlagArg>, mtpPerRank: readonly number[] | undefined): void {
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
export function mambaHybrid(s: FactSink, seen: Map<string, FlagArg>): void {
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
export function gatedDeltaNet(s: FactSink, seen: Map<string, FlagArg>): void {
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
export function moeLayerPattern(s: FactSink, seen: Map<string, FlagArg>): void {
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
export function windowAttention(s: FactSink, seen: Map<string, FlagArg>): void {
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
export function latentAttention(s: FactSink, seen: Map<string, FlagArg>): void {
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
