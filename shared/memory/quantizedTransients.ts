/**
 * What a 4-bit LoRA base adds to a step's moments beyond its weights (docs/engine-memory.md#qlora-transients).
 *
 * - Dequantization: a 4-bit matmul rebuilds its whole weight for every product (bitsandbytes autograd/_functions.py
 *   MatMul4Bit: `F.dequantize_4bit(B, quant_state).to(A.dtype)` in the forward and again for the input gradient in
 *   the backward; torchao's `linear_nf4` likewise). The copy is in the dtype the weight was quantized from
 *   (functional.py dequantize_4bit returns quant_state.dtype); Lightning quantizes from fp16 (bitsandbytes.py
 *   `_Linear4bit.quantize`: `weight.to(torch.half)`), so under bf16 a second, cast copy exists while the cast runs.
 * - Held inputs: bitsandbytes' 8-bit linear and its 4-bit linear up to 0.43.1 keep their input as a Python attribute of
 *   the autograd node (`ctx.tensors = (A, B)`), not as a saved tensor: the backward does not free it, only the graph's
 *   end does. A loop that keeps the previous micro-batch's output (LitGPT's `logits`, whose `grad_fn` holds the graph)
 *   keeps every such input through the next forward.
 */
import type { Widths } from './loraSaves';

/**
 * Bytes of one 4-bit weight of `n` parameters dequantized for a matmul: n · b_q (b_q = 2, the 16-bit dtype it was
 * quantized from) plus n · b_c for its cast to the compute dtype where that differs (`cast`).
 */
export function dequantizedWeightBytes(n: number, computeBytes: number, cast: boolean): number {
  return n * (2 + (cast ? computeBytes : 0));
}

/**
 * Weights of a block's largest quantized linear (widths per token on the rank, loraSaves.ts loraWidthsOf): the fused q/k/v projection h·(q + 2kv) where the model fuses it
 * (LitGPT's `attn`), else q's h·q; o's q·h; each MLP projection h·f.
 */
export function largestBlockLinear(w: Widths, fusedQkv: boolean): number {
  return Math.max(fusedQkv ? w.h * (w.q + 2 * (w.kv ?? w.q)) : w.h * w.q, w.q * w.h, w.h * w.f);
}

/**
 * Bytes per token a block's quantized linears keep as held inputs (bitsandbytes' `ctx.tensors`), B bytes per element:
 * q/k/v's input (the attention norm's output, h), o's (the attention output, q), the MLP's first projections' (the MLP
 * norm's output, h) and the down projection's (f): B · (2h + q + f). Each tensor once however many linears read it.
 */
export function heldInputBytesPerToken(w: Widths, B: number): number {
  return B * (2 * w.h + w.q + w.f);
}
