/**
 * Config formats: detection and one reader per format, each returning ConfigFacts with source ranges.
 * `parseConfig` is synchronous and never throws; call `initFormats()` once first so shell scripts can be read.
 */
import type { ConfigFacts, FormatId } from '../shared/plan/facts';
import { jsonTree } from './common/jsonTree';
import { FactSink } from './common/sink';
import { LineIndex } from './common/text';
import { tomlTree } from './common/tomlTree';
import type { ParsedTree } from './common/tree';
import { yamlTree } from './common/yamlTree';
import { detectFormat } from './detect';
import { readDeepSpeed } from './deepspeed/reader';
import { readHfConfig } from './hf-config/reader';
import { readMegatronScript } from './megatron/script';
import { initShellParser } from './common/shell/treeSitter';
import { readTorchtitan } from './torchtitan/reader';
import { readAccelerate } from './accelerate/reader';
import { readAxolotl } from './axolotl/reader';
import { readLightning, readLitgpt, readTorchtune } from './lightning/reader';
import { readLlamaFactory } from './llamafactory/reader';
import { readMegatronYaml } from './megatron/yaml';
import { readNanotron } from './nanotron/reader';

export { detectFormat } from './detect';
export { initShellParser } from './common/shell/treeSitter';

/** Largest document read (bytes of text); bigger ones get a diagnostic only. */
const MAX_TEXT = 4_000_000;

/** One-time async initialisation (loads the tree-sitter bash grammar). */
export async function initFormats(): Promise<void> {
  await initShellParser();
}

const YAML_READERS: Partial<Record<FormatId, (s: FactSink, root: ParsedTree['root']) => void>> = {
  accelerate: readAccelerate,
  axolotl: readAxolotl,
  llamafactory: readLlamaFactory,
  nanotron: readNanotron,
  'megatron-yaml': readMegatronYaml,
  lightning: readLightning,
  litgpt: readLitgpt,
  torchtune: readTorchtune,
};

function syntax(s: FactSink, t: ParsedTree): ParsedTree {
  for (const e of t.errors) s.diag('syntax', 'error', e.message, e.range);
  return t;
}

/** Reads a config file into facts. Unknown formats give empty facts with an info diagnostic. */
export function parseConfig(uri: string, text: string, format?: FormatId): ConfigFacts {
  const detected = format ?? detectFormat(uri, text);
  const fmt = detected ?? 'deepspeed';
  const s = new FactSink(fmt, uri);
  if (!detected && !/\.json$/i.test(uri)) {
    s.diag('unknown-format', 'info', 'ShardLens does not recognise this file as a training config.', undefined);
    return s.build();
  }
  if (typeof text !== 'string' || text.length > MAX_TEXT) {
    s.diag('too-large', 'info', 'The file is too large for ShardLens to read.', undefined);
    return s.build();
  }
  try {
    const li = new LineIndex(text);
    if (fmt === 'deepspeed') readDeepSpeed(s, syntax(s, jsonTree(text, li)).root);
    else if (fmt === 'hf-config') readHfConfig(s, syntax(s, jsonTree(text, li)).root);
    else if (fmt === 'torchtitan') readTorchtitan(s, syntax(s, tomlTree(text, li)).root);
    else if (fmt === 'megatron-script') readMegatronScript(s, text, li);
    else {
      const reader = YAML_READERS[fmt];
      const t = syntax(s, yamlTree(text, li));
      reader?.(s, t.root);
    }
  } catch (e) {
    s.diag('internal', 'info', `ShardLens could not finish reading this file: ${String(e).slice(0, 200)}`, undefined);
  }
  return s.build();
}
