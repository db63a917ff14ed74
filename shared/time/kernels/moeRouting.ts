/**
 * HBM bytes of routing a MoE layer's tokens to their experts and back, per pass, by how the engine runs it
 * (data/time/kernels.json `moeRouting`; docs/time-model.md, memory-bound kernels).
 *
 * - Megatron-LM's permute and unpermute (and the other engines' own routing, which moves the same rows): read the T·h
 *   inputs and write S = T·k expert-ordered copies, then read the S outputs and write their gate-weighted sum,
 *   2·T·h·B·(1 + k) each way (megatron/core/transformer/moe/moe_utils.py `permute` / `unpermute`).
 * - transformers 5's grouped-GEMM experts (integrations/moe.py `grouped_mm_experts_forward`, the default
 *   `experts_implementation`), counted op by op with torch's dispatcher (probe/oracle/moe_traffic.py): forward
 *   T·h·B·(2 + 6k), backward T·h·B·(6 + 11k) plus the concatenation of the gate and up gradients (4·S·f·B); about
 *   2.8× and 5× the permutation's bytes at k = 8. Families whose router probabilities stay fp32 (Mixtral, DeepSeek)
 *   weight, unsort and sum in fp32: T·h·B·(6 + 10k) and (10 + 23k).
 *
 * The index bookkeeping (sort, gathers and scatters of S int64 indices) and the router's fp32 softmax and top-k over
 * T·E scores are added at their measured bytes; neither depends on h.
 */
import kernels from '../../../data/time/kernels.json';
import type { MoeSpec } from '../../plan/types';
import type { Fusion } from './elementwise';

const R = kernels.moeRouting;
type Coefficients = (typeof R)['hf'];

/** One MoE layer's routing on this rank: tokens routed (T), their k choices (c·k under drop and pad), widths. */
export interface MoeRoutingShape {
  /** Tokens the layer routes on this rank. */
  readonly tokens: number;
  /** Expert copies per token (k, or c·k padded to capacity). */
  readonly copies: number;
  readonly hidden: number;
  /** Routed experts of the model (the router's scores per token). */
  readonly experts: number;
  /** Width of one expert's gate (= up) projection on this rank; 0 for a plain (ungated) expert. */
  readonly gatedFfn: number;
}

/** Which routing code runs: transformers' eager code ('hf', 'hf-amp') or a permutation like Megatron's. */
function coefficientsOf(f: Fusion, moe: Pick<MoeSpec, 'routerWeightsFp32'>): Coefficients {
  if (f !== 'hf' && f !== 'hf-amp') return R.permute;
  return moe.routerWeightsFp32 ? R.hfFp32Weights : R.hf;
}

/** HBM bytes of one pass of a MoE layer's routing (activation bytes B per element; fp32 tensors count 2B). */
export function moeRoutingBytes(f: Fusion, moe: Pick<MoeSpec, 'routerWeightsFp32'>, s: MoeRoutingShape, B: number, pass: 'fwd' | 'bwd'): number {
  const c = coefficientsOf(f, moe);
  const p = c[pass];
  const pairs = s.tokens * Math.max(1, s.copies);
  let bytes = (p.tokens * s.tokens + p.routed * pairs) * s.hidden * B + p.pairBytes * pairs + p.routerBytes * s.tokens * s.experts;
  if (pass === 'bwd') bytes += c.gateUpConcat * pairs * s.gatedFfn * B;
  return bytes;
}
