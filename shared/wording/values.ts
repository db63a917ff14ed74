/**
 * Plan values a hover shows in words where the plan's own name is internal (docs/engine-memory.md#the-loss): the
 * loss implementations a file's loss class or fusion flag is read as.
 */
import type { LossFusion } from '../plan/types';

const LOSS_FUSION: Readonly<Record<LossFusion, string>> = {
  none: 'the unfused loss: fp32 logits and log-softmax as separate kernels',
  native: "Megatron's fused cross-entropy",
  te: "Transformer Engine's fused cross-entropy",
  compiled: 'the loss compiled with torch.compile',
  chunked: 'a chunked loss, compiled: 16-bit logits, one chunk at a time',
  'chunked-eager': 'a chunked loss, eager: each chunk upcast to fp32 and its log-softmax kept',
  liger: "Liger's fused linear cross-entropy: the head and the loss chunk by chunk, gradients made in the forward, no logits kept",
  cce: "Cut Cross-Entropy: the head's logits formed block by block in on-chip memory, never in HBM, and again in the backward",
};

/** The words for a value at a plan path, or undefined where the value reads as it is. */
export function valueInWords(path: string, value: unknown): string | undefined {
  if (path === 'training.lossFusion' && typeof value === 'string') return (LOSS_FUSION as Record<string, string | undefined>)[value];
  return undefined;
}
