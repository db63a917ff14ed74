/**
 * torchtitan TOML job configs: [parallelism] degrees and FSDP resharding, [training] batch sizes and CPU offload,
 * [activation_checkpoint] mode. Keys: torchtitan `torchtitan/config/job_config.py` (docs/formats/torchtitan.md).
 * With PP, torchtitan splits `local_batch_size` into microbatches of `pipeline_parallel_microbatch_size`;
 * without PP, `local_batch_size` is the micro batch and accumulation follows from `global_batch_size`.
 */
import { TomlEditor } from '../common/edit/tomlLines';
import type { LayoutTarget, Rewrite } from '../common/edit/types';

/**
 * The table a parallelism key lives in: where the file has it, else [parallelism]; files of the schema before
 * March 2025 (no [parallelism]) keep TP/DP in [training] and PP/CP in [experimental] (docs/formats/torchtitan.md).
 */
function tableOf(ed: TomlEditor, key: string): string {
  for (const t of ['parallelism', 'training', 'experimental']) if (ed.get(t, key) !== undefined) return t;
  if (ed.hasTable('parallelism') || !(ed.hasTable('experimental') || ed.get('training', 'tensor_parallel_degree') !== undefined)) return 'parallelism';
  return /pipeline|context/.test(key) ? 'experimental' : 'training';
}

/**
 * The whole layers per stage that make torchtitan build exactly `stages` stages from `effective` = L + first + last
 * layer-equivalents (⌈effective / it⌉ = stages), or undefined where none does.
 */
export function layersPerStageFor(effective: number, stages: number): number | undefined {
  for (let lps = Math.max(1, Math.ceil(effective / stages)); (stages - 1) * lps < effective; lps++) {
    if (Math.ceil(effective / lps) === stages) return lps;
  }
  return undefined;
}

/** Sets a degree when the key exists or the value is not torchtitan's default of 1. */
function degree(ed: TomlEditor, key: string, value: number): void {
  const table = tableOf(ed, key);
  if (value !== 1 || ed.get(table, key) !== undefined) ed.set(table, key, value);
}

/** Rewrites a torchtitan job config for a layout. */
export function rewriteTorchtitan(text: string, t: LayoutTarget): Rewrite {
  const ed = new TomlEditor(text);
  const notes: string[] = [];
  degree(ed, 'tensor_parallel_degree', t.tp);
  degree(ed, 'pipeline_parallel_degree', t.pp);
  degree(ed, 'context_parallel_degree', t.cp);
  degree(ed, 'expert_parallel_degree', t.ep);

  // Data parallel: FSDP2 shards over data_parallel_shard_degree (-1 = all remaining ranks); ZeRO-0 replicates.
  const shard = ed.get('parallelism', 'data_parallel_shard_degree');
  if (t.zero === 0) {
    ed.set('parallelism', 'data_parallel_replicate_degree', t.dp);
    ed.set('parallelism', 'data_parallel_shard_degree', 1);
  } else if (t.shardGroup !== undefined) {
    // HSDP: shard within the group, replicate across groups.
    ed.set('parallelism', 'data_parallel_replicate_degree', t.dp / t.shardGroup);
    ed.set('parallelism', 'data_parallel_shard_degree', t.shardGroup);
    ed.set('parallelism', 'fsdp_reshard_after_forward', t.zero === 2 ? 'never' : 'always');
  } else {
    if (ed.get('parallelism', 'data_parallel_replicate_degree') !== undefined) ed.set('parallelism', 'data_parallel_replicate_degree', 1);
    if (shard !== undefined && shard !== '-1') ed.set('parallelism', 'data_parallel_shard_degree', t.dp);
    const reshard = ed.get('parallelism', 'fsdp_reshard_after_forward')?.replace(/["']/g, '');
    // ZeRO-2 is "never"; ZeRO-3 keeps the file's policy ("default" reshards unless PP) unless it was "never".
    if (t.zero === 2) ed.set('parallelism', 'fsdp_reshard_after_forward', 'never');
    else if (reshard === 'never') ed.set('parallelism', 'fsdp_reshard_after_forward', 'always');
  }
  if (t.zero === 1) notes.push('FSDP has no ZeRO-1; the layout was written as full sharding.');

  // Pipeline schedule and virtual stages.
  const schedule = ed.get('parallelism', 'pipeline_parallel_schedule')?.replace(/["']/g, '');
  if (t.vpp > 1) {
    ed.set('parallelism', 'pipeline_parallel_schedule', 'Interleaved1F1B');
    // torchtitan runs 2 stages per rank for a multi-stage schedule unless layers_per_stage says otherwise, and then
    // makes ⌈(L + first + last) / layers_per_stage⌉ stages (torchtitan/distributed/pipeline_parallel.py).
    const weight = (k: string) => Number(ed.get('parallelism', `pipeline_parallel_${k}_stage_less_layers`) ?? 1);
    const lps = t.vpp === 2 ? undefined : layersPerStageFor(t.layers + weight('first') + weight('last'), t.pp * t.vpp);
    if (t.vpp === 2) ed.remove('parallelism', 'pipeline_parallel_layers_per_stage');
    else if (lps !== undefined) ed.set('parallelism', 'pipeline_parallel_layers_per_stage', lps);
    else {
      ed.remove('parallelism', 'pipeline_parallel_layers_per_stage');
      notes.push(`No pipeline_parallel_layers_per_stage gives ${t.pp * t.vpp} stages for ${t.layers} layers; torchtitan's default of 2 stages per rank is written instead.`);
    }
  } else if (t.pp > 1 && schedule !== undefined && /interleaved/i.test(schedule)) {
    ed.set('parallelism', 'pipeline_parallel_schedule', '1F1B');
    ed.remove('parallelism', 'pipeline_parallel_layers_per_stage');
  }
  if (t.stageLayers) notes.push(`Uneven stages ${t.stageLayers.join('/')}: torchtitan sets them with pipeline_parallel_first/last_stage_less_layers.`);

  // Batch: the global batch stays; the micro batch moves.
  if (t.pp > 1) {
    ed.set('training', 'local_batch_size', t.microBatch * t.gradAccum);
    ed.set('parallelism', 'pipeline_parallel_microbatch_size', t.microBatch);
  } else ed.set('training', 'local_batch_size', t.microBatch);
  if (t.gradAccum > 1 && t.pp === 1) ed.set('training', 'global_batch_size', t.globalBatch);
  else if (ed.get('training', 'global_batch_size') !== undefined) ed.set('training', 'global_batch_size', t.globalBatch);

  if (t.offload !== 'none' || ed.get('training', 'enable_cpu_offload') !== undefined) ed.set('training', 'enable_cpu_offload', t.offload !== 'none');
  // torchtitan's default mode is selective.
  if (t.recompute !== 'selective' || ed.get('activation_checkpoint', 'mode') !== undefined) ed.set('activation_checkpoint', 'mode', t.recompute);
  return { text: ed.result(), notes };
}
