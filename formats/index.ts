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
import { mergeDefaults } from './common/defaults';
import { resolveInterpolations } from './common/interpolate';
import type { KNode } from './common/tree';
import { detectFormat } from './detect';
import { initShellParser } from './common/shell/treeSitter';
import type { SourceReader } from './megatron/script';
import { FORMATS } from './registry';
import { readTorchtitanPython, torchtitanConfigFunctions } from './torchtitan/python';

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

function syntax(s: FactSink, t: ParsedTree): ParsedTree {
  for (const e of t.errors) s.diag('syntax', 'error', e.message, e.range);
  return t;
}

/** What a reader may read besides the document: files a launch script `source`s (bounded by the caller's host). */
export interface ParseOptions {
  /** Text of a file a script sources, by the path as written and the folder the script `cd`ed into. */
  readonly readSource?: SourceReader;
  /** The configuration function to read in a torchtitan Python module (default: its first). */
  readonly symbol?: string;
}

/**
 * A YAML config as its OmegaConf / Hydra loader builds it: the bases its `defaults:` names merged in (when the
 * caller can read other files), then whole-value interpolations resolved. A base that is not found is said.
 */
function omegaConf(s: FactSink, root: KNode | undefined, readSource: SourceReader | undefined): KNode | undefined {
  const merged = mergeDefaults(root, readSource);
  for (const m of merged.missing.slice(0, 5)) {
    s.diag('defaults-missing', 'info', `defaults: names ${m}, which was not found next to this file; only the values written here and in the bases found are read.`, undefined);
  }
  return resolveInterpolations(merged.root);
}

/**
 * Reads function `symbol` of a torchtitan Python configuration module (formats/torchtitan/python.ts) into facts of
 * the torchtitan format, located in that module. Nothing in it is run.
 */
export function parsePythonConfig(uri: string, text: string, symbol: string): ConfigFacts {
  const s = new FactSink('torchtitan', uri);
  if (typeof text !== 'string' || text.length > MAX_CONFIG_CHARS) {
    s.diag('too-large', 'error', tooLarge(typeof text === 'string' ? text.length : 0), undefined);
    return s.build();
  }
  try {
    const family = /(?:^|[\\/])models[\\/](\w+)[\\/]config_registry\.py$/.exec(uri)?.[1];
    readTorchtitanPython(s, text, new LineIndex(text), symbol, family);
  } catch (e) {
    s.diag('internal', 'info', `ShardLens could not finish reading this file: ${String(e).slice(0, 200)}`, undefined);
  }
  return s.build();
}

/** Reads a config file into facts. Unknown formats give empty facts with an info diagnostic. */
export function parseConfig(uri: string, text: string, format?: FormatId, opts: ParseOptions = {}): ConfigFacts {
  if (typeof text !== 'string' || text.length > MAX_CONFIG_CHARS) {
    const s = new FactSink(format ?? 'deepspeed', uri);
    s.diag('too-large', 'error', tooLarge(typeof text === 'string' ? text.length : 0), undefined);
    return s.build();
  }
  const detected = format ?? detectFormat(uri, text, opts.readSource);
  // A torchtitan Python module opened on its own: one of its configuration functions, the first unless one is named.
  if (detected === 'torchtitan' && /\.py$/i.test(uri)) return parsePythonConfig(uri, text, opts.symbol ?? torchtitanConfigFunctions(text)[0]?.name ?? '');
  const fmt = detected ?? 'deepspeed';
  const s = new FactSink(fmt, uri);
  if (!detected && !/\.json$/i.test(uri)) {
    s.diag('unknown-format', 'info', 'ShardLens does not recognise this file as a training config.', undefined);
    return s.build();
  }
  try {
    const li = new LineIndex(text);
    const f = FORMATS[fmt];
    const tree = f.syntax === 'json' ? jsonTree : f.syntax === 'toml' ? tomlTree : f.syntax === 'yaml' ? yamlTree : undefined;
    const parsed = tree ? syntax(s, tree(text, li)).root : undefined;
    const root = f.syntax === 'yaml' ? omegaConf(s, parsed, opts.readSource) : parsed;
    f.read(s, { root, text, li, readSource: opts.readSource });
  } catch (e) {
    s.diag('internal', 'info', `ShardLens could not finish reading this file: ${String(e).slice(0, 200)}`, undefined);
  }
  return s.build();
}
