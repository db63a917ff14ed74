/**
 * Shared pieces of the Hugging Face YAML rewriters (Accelerate config, Axolotl, LLaMA-Factory): FSDP keys, notes and
 * DeepSpeed JSON names. Hugging Face gradient checkpointing recomputes whole layers, so 'selective' has no key there.
 */
import type { YamlEditor } from './yamlEdit';
import type { LayoutTarget } from './types';

const FSDP_V1 = { 3: 'FULL_SHARD', 2: 'SHARD_GRAD_OP', 0: 'NO_SHARD', 1: 'SHARD_GRAD_OP' } as const;
const FSDP_V1_HYBRID = { 3: 'HYBRID_SHARD', 2: 'HYBRID_SHARD_ZERO2', 0: 'NO_SHARD', 1: 'HYBRID_SHARD_ZERO2' } as const;
/** Accelerate's 1-based index form of the FSDP v1 strategy (`accelerate/utils/constants.py` FSDP_SHARDING_STRATEGY). */
const FSDP_V1_INDEX: Record<string, number> = { FULL_SHARD: 1, SHARD_GRAD_OP: 2, NO_SHARD: 3, HYBRID_SHARD: 4, HYBRID_SHARD_ZERO2: 5 };

/** Sets a key when it exists or its value differs from the default. */
export function setIf(ed: YamlEditor, path: string[], value: string | number | boolean, dflt: string | number | boolean): void {
  if (value !== dflt || ed.get(path) !== undefined) ed.set(path, value);
}

/** FSDP keys, with or without Accelerate's `fsdp_` prefix. */
export function writeFsdp(ed: YamlEditor, t: LayoutTarget, prefix: '' | 'fsdp_', notes: string[]): void {
  const key = (k: string): string[] => ['fsdp_config', `${prefix}${k}`];
  const version = Number(ed.get(['fsdp_config', `fsdp_version`]) ?? ed.get(['fsdp_version']) ?? 1);
  if (version >= 2 || ed.get(key('reshard_after_forward')) !== undefined) {
    if (t.zero === 0) notes.push('FSDP2 always shards; ZeRO-0 means plain DDP (no fsdp_config).');
    ed.set(key('reshard_after_forward'), t.zero === 3);
    if (t.shardGroup !== undefined && prefix === 'fsdp_') {
      ed.set(['parallelism_config', 'parallelism_config_dp_replicate_size'], t.dp / t.shardGroup);
      ed.set(['parallelism_config', 'parallelism_config_dp_shard_size'], t.shardGroup);
    }
  } else {
    const name = (t.shardGroup !== undefined ? FSDP_V1_HYBRID : FSDP_V1)[t.zero];
    const cur = ed.get(key('sharding_strategy'));
    ed.set(key('sharding_strategy'), typeof cur === 'number' ? FSDP_V1_INDEX[name] : name);
  }
  setIf(ed, key('offload_params'), t.offload !== 'none', false);
  setIf(ed, key('activation_checkpointing'), t.recompute !== 'none', false);
}

export function recomputeNote(t: LayoutTarget, notes: string[]): void {
  if (t.recompute === 'selective') notes.push('Selective recomputation has no Hugging Face key; gradient checkpointing (full) was used.');
}

export function parallelNotes(t: LayoutTarget, notes: string[], what: string): void {
  if (t.pp > 1) notes.push(`Pipeline parallelism (PP ${t.pp}) is not available with ${what}.`);
}

/** A DeepSpeed JSON path with the stage digit swapped (Axolotl `zero3_bf16.json`, LLaMA-Factory `ds_z3_config.json`). */
export function swapStage(path: string, zero: number, offload: boolean): string | undefined {
  if (!/(zero|ds_z)[0-3]/.test(path)) return undefined;
  let p = path.replace(/(zero|ds_z)[0-3]/, `$1${zero}`);
  if (/ds_z\d_config/.test(p) && offload && zero === 3) p = p.replace(/ds_z3_config/, 'ds_z3_offload_config');
  if (!offload) p = p.replace(/ds_z3_offload_config/, 'ds_z3_config');
  return p;
}
