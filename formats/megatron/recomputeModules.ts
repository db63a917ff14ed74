/**
 * `--recompute-modules` (TransformerConfig.recompute_modules; Megatron-Bridge and YAML `recompute_modules`): which
 * submodules Megatron's selective recomputation reruns, with the checks Megatron-LM's `__post_init__` makes
 * (megatron/core/transformer/transformer_config.py at d98e8a64) as diagnostics at the value.
 */
import type { TextRange } from '../../shared/plan/types';
import type { FlagArg } from '../common/shell/commandLine';
import type { FactSink, Loc } from '../common/sink';
import type { KNode } from '../common/tree';
import { toBool } from '../common/text';
import { MEGATRON_RECOMPUTE_MODULES, UNMODELLED_RECOMPUTE_MODULES, parseRecomputeModules } from '../../shared/plan/recomputeModules';

/** A YAML list of module names as an override writes it (`[layernorm,moe_act]`; `[]` for none), for parseRecomputeModules. */
export function moduleListText(node: KNode): string {
  return `[${(node.items ?? []).map((i) => String(i.value ?? '')).join(',')}]`;
}

/** The words of a list argument: its value and the words after it up to the next flag. */
const wordsOf = (a: FlagArg): string => [a.value ?? '', ...(a.more ?? [])].join(' ');

/**
 * A module list as a file writes it (words, a Python or YAML list), read into `training.recomputeModules` (a comma
 * list; empty when it names none), with a warning at `range` for a name Megatron does not accept and an info for
 * the ones ShardLens does not model. Returns the modules read.
 */
export function recomputeModulesFromText(s: FactSink, text: string, loc: Loc, range: TextRange | undefined, what: string): string[] {
  const { modules, unknown } = parseRecomputeModules(text);
  s.explicit('training.recomputeModules', modules.join(','), loc);
  const unmodelled = unknown.filter((u) => UNMODELLED_RECOMPUTE_MODULES.includes(u));
  const bad = unknown.filter((u) => !UNMODELLED_RECOMPUTE_MODULES.includes(u));
  if (bad.length) {
    s.diag('invalid-value', 'warning', `${what}: ${bad.join(', ')} ${bad.length > 1 ? 'are not modules' : 'is not a module'} Megatron recomputes (it accepts ${[...MEGATRON_RECOMPUTE_MODULES, ...UNMODELLED_RECOMPUTE_MODULES].join(', ')}) and would stop at start-up.`, range, ['training.recomputeModules']);
  }
  if (unmodelled.length) {
    s.diag('unmodelled-value', 'info', `${what}: ${unmodelled.join(', ')} (Gated DeltaProduct or hyper-connection recomputation) is not modelled: the estimate keeps what those modules save and does not time their rerun.`, range, ['training.recomputeModules']);
  }
  return modules;
}

/**
 * Reads `--recompute-modules` (recomputeModulesFromText) and says what Megatron would refuse: `moe_act` without
 * grouped GEMM experts, `mla_up_proj` without multi-head latent attention, `gdn_norm_out` without Gated DeltaNet
 * layers, and the list without selective recomputation.
 */
export function readRecomputeModules(s: FactSink, seen: Map<string, FlagArg>, at: (a: FlagArg) => TextRange | undefined): void {
  const arg = seen.get('--recompute-modules');
  if (!arg || arg.unresolved) return;
  const range = at(arg);
  const loc = { key: arg.spelled ?? arg.flag, keyRange: arg.flagRange, valueRange: arg.valueRange ?? arg.flagRange, uri: arg.uri };
  const modules = recomputeModulesFromText(s, wordsOf(arg), loc, range, arg.flag);
  const gran = seen.get('--recompute-granularity')?.value?.replace(/["']/g, '');
  const selective = gran === 'selective' || seen.has('--recompute-activations');
  if (!selective && modules.length) {
    s.diag('recompute-modules-ignored', 'info', `${arg.flag} applies to selective recomputation only (--recompute-granularity selective); ${gran === 'full' ? 'full recomputation reruns whole layers' : 'without it nothing is recomputed'}.`, range, ['training.recomputeModules']);
  }
  const on = (flag: string, value?: RegExp) => {
    const a = seen.get(flag);
    return !!a && (value ? value.test(a.value ?? '') : toBool(a.value ?? 'true') !== false);
  };
  const need = (m: string, ok: boolean, flag: string, what: string) => {
    if (modules.includes(m) && !ok) s.diag('megatron-recompute-module', 'warning', `${arg.flag}: ${m} needs ${what} (${flag}); Megatron stops at start-up without it.`, range, ['training.recomputeModules']);
  };
  need('moe_act', on('--moe-grouped-gemm'), '--moe-grouped-gemm', 'grouped GEMM experts');
  need('mla_up_proj', on('--multi-latent-attention'), '--multi-latent-attention', 'multi-head latent attention');
  need('gdn_norm_out', on('--experimental-attention-variant', /^(gated_delta_net|gdn2?)$/), '--experimental-attention-variant gdn', 'Gated DeltaNet layers');
}
