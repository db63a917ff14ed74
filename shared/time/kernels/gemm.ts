/**
 * One GEMM's seconds from its shape (NVIDIA, Matrix Multiplication Background User's Guide: tile and wave
 * quantization, arithmetic intensity). Curve constants in data/time/kernels.json, fitted to OpenXLA's published cuBLAS
 * table for H100 (data/time/gemm-sm90-points.json); the large-shape rate is the GPU's measured MAMF fraction.
 */
import kernels from '../../../data/time/kernels.json';

/** The curve's constants: tile shapes with their efficiencies, the K overhead, the fixed cost and the memory fraction. */
export interface GemmCurve {
  readonly tiles: readonly (readonly [number, number, number])[];
  readonly kHalf: number;
  readonly fixedSeconds: number;
  readonly memoryFraction: number;
}

/** The shipped curve (data/time/kernels.json, fitted by scripts/fit-gemm-curve.ts). */
export const GEMM_CURVE: GemmCurve = { ...kernels.gemm, tiles: kernels.gemm.tiles as [number, number, number][] };

/** What the curve needs of a GPU and dtype: asymptotic FLOP/s, SM count, memory bandwidth and element bytes. */
export interface GemmUnit {
  /** peak(dtype) × MAMF fraction × sustained clock × the fitted gemmScale, FLOP/s. */
  readonly rate: number;
  readonly sms: number;
  /** HBM bytes/s. */
  readonly hbm: number;
  /** Bytes of one input element (2 for bf16/fp16, 1 for fp8, 4 for fp32). */
  readonly inBytes: number;
}

/** Wave efficiency of a tile shape: tiles / (⌈tiles / SMs⌉ · SMs), tiles = ⌈M/tm⌉·⌈N/tn⌉ (wave quantization). */
export function waveEfficiency(m: number, n: number, tm: number, tn: number, sms: number): number {
  const tiles = Math.ceil(m / tm) * Math.ceil(n / tn);
  return tiles / (Math.ceil(tiles / sms) * sms);
}

/**
 * Seconds of an M×N×K GEMM: fixed + max(2MNK·(1 + kHalf/K) / (rate · wave · tileEff), bytes / (HBM · memoryFraction)),
 * the best tile shape taken (cuBLAS heuristics pick one); bytes = inBytes·(MK + KN) + 2·MN (16-bit output).
 */
export function gemmSeconds(m: number, n: number, k: number, u: GemmUnit, G: GemmCurve = GEMM_CURVE): number {
  if (!(m > 0 && n > 0 && k > 0)) return 0;
  const flops = 2 * m * n * k * (1 + G.kHalf / k);
  let compute = Infinity;
  for (const [tm, tn, eff] of G.tiles) {
    const t = flops / (u.rate * eff * waveEfficiency(m, n, tm, tn, u.sms));
    if (t < compute) compute = t;
  }
  const memory = (u.inBytes * (m * k + k * n) + 2 * m * n) / (u.hbm * G.memoryFraction);
  return G.fixedSeconds + Math.max(compute, memory);
}

/** Forward, input-gradient and weight-gradient seconds of one linear layer on T tokens (out = N, in = K). */
export function linearSeconds(tokens: number, out: number, inp: number, u: GemmUnit, weightGrad = true): { fwd: number; bwd: number } {
  const fwd = gemmSeconds(tokens, out, inp, u);
  const dgrad = gemmSeconds(tokens, inp, out, u);
  const wgrad = weightGrad ? gemmSeconds(out, inp, tokens, u) : 0;
  return { fwd, bwd: dgrad + wgrad };
}
