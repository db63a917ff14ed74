/** Layout rewriter for LLaMA-Factory training YAML (keys: LLaMA-Factory + HF TrainingArguments, config-formats.md §6b). */
import { setIf, recomputeNote, swapStage } from '../common/edit/hfYaml';
import type { LayoutTarget, Rewrite } from '../common/edit/types';
import { YamlEditor } from '../common/edit/yamlEdit';

/** LLaMA-Factory training YAML (gradient checkpointing is ON unless disabled). */
export function rewriteLlamaFactory(text: string, t: LayoutTarget): Rewrite {
  const ed = new YamlEditor(text);
  const notes: string[] = [];
  if (!ed.ok) return { text, notes: ['The YAML does not parse; nothing was changed.'] };
  ed.set(['per_device_train_batch_size'], t.microBatch);
  setIf(ed, ['gradient_accumulation_steps'], t.gradAccum, 1);
  setIf(ed, ['disable_gradient_checkpointing'], t.recompute === 'none', false);
  const ds = ed.get(['deepspeed']);
  if (typeof ds === 'string') {
    const p = swapStage(ds, t.zero === 1 ? 2 : t.zero, t.offload !== 'none');
    if (p) ed.set(['deepspeed'], p);
    else notes.push(`ZeRO stage ${t.zero} goes in ${ds}.`);
    if (t.zero === 1) notes.push('LLaMA-Factory ships no ZeRO-1 config; stage 2 was written.');
  }
  for (const [k, v] of [['tensor_model_parallel_size', t.tp], ['pipeline_model_parallel_size', t.pp], ['context_parallel_size', t.cp], ['expert_model_parallel_size', t.ep]] as const) {
    if (ed.get([k]) !== undefined) ed.set([k], v);
  }
  if (ed.get(['use_distributed_optimizer']) !== undefined) ed.set(['use_distributed_optimizer'], t.distributedOptimizer);
  if (ed.get(['sequence_parallel']) !== undefined) ed.set(['sequence_parallel'], t.sp && t.tp > 1);
  recomputeNote(t, notes);
  return { text: ed.result(), notes };
}
