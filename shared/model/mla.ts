/**
 * The projections of multi-head latent attention (MLA; DeepSeek-V2 report §2.1, DeepSeek-V3 report §2.1.1), the one
 * description parameters, GEMM times, FLOPs and activations of an MLA layer are all counted from
 * (docs/formulas.md#multi-head-latent-attention).
 *
 * Per layer, with h the hidden size, a the heads, r_q / r_kv the compression ranks, d_n / d_r / d_v the per-head
 * no-position, rotary and value widths:
 * - queries: h → r_q (down, RMSNorm of r_q) → a·(d_n + d_r) (up); with r_q = 0 one h → a·(d_n + d_r) projection;
 * - keys and values: h → r_kv + d_r (down: the latent and one rotary key shared by every head, RMSNorm of r_kv) →
 *   a·(d_n + d_v) (up);
 * - output: a·d_v → h.
 * Under tensor parallelism the up and output projections split by heads like Q/K/V and O; the down projections are
 * held whole by every rank, as Megatron-LM and torchtitan build them (docs/framework-facts.md#mla-down-projections-under-tensor-parallelism).
 */
import type { MlaSpec, ModelSpec } from '../plan/types';

/** One projection of an attention layer: its input and output widths and how TP splits it. */
export interface Projection {
  readonly name: 'q_down' | 'q_up' | 'q' | 'kv_down' | 'kv_up' | 'o';
  readonly in: number;
  readonly out: number;
  /** 'column' splits the output over TP, 'row' the input, 'replicated' keeps it whole on every rank. */
  readonly tp: 'column' | 'row' | 'replicated';
}

/** Query/key width of one head: d_n + d_r under MLA, else headDim. */
export function qkHeadDim(m: Pick<ModelSpec, 'headDim' | 'mla'>): number {
  return m.mla ? m.mla.qkNopeHeadDim + m.mla.qkRopeHeadDim : m.headDim;
}

/** Value width of one head: d_v under MLA, else headDim. */
export function vHeadDim(m: Pick<ModelSpec, 'headDim' | 'mla'>): number {
  return m.mla ? m.mla.vHeadDim : m.headDim;
}

/** The projections of one MLA layer (see the module comment), in the order the layer runs them. */
export function mlaProjections(mla: MlaSpec, hidden: number, heads: number): Projection[] {
  const qk = mla.qkNopeHeadDim + mla.qkRopeHeadDim;
  const out: Projection[] = mla.qLoraRank > 0
    ? [{ name: 'q_down', in: hidden, out: mla.qLoraRank, tp: 'replicated' }, { name: 'q_up', in: mla.qLoraRank, out: heads * qk, tp: 'column' }]
    : [{ name: 'q', in: hidden, out: heads * qk, tp: 'column' }];
  out.push(
    { name: 'kv_down', in: hidden, out: mla.kvLoraRank + mla.qkRopeHeadDim, tp: 'replicated' },
    { name: 'kv_up', in: mla.kvLoraRank, out: heads * (mla.qkNopeHeadDim + mla.vHeadDim), tp: 'column' },
    { name: 'o', in: heads * mla.vHeadDim, out: hidden, tp: 'row' },
  );
  return out;
}

/** Weights of one MLA layer's projections: those TP splits and those every rank holds whole (no biases). */
export function mlaWeights(mla: MlaSpec, hidden: number, heads: number): { split: number; replicated: number } {
  let split = 0, replicated = 0;
  for (const p of mlaProjections(mla, hidden, heads)) {
    if (p.tp === 'replicated') replicated += p.in * p.out;
    else split += p.in * p.out;
  }
  return { split, replicated };
}

/** The latent RMSNorms of one MLA layer (q_a_layernorm of r_q when queries are compressed, kv_a_layernorm of r_kv). */
export function mlaNormParams(mla: MlaSpec): number {
  return mla.qLoraRank + mla.kvLoraRank;
}

