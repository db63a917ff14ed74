/** Megatron-core's rule for how many layers full recomputation covers, shared by the Megatron flags and NeMo's YAML. */
import type { FactSink } from './sink';

/**
 * Keeps `training.recomputeLayers` only where Megatron-core reads it as a layer count: full recomputation with the
 * `block` method recomputes that many layers per pipeline stage; with `uniform` it is the chunk size and every layer is
 * recomputed, and selective recomputation takes no method at all (megatron/core/transformer/transformer_block.py
 * `_checkpointed_forward`; arguments.py rejects a method with selective granularity). `method` is the file's
 * `--recompute-method` or `activations_checkpoint_method`.
 */
export function keepBlockRecomputeLayers(s: FactSink, method: string | undefined): void {
  if (!s.has('training.recomputeLayers')) return;
  if (method?.trim() !== 'block' || s.value('training.recompute') !== 'full') delete s.facts['training.recomputeLayers'];
}
