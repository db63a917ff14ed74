/**
 * Layout rewriter for launch scripts that run a Hugging Face Trainer script (`deepspeed run_clm.py --deepspeed …`):
 * the micro batch, accumulation and gradient checkpointing are TrainingArguments flags (transformers/training_args.py);
 * the ZeRO stage and offload live in the DeepSpeed JSON the script names.
 */
import type { ConfigFacts } from '../../shared/plan/facts';
import { applyFlags } from '../common/edit/flagWriter';
import { findFlags, type FlagHit } from '../common/edit/shellFlags';
import type { LayoutTarget, Rewrite } from '../common/edit/types';

/** Flags whose absence means this value (TrainingArguments defaults). */
const DEFAULTS: Readonly<Record<string, string>> = { '--gradient_accumulation_steps': '1' };

/** True for a script that passes TrainingArguments flags (rather than Megatron's). */
export function isHfTrainerScript(hits: readonly FlagHit[]): boolean {
  return hits.some((h) => h.flag === '--per_device_train_batch_size' || h.flag === '--gradient_accumulation_steps')
    && !hits.some((h) => h.flag === '--micro-batch-size' || h.flag === '--tensor-model-parallel-size');
}

/** Rewrites the TrainingArguments flags of a launch script for a layout. */
export function rewriteHfTrainerScript(text: string, t: LayoutTarget, facts?: ConfigFacts): Rewrite {
  const hits = findFlags(text);
  const notes: string[] = [];
  const want = new Map<string, string | true | undefined>([
    ['--per_device_train_batch_size', String(t.microBatch)],
    ['--gradient_accumulation_steps', String(t.gradAccum)],
    ['--gradient_checkpointing', t.recompute === 'none' ? undefined : true],
  ]);
  if (t.recompute === 'selective') notes.push('Selective recomputation has no TrainingArguments flag; gradient checkpointing (full) was used.');
  notes.push(`ZeRO stage ${t.zero} and offload are set in the DeepSpeed JSON the script passes with --deepspeed.`);
  if (t.tp > 1 || t.pp > 1 || t.cp > 1) notes.push('Tensor, pipeline and context parallelism are not TrainingArguments flags.');
  const anchor = hits.find((h) => h.flag === '--per_device_train_batch_size') ?? hits[hits.length - 1];
  return { text: applyFlags(text, hits, want, anchor, facts, notes, DEFAULTS), notes };
}
