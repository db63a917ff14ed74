/**
 * The kernel terms of a pass (forward, backward or recomputation): GEMMs, core attention, memory-bound kernels, FP8
 * casts, launch gaps, host work the GPU waits for and exposed in-layer communication, in seconds. The same record per layer, per stage and per
 * micro-batch; the step-time result and the simulator's timeline report it term by term.
 */

export interface Parts {
  gemm: number;
  attention: number;
  elementwise: number;
  fp8: number;
  /** LoRA/DoRA adapters' kernels and a 4-bit base's dequantization (shared/time/adapters.ts). */
  adapters: number;
  launch: number;
  /** Host work the GPU waits for (a MoE layer's routing sync and eager launches, shared/time/moeHost.ts). */
  host: number;
  /** Exposed in-layer communication (TP, CP ring, EP all-to-all). */
  comm: number;
}

export type PartName = keyof Parts;
export const PART_NAMES: readonly PartName[] = ['gemm', 'attention', 'elementwise', 'fp8', 'adapters', 'launch', 'host', 'comm'];

/** A zero record. */
export function emptyParts(): Parts {
  return { gemm: 0, attention: 0, elementwise: 0, fp8: 0, adapters: 0, launch: 0, host: 0, comm: 0 };
}

/** out += x · scale, term by term. */
export function addParts(out: Parts, x: Readonly<Parts>, scale = 1): Parts {
  out.gemm += x.gemm * scale;
  out.attention += x.attention * scale;
  out.elementwise += x.elementwise * scale;
  out.fp8 += x.fp8 * scale;
  out.adapters += x.adapters * scale;
  out.launch += x.launch * scale;
  out.host += x.host * scale;
  out.comm += x.comm * scale;
  return out;
}

/** Sum of the terms. */
export function partsTotal(x: Readonly<Parts>): number {
  return x.gemm + x.attention + x.elementwise + x.fp8 + x.adapters + x.launch + x.host + x.comm;
}
