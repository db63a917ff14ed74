/**
 * Extra HBM traffic of FP8 linears (Micikevicius et al. 2022, "FP8 Formats for Deep Learning"; Transformer Engine and
 * torchao float8 docs): each FP8 GEMM reads its 16-bit input and writes an FP8 copy (B + 1 bytes per element), casts
 * the weight, and in backward casts the output gradient and writes FP8 transposes for the input- and weight-gradient
 * GEMMs (Hopper FP8 tensor cores take K-major operands). Current (tensorwise) scaling adds an amax pass over the
 * input unless a compiler fuses it; delayed scaling reuses the last amax. Fused engines cast inside the producer
 * kernel (half the input-cast traffic).
 */
import type { Fp8Spec } from '../../plan/types';
import { isEager, type Fusion } from './elementwise';

/** Bytes per micro-batch of one FP8 linear M×N×K (M tokens, N out, K in), forward and backward. */
export function fp8CastBytes(m: number, n: number, k: number, actBytes: number, f: Fusion, spec: Fp8Spec | undefined, weightCastsPerMicrobatch: number): { fwd: number; bwd: number } {
  const B = actBytes;
  const fusedInput = isEager(f) ? 1 : 0.5;
  const amax = spec?.recipe === 'delayed' || !isEager(f) ? 0 : m * k * B;
  const weight = spec?.paramGather ? 0 : n * k * (B + 1) * weightCastsPerMicrobatch;
  const fwd = fusedInput * m * k * (B + 1) + amax + weight;
  const bwd = m * n * (B + 1) + 2 * m * k + 2 * m * n + 2 * n * k;
  return { fwd, bwd };
}
