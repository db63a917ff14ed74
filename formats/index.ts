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
import { readMegatronScript, type SourceReader } from './megatron/script';
import { initShellParser } from './common/shell/treeSitter';
import { readTorchtitan } from './torchtitan/reader';
import { readAccelerate } from './accelerate/reader';
import { readAxolotl } from './axolotl/reader';
import { readLightning, readLitgpt, readTorchtune } from './lightning/reader';
import { readLlamaFactory } from './llamafactory/reader';
import { readMegatronYaml } from './megatron/yaml';
import { readNanotron } from './nanotron/reader';
import { readGptNeox } from './gpt-neox/reader';
import { readHfTrainerYaml } from './hf-trainer/yaml';
import { readNemo } from './nemo/reader';
import { readNemoRl } from './nemo-rl/reader';
import { readRoll } from './roll/reader';
import { readEasyR1 } from './easyr1/reader';
import { readLlmFoundry } from './llm-foundry/reader';

export { detectFormat } from './detect';
export { initShellParser } from './common/shell/treeSitter';

/**
 * Largest document read, in characters: 256 KiB, above the largest real training config we know (a 164 KB OLMo
 * YAML; DeepSpeed, torchtitan and Megatron configs are a few kB). Parse cost grows with size (a 3.4 MB TOML took
 * 10 s), so bigger files get a diagnostic and no estimate.
 */
export const MAX_CONFIG_CHARS = 256 * 1024;

/** The message for a document above MAX_CONFIG_CHARS. */
export function tooLarge(chars: number): string {
  return `This file has ${Math.round(chars / 1024).toLocaleString('en-US')} K characters; ShardLens reads configs up to ${MAX_CONFIG_CHARS / 1024} K (real training configs are a few kB), so it gives no estimate.`;
}

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
  nemo: readNemo,
  'gpt-neox': readGptNeox,
  'hf-trainer': readHfTrainerYaml,
  'nemo-rl': readNemoRl,
  roll: readRoll,
  easyr1: readEasyR1,
  'llm-foundry': readLlmFoundry,
};

function syntax(s: FactSink, t: ParsedTree): ParsedTree {
  for (const e of t.errors) s.diag('syntax', 'error', e.message, e.range);
  return t;
}

/** What a reader may read besides the document: files a launch script `source`s (bounded by the caller's host). */
export interface ParseOptions {
  /** Text of a file a script sources, by the path as written and the folder the script `cd`ed into. */
  readonly readSource?: SourceReader;
}

/** Reads a config file into facts. Unknown formats give empty facts with an info diagnostic. */
export function parseConfig(uri: string, text: string, format?: FormatId, opts: ParseOptions = {}): ConfigFacts {
  if (typeof text !== 'string' || text.length > MAX_CONFIG_CHARS) {
    const s = new FactSink(format ?? 'deepspeed', uri);
    s.diag('too-large', 'error', tooLarge(typeof text === 'string' ? text.length : 0), undefined);
    return s.build();
  }
  const detected = format ?? detectFormat(uri, text);
  const fmt = detected ?? 'deepspeed';
  const s = new FactSink(fmt, uri);
  if (!detected && !/\.json$/i.test(uri)) {
    s.diag('unknown-format', 'info', 'ShardLens does not recognise this file as a training config.', undefined);
    return s.build();
  }
  try {
    const li = new LineIndex(text);
    if (fmt === 'deepspeed') readDeepSpeed(s, syntax(s, jsonTree(text, li)).root);
    else if (fmt === 'hf-config') readHfConfig(s, syntax(s, jsonTree(text, li)).root);
    else if (fmt === 'torchtitan') readTorchtitan(s, syntax(s, tomlTree(text, li)).root);
    else if (fmt === 'megatron-script') readMegatronScript(s, text, li, opts.readSource);
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
