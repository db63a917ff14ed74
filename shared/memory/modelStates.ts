/**
 * Model-state terms: bytes of parameters, gradients, optimizer states, master weights and fp32 gradient buffers on one
 * rank. `count` is the rank's parameter count after TP/PP/EP splits; `shard` the ZeRO/FSDP divisor (1 when unsharded).
 */
import { mlaProjections } from '../model/mla';
import type { MlaSpec } from '../plan/types';

/** Parameters: Ψ·b_param / N_shard (ZeRO P_p shards them, Rajbhandari et al. 2020 §5.3). */
export function parameterBytes(count: number, bytesPerParam: number, shard = 1): number {
  return (count * bytesPerParam) / shard;
}

/** Gradients: Ψ·b_grad / N_shard (ZeRO P_g, Rajbhandari et al. 2020 §5.2). */
export function gradientBytes(count: number, bytesPerGrad: number, shard = 1): number {
  return (count * bytesPerGrad) / shard;
}

/** Optimizer states: Ψ·b_opt / N_shard (ZeRO P_os, Rajbhandari et al. 2020 §5.1; b_opt from optimizerBytesPerParam). */
export function optimizerStateBytes(count: number, bytesPerParam: number, shard = 1): number {
  return (count * bytesPerParam) / shard;
}

/** fp32 master weights: 4Ψ / N_shard with mixed precision (part of ZeRO's K = 12; Micikevicius et al. 2018). */
export function masterWeightBytes(count: number, bytesPerParam: number, shard = 1): number {
  return (count * bytesPerParam) / shard;
}

/**
 * fp32 gradient accumulation buffer: 4Ψ / N_shard (Megatron `main_grad`, nanotron `accumulate_grad_in_fp32`;
 * Ultra-Scale Playbook: "+4Ψ/N_d with ZeRO-2/3").
 */
export function gradAccumBufferBytes(count: number, shard = 1): number {
  return (4 * count) / shard;
}

/**
 * Gradients FSDP carries between micro-batches under `no_sync`: every trainable parameter's gradient unsharded, Ψ·b
 * (no N_shard). FSDP2 keeps them in the reduce dtype (`set_requires_gradient_sync(False)`: FSDPParam
 * `to_accumulated_grad_if_needed` casts to `reduce_dtype`); FSDP1 keeps the flat parameter's `.grad` as autograd made
 * it, in the parameter dtype of the unsharded (mixed-precision) flat parameter (torch/distributed/fsdp/_runtime_utils.py
 * `_post_backward_hook` returns before the cast and the reduce-scatter when `_sync_gradients` is false).
 */
export function noSyncCarriedGradientBytes(style: string, count: number, reduceBytes: number, gatheredBytes: number): number {
  return count * (style === 'fsdp2' ? reduceBytes : gatheredBytes);
}

/**
 * FP8 weight caches: 2 bytes per linear weight (fp8 copy + fp8 transpose kept for the backward GEMM;
 * NVIDIA TransformerEngine `Float8Tensor` with `_transpose` cache, "FP8 primer" docs).
 */
export function fp8WeightCacheBytes(linearWeights: number, shard = 1, fp8Params = false): number {
  // With FP8 parameters (Megatron --fp8-param-gather) the weight itself is the fp8 copy: only the transpose is extra.
  return ((fp8Params ? 1 : 2) * linearWeights) / shard;
}

/**
 * Bytes saved by keeping the linear weights in fp8 (Megatron `--fp8-param-gather`: Transformer Engine's Float8Tensor
 * parameters, gathered in fp8): (b_param − 1) per linear weight; the embedding, head and norms stay 16-bit.
 */
export function fp8ParameterSavingBytes(linearWeights: number, paramBytes: number, shard = 1): number {
  return (Math.max(0, paramBytes - 1) * linearWeights) / shard;
}

/**
 * Per-device model-state bytes of the ZeRO paper (Rajbhandari et al. 2020, §5 and Table 1) for stage 0–3 with
 * mixed-precision Adam: 2Ψ params + 2Ψ grads + KΨ optimizer (K = 12), composed from the terms above.
 */
export function zeroModelStateBytes(psi: number, nd: number, stage: 0 | 1 | 2 | 3, k = 12): number {
  return (
    parameterBytes(psi, 2, stage >= 3 ? nd : 1) +
    gradientBytes(psi, 2, stage >= 2 ? nd : 1) +
    optimizerStateBytes(psi, k - 4, stage >= 1 ? nd : 1) +
    masterWeightBytes(psi, 4, stage >= 1 ? nd : 1)
  );
}

/** Adafactor factored second moment of one r×c matrix: 4·(r + c) bytes (Shazeer & Stern 2018, §3; no momentum). */
export function adafactorMatrixStateBytes(rows: number, cols: number): number {
  return 4 * (rows + cols);
}

/**
 * Adafactor state bytes per parameter of one transformer layer: Σ 4·(r + c) over its matrices (q, k, v, o and the MLP
 * matrices), 4 per element of vectors (norms), divided by the layer's parameters.
 */
export function adafactorBytesPerParam(m: {
  hiddenSize: number; heads: number; kvHeads: number; headDim: number; ffnSize: number; gatedMlp: boolean; mla?: MlaSpec;
}): number {
  const h = m.hiddenSize, q = m.heads * m.headDim, kv = m.kvHeads * m.headDim, f = m.ffnSize;
  // Under MLA the attention matrices are its five projections (shared/model/mla.ts).
  const attention: [number, number][] = m.mla ? mlaProjections(m.mla, h, m.heads).map((p): [number, number] => [p.in, p.out]) : [[h, q], [h, kv], [h, kv], [q, h]];
  const mats: [number, number][] = [...attention, [h, f], [f, h]];
  if (m.gatedMlp) mats.push([h, f]);
  let states = 4 * 2 * h;
  let params = 2 * h;
  for (const [r, c] of mats) {
    states += adafactorMatrixStateBytes(r, c);
    params += r * c;
  }
  return params > 0 ? states / params : 0;
}
