/** Axolotl's `plugins:` list (src/axolotl/integrations): which integration a config loads, by its class path. */
import { entry, type KEntry, type KNode } from './tree';

/** The `plugins` entry and the item naming a class that `pattern` matches (undefined where the list has none). */
export function axolotlPlugin(root: KNode | undefined, pattern: RegExp): { plugins: KEntry | undefined; item: KNode | undefined } {
  const plugins = entry(root, 'plugins');
  const items = plugins?.value.kind === 'list' ? plugins.value.items ?? [] : [];
  return { plugins, item: items.find((i) => typeof i.value === 'string' && pattern.test(i.value.trim())) };
}
