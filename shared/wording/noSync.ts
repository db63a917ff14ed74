/** Wording of FSDP's no_sync finding (shared/memory/estimate.ts). */
import { formatBytes } from '../units';

const gib = (b: number): string => formatBytes(b, 'GiB');

/**
 * FSDP's no_sync gradients raise the peak, e.g. "Between micro-batches FSDP keeps this rank's gradients unsharded
 * (no_sync while accumulating): 15.0 GiB of the 47.9 GiB peak. Reducing in every micro-batch would peak at
 * 36.7 GiB, for one reduce-scatter per micro-batch instead of one per step (Hugging Face Trainer:
 * accelerator_config.gradient_accumulation_kwargs.sync_each_batch: true; Accelerate:
 * GradientAccumulationPlugin(sync_each_batch=True))."
 */
export function noSyncGradientsMessage(peak: number, carried: number, syncedPeak: number, hfTrainer: boolean): string {
  const how = hfTrainer
    ? ' (Hugging Face Trainer: accelerator_config.gradient_accumulation_kwargs.sync_each_batch: true; Accelerate: GradientAccumulationPlugin(sync_each_batch=True))'
    : ' (the training loop decides it: it accumulates under no_sync)';
  return `Between micro-batches FSDP keeps this rank's gradients unsharded (no_sync while accumulating): ${gib(carried)} `
    + `of the ${gib(peak)} peak. Reducing in every micro-batch would peak at ${gib(syncedPeak)}, for one reduce-scatter `
    + `per micro-batch instead of one per step${how}.`;
}
