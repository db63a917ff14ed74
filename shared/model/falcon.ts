/**
 * Falcon's config.json, as transformers reads it (models/falcon/configuration_falcon.py FalconConfig and
 * modeling_falcon.py), shared by the two config.json readers (shared/model/hfConfig.ts, formats/hf-config/reader.ts).
 * The hub's first Falcon configs were written for the remote-code RWConfig (model_type "RefinedWebModel" for 7B,
 * "RefinedWeb" for 40B, with `n_embed`, `n_layer`, `n_head` and `n_head_kv`); both spellings are read.
 */

/** Falcon's model types: transformers' "falcon" and the remote-code RWConfig's. */
export const isFalcon = (modelType: string): boolean => modelType === 'falcon' || modelType === 'refinedwebmodel' || modelType === 'refinedweb';

/** FalconConfig's defaults for the widths a config.json may omit (the tiiuae/falcon-7b architecture). */
export const FALCON_DEFAULTS = { hidden: 4544, layers: 32, heads: 71, vocab: 65024, maxPositions: 2048, source: 'transformers FalconConfig' } as const;

/** The keys of Falcon's key/value head count: FalconConfig's `num_kv_heads`, RWConfig's `n_head_kv`. */
export const FALCON_KV_KEYS = ['num_kv_heads', 'n_head_kv'] as const;

/**
 * How Falcon's attention shares keys and values (modeling_falcon.py FalconAttention): `num_kv_heads` heads under the
 * new decoder architecture (Falcon-40B, 180B) or without multi-query attention, else one (Falcon-7B; `multi_query`
 * defaults to true and is ignored under the new architecture). `num_kv_heads` unset is `num_attention_heads`. The
 * remote-code "RefinedWeb" type is the 40B's new architecture with `n_head_kv` groups (its modelling_RW.py), whatever
 * `new_decoder_architecture` says; "RefinedWebModel" is the 7B's.
 */
export function falconNewArchitecture(c: Record<string, unknown>, modelType: string): boolean {
  return c.new_decoder_architecture === true || modelType === 'refinedweb';
}

/** One key/value head: multi-query attention outside the new decoder architecture. */
export function falconSharesOneKv(c: Record<string, unknown>, modelType: string): boolean {
  return !falconNewArchitecture(c, modelType) && c.multi_query !== false;
}

/**
 * The key that makes attention and the MLP run side by side on one block input, or undefined when they run one after
 * the other: `new_decoder_architecture` (always parallel), else `parallel_attn` (FalconConfig default true, so a config
 * without it is parallel by its model_type).
 */
export function falconParallelKey(c: Record<string, unknown>, modelType: string): string | undefined {
  if (c.new_decoder_architecture === true) return 'new_decoder_architecture';
  if (falconNewArchitecture(c, modelType)) return 'model_type';
  if (c.parallel_attn === false) return undefined;
  return c.parallel_attn === true ? 'parallel_attn' : 'model_type';
}

/** The code of the info that a Falcon block runs attention and the MLP in parallel (kept with presets and referenced configs). */
export const PARALLEL_BLOCK_CODE = 'hf-config-parallel-block';

/** The info's words: what differs from the consecutive blocks ShardLens counts. */
export function parallelBlockMessage(key: string, prefix = ''): string {
  return `config.json ${prefix}${key}: Falcon runs attention and the MLP side by side on one block input; ShardLens counts them as `
    + 'consecutive blocks. Parameters and FLOPs are the same (a single LayerNorm per layer, as in Falcon-7B, is counted as '
    + 'two: 2·hidden parameters more); the activations it counts as saved are one LayerNorm input per layer more than Falcon keeps (and '
    + 'with a single LayerNorm, its output too): an estimate slightly high.';
}
