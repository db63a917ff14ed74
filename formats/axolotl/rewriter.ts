/** Layout rewriter for Axolotl training YAML (keys: Axolotl `utils/schemas/`, config-formats.md §6a). */
import { setIf, writeFsdp, recomputeNote, parallelNotes, swapStage } from '../common/edit/hfYaml';
import type { LayoutTarget, Rewrite } from '../common/edit/types';
import { YamlEditor } from '../common/edit/yamlEdit';

/** Axolotl training YAML. */
export function rewriteAxolotl(text: string, t: LayoutTarget): Rewrite {
  const ed = new YamlEditor(text);
  const notes: string[] = [];
  if (!ed.ok) return { text, notes: ['The YAML does not parse; nothing was changed.'] };
  ed.set(['micro_batch_size'], t.microBatch);
  setIf(ed, ['gradient_accumulation_steps'], t.gradAccum, 1);
  const gc = ed.get(['gradient_checkpointing']);
  if (t.recompute === 'none') { if (gc !== undefined && gc !== false) ed.set(['gradient_checkpointing'], false); }
  else if (gc !== true && typeof gc !== 'string') ed.set(['gradient_checkpointing'], true);
  const ds = ed.get(['deepspeed']);
  if (typeof ds === 'string') {
    const p = swapStage(ds, t.zero, t.offload !== 'none');
    if (p) ed.set(['deepspeed'], p);
    else notes.push(`ZeRO stage ${t.zero} goes in ${ds}.`);
  } else if (ed.get(['fsdp_config']) !== undefined) {
    writeFsdp(ed, t, ed.get(['fsdp_config', 'fsdp_sharding_strategy']) !== undefined ? 'fsdp_' : '', notes);
  }
  setIf(ed, ['tensor_parallel_size'], t.tp, 1);
  setIf(ed, ['context_parallel_size'], t.cp, 1);
  setIf(ed, ['expert_parallel_size'], t.ep, 1);
  if (t.shardGroup !== undefined) {
    ed.set(['dp_shard_size'], t.shardGroup);
    ed.set(['dp_replicate_size'], t.dp / t.shardGroup);
  } else if (ed.get(['dp_shard_size']) !== undefined) ed.set(['dp_shard_size'], t.zero === 0 ? 1 : t.dp);
  parallelNotes(t, notes, 'Axolotl');
  recomputeNote(t, notes);
  return { text: ed.result(), notes };
}
