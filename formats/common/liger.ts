/**
 * Liger-Kernel as the trainers that load transformers' models switch it on (docs/dialects.md#liger-kernel): the fused
 * linear cross-entropy is read as `training.lossFusion` 'liger' (shared/memory/loss.ts, shared/time/ligerLoss.ts) and
 * its RMSNorm, RoPE and SwiGLU kernels as `training.ligerKernels` (shared/plan/liger.ts).
 */
import { axolotlPlugin } from './axolotlPlugins';
import type { FactSink, Loc } from './sink';
import { locOf } from './read';
import { toBool } from './text';
import { entry, type KEntry, type KNode } from './tree';
import { LIGER_KERNELS, ligerKernelsText, type LigerKernel } from '../../shared/plan/liger';

/** The diagnostic that says what of Liger the estimate counts. */
export const LIGER_CODE = 'liger-kernels';

const KERNEL_WORDS: Readonly<Record<LigerKernel, string>> = { rms_norm: 'RMSNorm', rope: 'RoPE', swiglu: 'SwiGLU/GeGLU' };

/** What a trainer applies of Liger: its fused loss (or why not) and its kernels. */
export interface LigerUse {
  readonly fusedLoss: boolean;
  /** Why the fused loss is off, when it is. */
  readonly why?: string;
  readonly kernels: ReadonlySet<LigerKernel>;
}

/** Records what a trainer applies of Liger at the key (or flag) that turned it on, with an info that says what counts. */
export function applyLiger(s: FactSink, loc: Loc, who: string, use: LigerUse): void {
  if (use.fusedLoss) s.explicit('training.lossFusion', 'liger', loc);
  const kernels = ligerKernelsText(use.kernels);
  if (kernels) s.explicit('training.ligerKernels', kernels, loc);
  const loss = use.fusedLoss
    ? 'its fused linear cross-entropy is modelled (the head and the loss run chunk by chunk in the forward, which makes both gradients; no logits are kept)'
    : `${use.why ?? 'without its fused linear cross-entropy'}: the logits and the loss are counted as transformers computes them (Liger's own cross-entropy kernel, where on, is not modelled)`;
  const on = LIGER_KERNELS.filter((k) => use.kernels.has(k)).map((k) => KERNEL_WORDS[k]);
  const rest = on.length ? `; its ${on.join(', ')} kernels are modelled (fewer saved tensors and memory passes than transformers' eager code)` : '';
  s.diag(LIGER_CODE, 'info', `${who} applies Liger-Kernel: ${loss}${rest}.`, loc.keyRange, ['training.lossFusion', 'training.ligerKernels']);
}

/** Whether a LLaMA-Factory stage keeps Liger's fused loss (loader.py: require_logits = stage not in (pt, sft)). */
export function llamaFactoryStageFusesLoss(stage: string): boolean {
  return stage === 'pt' || stage === 'sft';
}

/** Every kernel Liger's apply functions turn on by default (rope, rms_norm, swiglu = True). */
export const ALL_LIGER_KERNELS: ReadonlySet<LigerKernel> = new Set(LIGER_KERNELS);

/** A key's boolean value (undefined when absent or not a boolean). */
function flag(root: KNode | undefined, key: string): { e: KEntry; on: boolean } | undefined {
  const e = entry(root, key);
  const on = e ? toBool(e.value.value) : undefined;
  return e && on !== undefined ? { e, on } : undefined;
}

/**
 * The HF Trainer's Liger from its keyword arguments (a YAML map, or the JSON text of a flag): Liger's defaults unless
 * `fused_linear_cross_entropy`, `rms_norm`, `rope` or `swiglu` is set false.
 */
export function hfLigerUse(off: (key: string) => boolean, key: string): LigerUse {
  const kernels = new Set(LIGER_KERNELS.filter((k) => !off(k)));
  const fused = !off('fused_linear_cross_entropy');
  return { fusedLoss: fused, kernels, ...(fused ? {} : { why: `with ${key} fused_linear_cross_entropy false` }) };
}

