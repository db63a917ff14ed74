/**
 * torchtitan TOML job configs: [parallelism] degrees and FSDP resharding, [training] batch sizes and CPU offload,
 * [activation_checkpoint] mode. Keys: torchtitan `torchtitan/config/job_config.py` (docs/formats/torchtitan.md).
 * With PP, torchtitan splits `local_batch_size` into microbatches of `pipeline_parallel_microbatch_size`;
 * without PP, `local_batch_size` is the micro batch and accumulation follows from `global_batch_size`.
 */
import { TomlEditor } from '../common/edit/tomlLines';
import type { LayoutTarget, Rewrite } from '../common/edit/types';
import { layersPerStageFor, torchtitanStageLayers, torchtitanVirtualStageLayers, TORCHTITAN_STAGE_WEIGHT } from '../../shared/plan/derived';
import type { PlanPath } from '../../shared/plan/paths';

/**
 * The table a parallelism key lives in: where the file has it, else [parallelism]; files of the schema before
 * March 2025 (no [parallelism]) keep TP/DP in [training] and PP/CP in [experimental] (docs/formats/torchtitan.md).
 */
function tableOf(ed: TomlEditor, key: string): string {
  for (const t of ['parallelism', 'training', 'experimental']) if (ed.get(t, key) !== undefined) return t;
  if (ed.hasTable('parallelism') || !(ed.hasTable('experimental') || ed.get('training', 'tensor_parallel_degree') !== undefined)) return 'parallelism';
  return /pipeline|context/.test(key) ? 'experimental' : 'training';
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

  // Data parallel: FSDP2 shards over data_parallel_shard_degree (-1 = all remaining ranks); ZeRO-0 replicates. Files
  // before March 2025 keep both degrees in [training] (the oldest name the shard degree data_parallel_degree).
  const shardKey = ed.get('training', 'data_parallel_degree') !== undefined && ed.get('parallelism', 'data_parallel_shard_degree') === undefined
    && ed.get('training', 'data_parallel_shard_degree') === undefined ? 'data_parallel_degree' : 'data_parallel_shard_degree';
  const shardTable = tableOf(ed, shardKey);
  const repTable = tableOf(ed, 'data_parallel_replicate_degree');
  const shard = ed.get(shardTable, shardKey);
  if (t.zero === 0) {
    ed.set(repTable, 'data_parallel_replicate_degree', t.dp);
    ed.set(shardTable, shardKey, 1);
  } else if (t.shardGroup !== undefined) {
    // HSDP: shard within the group, replicate across groups.
    ed.set(repTable, 'data_parallel_replicate_degree', t.dp / t.shardGroup);
    ed.set(shardTable, shardKey, t.shardGroup);
    ed.set('parallelism', 'fsdp_reshard_after_forward', t.zero === 2 ? 'never' : 'always');
  } else {
    if (ed.get(repTable, 'data_parallel_replicate_degree') !== undefined) ed.set(repTable, 'data_parallel_replicate_degree', 1);
    if (shard !== undefined && shard !== '-1') ed.set(shardTable, shardKey, t.dp);
    const reshard = ed.get('parallelism', 'fsdp_reshard_after_forward')?.replace(/["']/g, '');
    // ZeRO-2 is "never"; ZeRO-3 keeps the file's policy ("default" reshards unless PP) unless it was "never".
    if (t.zero === 2) ed.set('parallelism', 'fsdp_reshard_after_forward', 'never');
    else if (reshard === 'never') ed.set('parallelism', 'fsdp_reshard_after_forward', 'always');
  }
  if (t.zero === 1) notes.push('FSDP has no ZeRO-1; the layout was written as full sharding.');

  // Pipeline schedule and virtual stages, in the file's layout: [parallelism] (2025+) or [experimental] (before).
  const old = ed.get('training', 'batch_size') !== undefined && ed.get('training', 'local_batch_size') === undefined;
  const schedTable = tableOf(ed, 'pipeline_parallel_schedule');
  const schedule = ed.get(schedTable, 'pipeline_parallel_schedule')?.replace(/["']/g, '');
  const weight = (k: string) => Number(ed.get('parallelism', `pipeline_parallel_${k}_stage_less_layers`) ?? TORCHTITAN_STAGE_WEIGHT);
  const [first, last] = [weight('first'), weight('last')];
  let vppWritten = t.pp > 1 ? 1 : t.vpp;
  if (t.vpp > 1) {
    ed.set(schedTable, 'pipeline_parallel_schedule', 'Interleaved1F1B');
    // torchtitan runs 2 stages per rank for a multi-stage schedule unless layers_per_stage says otherwise, and then
    // makes ⌈(L + first + last) / layers_per_stage⌉ stages (torchtitan/distributed/pipeline_parallel.py); files
    // before 2025 name stages only by split points.
    if (old) {
      // Split points name where each stage starts: written from torchtitan's own deal so the stages are the ones the
      // estimate used (2 per rank is the default and needs none).
      const stages = torchtitanVirtualStageLayers(t.layers, t.pp * t.vpp, first, last).layers;
      if (t.vpp === 2 || !stages) ed.remove(tableOf(ed, 'pipeline_parallel_split_points'), 'pipeline_parallel_split_points');
      else {
        let start = 0;
        const starts = stages.slice(0, -1).map((n) => (start += n));
        ed.set(tableOf(ed, 'pipeline_parallel_split_points'), 'pipeline_parallel_split_points', starts.map((n) => `layers.${n}`));
      }
      vppWritten = t.vpp === 2 || stages ? t.vpp : 2;
    } else {
      const lps = t.vpp === 2 ? undefined : layersPerStageFor(t.layers + first + last, t.pp * t.vpp);
      vppWritten = t.vpp === 2 || lps !== undefined ? t.vpp : 2;
      if (lps !== undefined) ed.set('parallelism', 'pipeline_parallel_layers_per_stage', lps);
      else ed.remove('parallelism', 'pipeline_parallel_layers_per_stage');
    }
    if (vppWritten !== t.vpp) notes.push(`No pipeline_parallel_layers_per_stage gives ${t.pp * t.vpp} stages for ${t.layers} layers; torchtitan's default of 2 stages per rank is written instead.`);
  } else if (t.pp > 1 && schedule !== undefined && /interleaved|looped/i.test(schedule)) {
    ed.set(schedTable, 'pipeline_parallel_schedule', '1F1B');
    ed.remove('parallelism', 'pipeline_parallel_layers_per_stage');
  }
  const own = t.pp > 1 ? torchtitanStageLayers(t.layers, t.pp, vppWritten, first, last).layers : undefined;
  if (t.stageLayers && (!own || own.join() !== t.stageLayers.join())) {
    notes.push(`Stages of ${t.stageLayers.join('/')} layers: torchtitan splits ${own ? own.join('/') : 'them its own way'} (set pipeline_parallel_first/last_stage_less_layers to move layers).`);
  }

  // Batch: the global batch stays; the micro batch moves. With PP the local batch holds the step's micro-batches.
  const batchKey = old ? 'batch_size' : 'local_batch_size';
  const unwritable: PlanPath[] = [];
  if (t.pp > 1) {
    ed.set('training', batchKey, t.microBatch * t.gradAccum);
    if (old) ed.set(tableOf(ed, 'pipeline_parallel_microbatches'), 'pipeline_parallel_microbatches', t.gradAccum);
    else ed.set('parallelism', 'pipeline_parallel_microbatch_size', t.microBatch);
  } else ed.set('training', batchKey, t.microBatch);
  if (old && t.gradAccum > 1 && t.pp === 1) {
    notes.push(`Gradient accumulation ${t.gradAccum} needs global_batch_size, which torchtitan added in 2025; this file's layout has no such key.`);
    unwritable.push('training.gradAccum');
  } else if (t.gradAccum > 1 && t.pp === 1) ed.set('training', 'global_batch_size', t.globalBatch);
  else if (ed.get('training', 'global_batch_size') !== undefined) ed.set('training', 'global_batch_size', t.globalBatch);

  if (t.offload !== 'none' || ed.get('training', 'enable_cpu_offload') !== undefined) ed.set('training', 'enable_cpu_offload', t.offload !== 'none');
  // torchtitan's default mode is selective.
  if (t.recompute !== 'selective' || ed.get('activation_checkpoint', 'mode') !== undefined) ed.set('activation_checkpoint', 'mode', t.recompute);
  return { text: ed.result(), notes, ...(unwritable.length ? { unwritable } : {}) };
}
