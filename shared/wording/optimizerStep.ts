/** Wording of the optimizer step's findings (shared/memory/estimate.ts). */
import { formatBytes } from '../units';

const gib = (b: number): string => formatBytes(b, 'GiB');

/**
 * torch's foreach Adam step is the GPU's peak: what its list holds and what the fused step would peak at, e.g. "The
 * optimizer step is this run's peak (32.1 GiB): torch.optim's foreach AdamW makes the square roots of every state as
 * one 5.98 GiB list there. The fused step (fused=True; Hugging Face adamw_torch_fused; torchtitan implementation
 * \"fused\") would peak at 26.2 GiB."
 */
export function foreachStepMessage(peak: number, list: number, fusedPeak: number): string {
  return `The optimizer step is this run's peak (${gib(peak)}): torch.optim's foreach AdamW makes the square roots of every `
    + `state as one ${gib(list)} list there. The fused step (fused=True; Hugging Face adamw_torch_fused; torchtitan `
    + `implementation "fused") would peak at ${gib(fusedPeak)}.`;
}
