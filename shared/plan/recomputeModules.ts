/**
 * Megatron-core's selective recomputation submodules (TransformerConfig.recompute_modules and its checks in
 * megatron/core/transformer/transformer_config.py `__post_init__`, Megatron-LM d98e8a64): which are read, how a file
 * writes the list, and whether a plan recomputes one.
 */
import type { MegatronRecomputeModule, TrainingSpec } from './types';

/** The submodules ShardLens models, in Megatron's order. */
export const MEGATRON_RECOMPUTE_MODULES: readonly MegatronRecomputeModule[] = [
  'core_attn', 'moe_act', 'layernorm', 'mla_up_proj', 'mlp', 'moe', 'shared_experts', 'gdn_norm_out',
];

/** Submodules Megatron accepts that ShardLens does not model (Gated DeltaProduct's and hyper-connections'). */
export const UNMODELLED_RECOMPUTE_MODULES: readonly string[] = ['gdp_in_proj', 'gdp_qkv', 'mhc'];

/** Megatron's default when selective recomputation names no module list (`recompute_modules = ["core_attn"]`). */
export const DEFAULT_RECOMPUTE_MODULES: readonly MegatronRecomputeModule[] = ['core_attn'];

const KNOWN: ReadonlySet<string> = new Set(MEGATRON_RECOMPUTE_MODULES);

/**
 * The module names of a list as files write it: words (`--recompute-modules layernorm moe_act`), a comma list, or a
 * Python or YAML flow list (`[layernorm, moe_act]`, `['mla_up_proj']`, `[]`). `unknown` holds the names Megatron or
 * ShardLens does not know, in order.
 */
export function parseRecomputeModules(text: string): { modules: MegatronRecomputeModule[]; unknown: string[] } {
  const words = text.replace(/[[\]'"]/g, ' ').split(/[\s,]+/).filter((w) => w.length > 0);
  const modules: MegatronRecomputeModule[] = [];
  const unknown: string[] = [];
  for (const w of words) {
    if (KNOWN.has(w)) { if (!modules.includes(w as MegatronRecomputeModule)) modules.push(w as MegatronRecomputeModule); } else unknown.push(w);
  }
  return { modules, unknown };
}

/** Whether selective recomputation reruns a submodule: the plan's list, else Megatron's default (core attention). */
export function recomputesModule(t: Pick<TrainingSpec, 'recompute' | 'recomputeModules'>, m: MegatronRecomputeModule): boolean {
  return t.recompute === 'selective' && (t.recomputeModules ?? DEFAULT_RECOMPUTE_MODULES).includes(m);
}

/** The modules as a bit mask (bit i for MEGATRON_RECOMPUTE_MODULES[i]): 0 unless the plan recomputes selectively. */
export function recomputeModuleMask(t: Pick<TrainingSpec, 'recompute' | 'recomputeModules'>): number {
  return t.recompute === 'selective' ? moduleMaskOf(t.recomputeModules) : 0;
}

/** The bit mask of a module list (undefined: Megatron's default, core attention), whatever the recomputation kind. */
export function moduleMaskOf(list: readonly MegatronRecomputeModule[] | undefined): number {
  let mask = 0;
  for (const m of list ?? DEFAULT_RECOMPUTE_MODULES) mask |= 1 << MEGATRON_RECOMPUTE_MODULES.indexOf(m);
  return mask;
}

/** The bit of one module in recomputeModuleMask. */
export const moduleBit = (m: MegatronRecomputeModule): number => 1 << MEGATRON_RECOMPUTE_MODULES.indexOf(m);
