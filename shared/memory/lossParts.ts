/**
 * The last stage's output layer and loss as moment inputs (shared/memory/moments.ts): the output layer's saved inputs
 * and the loss's copies of the logits, per implementation (shared/memory/loss.ts).
 */
import { mtpSavedBytes, outputLayerInputBytes } from './activations';
import { blockForwardLargestBytes, blockForwardTransientBytes } from './blocks';
import type { MemoryContext } from './context';
import { cceLossBytes, ligerLossBytes, lossBackwardBytes, lossForwardBytes, lossSavedBytes } from './loss';
import type { MomentInputs } from './moments';

/** Bytes per element of the head's input: transformers' residual stream (fp32 under autocast), else the activations'. */
function headInputBytes(c: MemoryContext): number {
  return c.impl === 'hf' ? c.streamBytes : c.actBytes;
}

/**
 * Liger's fused linear cross-entropy on the last stage (shared/memory/loss.ts `ligerLossBytes`): the final norm keeps
 * its saves, the head's input is the loss's argument (live through its forward, saved by no one), no logits outlive a
 * chunk, and the gradients it made in the forward are what the backward hands on.
 */
function fillLigerLoss(c: MemoryContext, x: MomentInputs, tokens: number): void {
  const S = headInputBytes(c);
  const liger = ligerLossBytes(tokens, c.vocab / c.tp, c.h, S, c.gatherB, !c.lora || c.loraHead);
  x.head = outputLayerInputBytes(c, c.impl === 'torchtitan', false);
  x.lossForward = liger.forward + tokens * c.h * S;
  x.lossSaved = liger.saved;
  x.lossBackward = liger.saved;
  x.logits = 0;
  x.lossForwardCache = 0;
  // No logits' gradient: the gradients the forward made are what the head's backward hands on (after fillBlockBackward).
  x.headGradCreate = liger.saved;
}

/**
 * Cut Cross-Entropy on the last stage (shared/memory/loss.ts `cceLossBytes`): the output layer's saved input and weight
 * copy are what it saves (outputLayerInputBytes), no logits exist in either pass, and its backward makes de and dc.
 */
function fillCceLoss(c: MemoryContext, x: MomentInputs, tokens: number): void {
  const S = headInputBytes(c);
  const cce = cceLossBytes(tokens, c.vocab / c.tp, c.h, S === 4 && c.actBytes < 4, c.gatherB === 4 && c.actBytes < 4, !c.lora || c.loraHead);
  x.head = outputLayerInputBytes(c, c.impl === 'torchtitan', true);
  x.lossForward = cce.forward;
  x.lossSaved = cce.saved;
  x.lossBackward = cce.backward;
  x.logits = 0;
  x.lossForwardCache = 0;
  x.headGradCreate = cce.backward - cce.saved;
}

/**
 * The last stage's output layer and loss for one micro-batch (n = b · s/cp · V/t logits per rank), written into the
 * moment inputs (0 on other stages): the output layer's saved inputs (final norm input, head input), the loss's
 * forward, saved and backward copies of the logits (shared/memory/loss.ts), and the model's logits b·n.
 */
export function fillLossParts(c: MemoryContext, last: boolean, x: MomentInputs, ffn: number): void {
  if (!last) { x.head = x.lossForward = x.lossSaved = x.lossBackward = x.logits = x.lossForwardCache = 0; return; }
  const tokens = c.sLocal * c.b;
  if (c.loss === 'liger') { fillLigerLoss(c, x, tokens); return; }
  if (c.loss === 'cce') { fillCceLoss(c, x, tokens); return; }
  const n = (tokens * c.vocab) / c.tp;
  // Under LoRA the head is frozen unless it trains in full (modules_to_save): then it saves no input.
  // With Gemma 2's capped logits (cap·tanh(logits / cap)) tanh's output, logits-sized, stays until the backward too.
  x.head = outputLayerInputBytes(c, c.impl === 'torchtitan', !c.lora || c.loraHead) + (c.finalSoftcap ? c.actBytes * n : 0);
  x.lossForward = lossForwardBytes(c.loss, n, tokens, c.actBytes);
  x.lossSaved = lossSavedBytes(c.loss, n, tokens, c.actBytes);
  x.lossBackward = lossBackwardBytes(c.loss, n, tokens, c.actBytes);
  x.logits = c.actBytes * n;
  // Each multi-token-prediction module's own output-layer pass and loss keep their inputs to the backward too.
  x.head += mtpSavedBytes(c, c.mtpLayers, x.lossSaved);
  // The forward's cache at the first step's loss: the loss's requests (the 16-bit logits and their fp32 copies) are
  // larger than every block the forward freed: FSDP2's root copies (freed when the root reshards after the forward and
  // the loss runs outside it) and a checkpointed block's transients.
  const stranding = (c.loss === 'upcast' || c.loss === 'parallel') && x.logits > blockForwardLargestBytes(c, ffn);
  const rootCopies = c.style === 'fsdp2' && c.zstage >= 2 && x.kept === 0 && !x.lossInRoot ? x.rootBytes : 0;
  const transients = c.recompute === 'full' ? blockForwardTransientBytes(c, ffn) : 0;
  x.lossForwardCache = stranding ? rootCopies + transients : 0;
}