/** A usable MLA description (positive latent and head widths; r_q may be 0), else undefined. */
export function validMla(x: Partial<MlaSpec> | undefined): MlaSpec | undefined {
  if (!x) return undefined;
  const ok = (v: unknown, zero = false) => typeof v === 'number' && Number.isInteger(v) && (zero ? v >= 0 : v > 0);
  if (!ok(x.kvLoraRank) || !ok(x.qkNopeHeadDim) || !ok(x.qkRopeHeadDim) || !ok(x.vHeadDim) || !ok(x.qLoraRank ?? 0, true)) return undefined;
  return { qLoraRank: x.qLoraRank ?? 0, kvLoraRank: x.kvLoraRank!, qkNopeHeadDim: x.qkNopeHeadDim!, qkRopeHeadDim: x.qkRopeHeadDim!, vHeadDim: x.vHeadDim! };
}

/** Model types whose configuration class defines multi-head latent attention (transformers; Kimi K2 ships DeepSeek-V3's). */
export const MLA_MODEL_TYPES: ReadonlySet<string> = new Set(['deepseek_v2', 'deepseek_v3', 'kimi_k2']);

/**
 * config.json keys of multi-head latent attention with DeepseekV3Config's defaults (1536, 512, 128, 64, 128;
 * docs/framework-facts.md#deepseek-v3-mla-defaults), as [field, key, default].
 */
export const MLA_CONFIG_KEYS: readonly (readonly [keyof MlaSpec, string, number])[] = [
  ['qLoraRank', 'q_lora_rank', 1536], ['kvLoraRank', 'kv_lora_rank', 512], ['qkNopeHeadDim', 'qk_nope_head_dim', 128],
  ['qkRopeHeadDim', 'qk_rope_head_dim', 64], ['vHeadDim', 'v_head_dim', 128],
];

/**
 * The projections a LoRA target name adapts in an MLA layer, as [in, out] pairs: q the query projection (q_a_proj and
 * q_b_proj, or q_proj), k the key/value down projection (kv_a_proj_with_mqa), v the key/value up projection (kv_b_proj),
 * o the output projection (PEFT module names of transformers' DeepseekV3Attention; formats/common/maps.ts maps them).
 */
export function mlaLoraShapes(mla: MlaSpec, hidden: number, heads: number): Readonly<Record<'q' | 'k' | 'v' | 'o', readonly (readonly [number, number])[]>> {
  const out: Record<'q' | 'k' | 'v' | 'o', [number, number][]> = { q: [], k: [], v: [], o: [] };
  for (const p of mlaProjections(mla, hidden, heads)) {
    const key = p.name === 'q_down' || p.name === 'q_up' || p.name === 'q' ? 'q' : p.name === 'kv_down' ? 'k' : p.name === 'kv_up' ? 'v' : 'o';
    out[key].push([p.in, p.out]);
  }
  return out;
}

/** One MLA width as a config.json gives it: written, `null` (q_lora_rank: direct queries, 0) or the class default. */
export interface MlaWidthRead {
  readonly field: keyof MlaSpec;
  readonly key: string;
  readonly value: number;
  readonly how: 'written' | 'null' | 'default';
}

/**
 * The MLA widths of a config.json object, the rule both config.json readers follow: none when `kv_lora_rank` is null,
 * or absent outside the MLA families; `q_lora_rank` null is 0; a missing width takes DeepseekV3Config's default; the
 * first width that is not a positive whole number is `bad`.
 */
export function readMlaWidths(c: Readonly<Record<string, unknown>>, modelType: string):
  { readonly widths: readonly MlaWidthRead[] } | { readonly bad: { readonly field: keyof MlaSpec; readonly key: string; readonly value: unknown } } | undefined {
  if (c.kv_lora_rank === null || (c.kv_lora_rank === undefined && !MLA_MODEL_TYPES.has(modelType))) return undefined;
  const widths: MlaWidthRead[] = [];
  for (const [field, key, fallback] of MLA_CONFIG_KEYS) {
    const v = c[key];
    if (field === 'qLoraRank' && v === null) widths.push({ field, key, value: 0, how: 'null' });
    else if (typeof v === 'number' && Number.isInteger(v) && v > 0) widths.push({ field, key, value: v, how: 'written' });
    else if (v === undefined) widths.push({ field, key, value: fallback, how: 'default' });
    else return { bad: { field, key, value: v } };
  }
  return { widths };
}

