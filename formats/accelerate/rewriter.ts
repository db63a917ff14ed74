/** Layout rewriter for the Accelerate config YAML (keys: `accelerate/commands/config/config_args.py`, config-formats.md §4). */
import { setIf, writeFsdp, recomputeNote, parallelNotes } from '../common/edit/hfYaml';
import type { LayoutTarget, Rewrite } from '../common/edit/types';
import { YamlEditor } from '../common/edit/yamlEdit';

/** Accelerate config YAML. */
export function rewriteAccelerate(text: string, t: LayoutTarget): Rewrite {
  const ed = new YamlEditor(text);
  const notes: string[] = [];
  if (!ed.ok) return { text, notes: ['The YAML does not parse; nothing was changed.'] };
  const kind = String(ed.get(['distributed_type']) ?? '');
  if (kind === 'DEEPSPEED') {
    if (ed.get(['deepspeed_config', 'deepspeed_config_file']) !== undefined) {
      notes.push('ZeRO stage, offload and batch live in the referenced DeepSpeed JSON; apply the layout there.');
    } else {
      ed.set(['deepspeed_config', 'zero_stage'], t.zero);
      setIf(ed, ['deepspeed_config', 'offload_optimizer_device'], t.offload, 'none');
      setIf(ed, ['deepspeed_config', 'gradient_accumulation_steps'], t.gradAccum, 1);
    }
  } else if (kind === 'FSDP') writeFsdp(ed, t, 'fsdp_', notes);
  else if (kind === 'MEGATRON_LM') {
    const m = (k: string): string[] => ['megatron_lm_config', `megatron_lm_${k}`];
    ed.set(m('tp_degree'), t.tp);
    ed.set(m('pp_degree'), t.pp);
    setIf(ed, m('num_micro_batches'), t.gradAccum, 1);
    setIf(ed, m('sequence_parallelism'), t.sp && t.tp > 1, false);
    setIf(ed, m('recompute_activations'), t.recompute !== 'none', false);
    setIf(ed, m('use_distributed_optimizer'), t.distributedOptimizer, false);
  }
  if (kind !== 'MEGATRON_LM') {
    setIf(ed, ['parallelism_config', 'parallelism_config_tp_size'], t.tp, 1);
    setIf(ed, ['parallelism_config', 'parallelism_config_cp_size'], t.cp, 1);
    parallelNotes(t, notes, 'Accelerate FSDP/DeepSpeed');
  }
  recomputeNote(t, notes);
  notes.push(`Micro batch ${t.microBatch} is the training script's DataLoader batch size (per_device_train_batch_size).`);
  return { text: ed.result(), notes };
}