/**
 * HF TrainingArguments `use_liger_kernel` (transformers trainer.py: `_apply_liger_kernel_to_instance(model, **kwargs)`
 * with `liger_kernel_config`, later `liger_kernel_kwargs`; Liger's apply functions default to its fused loss, RMSNorm,
 * RoPE and SwiGLU for every model type they patch).
 */
export function readHfLiger(s: FactSink, root: KNode | undefined, who = 'The HF Trainer'): void {
  const use = flag(root, 'use_liger_kernel');
  if (!use?.on) return;
  const key = ['liger_kernel_kwargs', 'liger_kernel_config'].find((k) => entry(root, k)?.value.kind === 'map') ?? 'liger_kernel_config';
  const cfg = entry(root, key)?.value;
  applyLiger(s, locOf(use.e, 'use_liger_kernel'), who, hfLigerUse((k) => flag(cfg, k)?.on === false, key));
}

/**
 * Axolotl's Liger plugin (src/axolotl/integrations/liger: `plugins: [axolotl.integrations.liger.LigerPlugin]` with
 * `liger_fused_linear_cross_entropy`, `liger_cross_entropy`, `liger_rms_norm`, `liger_rope`, `liger_glu_activation`,
 * `liger_layer_norm`). Without the plugin those keys do nothing, which is warned at each one set true.
 */
export function readAxolotlLiger(s: FactSink, root: KNode | undefined): void {
  const keys = ['liger_fused_linear_cross_entropy', 'liger_cross_entropy', 'liger_rms_norm', 'liger_rope', 'liger_glu_activation', 'liger_layer_norm'];
  const set = keys.map((k) => ({ k, f: flag(root, k) })).filter((x) => x.f?.on);
  if (!set.length) return;
  if (!axolotlPlugin(root, /(^|\.)LigerPlugin$/).item) {
    for (const { k, f } of set) s.diag('liger-plugin-missing', 'warning', `${k} takes effect only with the Liger plugin listed (plugins: [axolotl.integrations.liger.LigerPlugin]); without it Axolotl runs transformers' own kernels, as counted here.`, f!.e.keyRange, ['training.lossFusion', 'training.ligerKernels']);
    return;
  }
  const has = (k: string) => set.some((x) => x.k === k);
  const kernels = new Set<LigerKernel>();
  if (has('liger_rms_norm')) kernels.add('rms_norm');
  if (has('liger_rope')) kernels.add('rope');
  if (has('liger_glu_activation')) kernels.add('swiglu');
  const fused = set.find((x) => x.k === 'liger_fused_linear_cross_entropy');
  const at = fused ?? set[0];
  applyLiger(s, locOf(at.f!.e, at.k), 'Axolotl', { fusedLoss: !!fused, kernels, ...(fused ? {} : { why: 'without liger_fused_linear_cross_entropy' }) });
}

/**
 * LLaMA-Factory `enable_liger_kernel` (src/llamafactory/model/model_utils/liger_kernel.py, called from loader.py with
 * require_logits = stage not in (pt, sft)): every kernel, and the fused loss in pre-training and SFT; the stages that
 * need the logits (rm, dpo, kto, ppo) turn it off and use Liger's cross-entropy kernel instead.
 */
export function llamaFactoryLigerUse(stage: string): LigerUse {
  const fused = llamaFactoryStageFusesLoss(stage);
  return { fusedLoss: fused, kernels: ALL_LIGER_KERNELS, ...(fused ? {} : { why: `at stage ${stage}, which needs the logits, without its fused loss` }) };
}

/** LLaMA-Factory's `enable_liger_kernel` in its YAML (stage sft when unstated). */
export function readLlamaFactoryLiger(s: FactSink, root: KNode | undefined): void {
  const use = flag(root, 'enable_liger_kernel');
  if (!use?.on) return;
  const st = entry(root, 'stage');
  const stage = st && typeof st.value.value === 'string' ? st.value.value.trim().toLowerCase() : 'sft';
  applyLiger(s, locOf(use.e, 'enable_liger_kernel'), 'LLaMA-Factory', llamaFactoryLigerUse(stage));
}
