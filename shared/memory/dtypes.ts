/** Bytes per element of each dtype and per-parameter byte tables of each precision and optimizer. */
import type { Dtype, OptimizerKind, Precision } from '../plan/types';

/** NF4's 4-bit codes: 0.5 bytes per parameter (Dettmers et al. 2023, QLoRA §3). */
export const NF4_DATA_BYTES = 0.5;

/**
 * NF4's double-quantised block constants per parameter: an 8-bit absmax per 64-block and an fp32 constant per 256 of
 * those, (8/64 + 32/(64·256))/8 bytes (Dettmers et al. 2023, QLoRA §3 "Double Quantization": 0.127 bits/param).
 */
export const NF4_CONSTANT_BYTES = (8 / 64 + 32 / (64 * 256)) / 8;

/** QLoRA NF4 storage per parameter: the codes and their constants. */
export const NF4_BYTES = NF4_DATA_BYTES + NF4_CONSTANT_BYTES;

/** Bytes of one element of a dtype. */
export function dtypeBytes(d: Dtype): number {
  switch (d) {
    case 'fp32': return 4;
    case 'bf16': case 'fp16': return 2;
    case 'fp8': case 'int8': return 1;
    case 'nf4': return NF4_BYTES;
    default: return 2;
  }
}

/** Bytes of one stored model parameter: fp32 4; 16-bit and fp8 recipes keep 16-bit weights (2). */
export function paramBytesOf(p: Precision): number {
  return p === 'fp32' ? 4 : 2;
}

/** Bytes of the fp32 master copy: 4 with mixed precision (Micikevicius et al. 2018), 0 for fp32 and pure bf16. */
export function masterBytesOf(p: Precision): number {
  return p === 'fp16-mixed' || p === 'bf16-mixed' || p === 'fp8-mixed' ? 4 : 0;
}

/** Bytes of one activation element: 4 in fp32 training, else 2 (Korthikanti et al. 2022 §4 assumes 16-bit). */
export function activationBytesOf(p: Precision): number {
  return p === 'fp32' ? 4 : 2;
}

/** Bytes of one optimizer-state element: 16-bit under pure bf16 (torch optimizers make states like the parameter), else fp32. */
export function optimizerStateElementBytes(p: Precision): number {
  return p === 'bf16' ? 2 : 4;
}

/**
 * Optimizer state bytes per parameter with fp32 states: Adam/AdamW 8 (m, v; Kingma & Ba 2015), SGD 0, SGD with
 * momentum 4, Lion 4 (one momentum; Chen et al. 2023), 8-bit Adam 2 (two uint8 states; Dettmers et al. 2022),
 * Adafactor ≈ 8/h (factored second moment keeps r + c fp32 values per r×c matrix, r ≈ c ≈ h; Shazeer & Stern 2018,
 * no momentum as in the HF default beta1 = None; the estimate uses the exact per-layer adafactorBytesPerParam), Muon 4 on
 * the layers' weight matrices (one momentum buffer; Jordan et al. 2024; Liu et al. 2025, "Muon is Scalable for LLM
 * Training", arXiv:2502.16982 §2; the embedding, head and norms keep AdamW's 8: MemoryContext.optBRest).
 * `stateBytes` = 2 for pure-bf16 training (states in bf16): optimizerStateElementBytes.
 */
export function optimizerBytesPerParam(kind: OptimizerKind, hidden: number, stateBytes = 4): number {
  const s = stateBytes / 4;
  switch (kind) {
    case 'adam': case 'adamw': return 8 * s;
    case 'sgd': return 0;
    case 'sgd-momentum': case 'lion': case 'muon': return 4 * s;
    case 'adam-8bit': return 2;
    case 'adafactor': return hidden > 0 ? (8 / hidden) * s : 0;
    default: return 8 * s;
  }
}
