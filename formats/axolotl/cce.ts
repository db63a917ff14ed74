/**
 * Axolotl's Cut Cross-Entropy plugin (src/axolotl/integrations/cut_cross_entropy: `plugins:
 * [axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin]`, whose CutCrossEntropyArgs default
 * `cut_cross_entropy` to true), read as `training.lossFusion` 'cce' (shared/memory/loss.ts `cceLossBytes`,
 * shared/time/cceLoss.ts). The key without the plugin does nothing, and Axolotl refuses it beside Liger's fused loss.
 */
import type { FactSink } from '../common/sink';
import { locOf } from '../common/read';
import { toBool } from '../common/text';
import { entry, type KNode } from '../common/tree';
import { axolotlPlugin } from '../common/axolotlPlugins';

const PLUGIN = /(^|\.)CutCrossEntropyPlugin$/;

/** The Cut Cross-Entropy plugin and key of an Axolotl config. */
export function readAxolotlCce(s: FactSink, root: KNode | undefined): void {
  const { plugins, item } = axolotlPlugin(root, PLUGIN);
  const key = entry(root, 'cut_cross_entropy');
  const on = key ? toBool(key.value.value) : undefined;
  if (!item) {
    if (key && on) s.diag('cce-plugin-missing', 'warning', "cut_cross_entropy takes effect only with the plugin listed (plugins: [axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin]); without it Axolotl computes transformers' loss, as counted here.", key.keyRange, ['training.lossFusion']);
    return;
  }
  if (on === false) return;
  if (s.value('training.lossFusion') === 'liger') {
    s.diag('axolotl-loss-conflict', 'warning', "Axolotl refuses Cut Cross-Entropy beside Liger's fused linear cross-entropy (check_cross_entropy_conflicts): turn one off. Counted here as Cut Cross-Entropy.", (key ?? plugins!).keyRange, ['training.lossFusion']);
  }
  const loc = key ? locOf(key, 'cut_cross_entropy') : { key: 'plugins', keyRange: plugins!.keyRange, valueRange: item.range };
  s.explicit('training.lossFusion', 'cce', loc);
  s.diag('cce-loss', 'info', "Axolotl's Cut Cross-Entropy plugin: the head's logits are formed block by block on chip and never kept (memory modelled); its backward forms them again and skips the blocks below its gradient filter, so the head's backward is timed in full, an upper bound.", loc.keyRange, ['training.lossFusion']);
}
