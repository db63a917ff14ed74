/** Shared value vocabularies: precision strings, optimizer names, FSDP strategies, LoRA targets. */
import type { FactValue } from '../../shared/plan/facts';

/** Precision words used by HF, Accelerate, Lightning, torchtitan and nanotron → plan precision. */
export function precisionOf(v: string): string | undefined {
  const x = v.trim().toLowerCase().replace(/_/g, '-');
  if (['bf16', 'bf16-mixed', 'bfloat16-mixed', 'amp-bf16', 'bf16_mixed'].includes(x)) return 'bf16-mixed';
  if (['fp16', '16', '16-mixed', 'amp-fp16', 'fp16-mixed', 'float16'].includes(x)) return 'fp16-mixed';
  if (['bf16-true', 'bfloat16', 'pure-bf16'].includes(x)) return 'bf16';
  if (['fp8', 'fp8-mixed', 'amp-fp8', 'transformer-engine', 'transformer-engine-float16'].includes(x)) return 'fp8-mixed';
  if (['no', 'fp32', '32', '32-true', 'float32', 'none'].includes(x)) return 'fp32';
  return undefined;
}

/** HF/Axolotl/torchtune optimizer names → plan optimizer kind. */
export function optimizerOf(v: string): string | undefined {
  const x = v.trim().toLowerCase();
  if (/8bit|bnb|8_bit/.test(x)) return 'adam-8bit';
  if (x.includes('adafactor')) return 'adafactor';
  if (x.includes('lion')) return 'lion';
  if (x.includes('muon')) return 'muon';
  if (x.includes('adamw')) return 'adamw';
  if (x.includes('adam')) return 'adam';
  if (x.includes('sgd')) return 'sgd-momentum';
  return undefined;
}

/** FSDP sharding strategy (name or Accelerate's 1-based index) → ZeRO stage and strategy name. */
export function fsdpStrategyOf(v: unknown): { stage: 0 | 2 | 3; strategy: string } | undefined {
  const names = ['FULL_SHARD', 'SHARD_GRAD_OP', 'NO_SHARD', 'HYBRID_SHARD', '_HYBRID_SHARD_ZERO2'];
  let name: string | undefined;
  if (typeof v === 'number' && Number.isInteger(v)) name = names[v - 1];
  else if (typeof v === 'string') {
    const up = v.trim().toUpperCase();
    name = up === 'HYBRID_SHARD_ZERO2' ? '_HYBRID_SHARD_ZERO2' : /^\d$/.test(up) ? names[Number(up) - 1] : names.find((n) => n === up);
  }
  if (!name) return undefined;
  const stage = name === 'NO_SHARD' ? 0 : name === 'SHARD_GRAD_OP' || name === '_HYBRID_SHARD_ZERO2' ? 2 : 3;
  return { stage, strategy: name };
}

/**
 * Module names from words as trainers take them: names, comma lists, or a Python list in one shell word (alpaca-lora's
 * README: `--lora_target_modules '[q_proj,v_proj]'`, read by python-fire; scripts passing `"['q_proj', 'v_proj']"` to an
 * eval'd argument), whose brackets and quotes are stripped. Empty names and Python's / YAML's None are dropped.
 */
export function moduleNames(words: readonly string[]): string[] {
  return words.flatMap((w) => w.split(',')).map((w) => w.trim().replace(/^[[('"\s]+|[\])'"\s]+$/g, ''))
    .filter((w) => w.length > 0 && w !== 'None' && w !== 'null');
}

/**
 * LoRA target module names → plan projection names (names as moduleNames reads them). Fused projections count as
 * their parts (GPT-NeoX, Falcon and BLOOM `query_key_value`, Baichuan `W_pack`, MPT `Wqkv`, Phi-3 `qkv_proj` and `gate_up_proj`):
 * the plan then counts one LoRA A per part where the fused linear has one in all, 2·h·r more parameters per layer
 * (under 0.1 % of an adapter's states at r = 8 on a 4,096-wide model, against q, k, v alone).
 */
export function loraTargetsOf(mods: readonly string[]): FactValue | undefined {
  const names = moduleNames(mods);
  if (names.some((m) => m === 'all' || m === 'all-linear')) return 'q,k,v,o,gate,up,down';
  const out = [...new Set(names.flatMap((m) => (Object.hasOwn(LORA_TARGETS, m) ? LORA_TARGETS[m].split(',') : [])))];
  return out.length ? out.join(',') : undefined;
}

/** Target module names loraTargetsOf does not size (not a projection it knows, nor all / all-linear), once each. */
export function unsizedLoraTargets(mods: readonly string[]): string[] {
  return [...new Set(moduleNames(mods).filter((m) => m !== 'all' && m !== 'all-linear' && !Object.hasOwn(LORA_TARGETS, m)))];
}

/** PEFT module names → plan projection names (loraTargetsOf). */
const LORA_TARGETS: Readonly<Record<string, string>> = {
  q_proj: 'q', k_proj: 'k', v_proj: 'v', o_proj: 'o', gate_proj: 'gate', up_proj: 'up', down_proj: 'down',
  wq: 'q', wk: 'k', wv: 'v', wo: 'o', w1: 'gate', w3: 'up', w2: 'down', q: 'q', k: 'k', v: 'v', o: 'o',
  // torchtune's attention output projection (torchtune/modules/peft/_utils.py LORA_ATTN_MODULES).
  output_proj: 'o',
  // Multi-head latent attention (transformers DeepseekV3Attention; shared/model/mla.ts mlaLoraShapes).
  q_a_proj: 'q', q_b_proj: 'q', kv_a_proj_with_mqa: 'k', kv_b_proj: 'v',
  query_key_value: 'q,k,v', W_pack: 'q,k,v', Wqkv: 'q,k,v', qkv_proj: 'q,k,v', gate_up_proj: 'gate,up',
  // The attention output of MPT and OPT (`out_proj`), and Qwen3-Next's and Qwen3.5's Gated DeltaNet projections, counted
  // as the attention projections of the same role (shared/model/params.ts loraShapes: every layer as attention).
  out_proj: 'o', in_proj_qkvz: 'q,k,v', in_proj_qkv: 'q,k,v',
};
