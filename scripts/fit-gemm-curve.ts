/**
 * Fits the GEMM curve constants of data/time/kernels.json (shared/time/kernels/gemm.ts) to OpenXLA's published cuBLAS
 * table for H100 SXM (data/time/gemm-sm90-points.json): the K overhead, the fixed cost, the memory-bound fraction and
 * the efficiencies of the two smaller tiles (the 128×128 tile is the reference, 1.0). The asymptotic rate is not
 * fitted: it is the datasheet bf16 peak × the measured MAMF fraction of data/gpus.json.
 * Run: node --import tsx scripts/fit-gemm-curve.ts [--write]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import points from '../data/time/gemm-sm90-points.json';
import { nelderMead } from '../bench/measured/nelderMead';
import { findGpu } from '../shared/hardware/gpus';
import { GEMM_CURVE, gemmSeconds, type GemmCurve, type GemmUnit } from '../shared/time/kernels/gemm';

const FILE = resolve(__dirname, '../data/time/kernels.json');

/** |predicted/measured − 1| of every point under a curve. */
export function curveErrors(curve: GemmCurve, unit: GemmUnit): number[] {
  return (points.points as [number, number, number, number][]).map(([m, n, k, tflops]) => {
    const predicted = (2 * m * n * k) / gemmSeconds(m, n, k, unit, curve) / 1e12;
    return Math.abs(predicted / tflops - 1);
  });
}

function curveOf(x: readonly number[]): GemmCurve {
  return {
    tiles: [[128, 128, 1], [128, 64, x[3]], [64, 64, x[4]]], kHalf: x[0], fixedSeconds: x[1] * 1e-6, memoryFraction: x[2],
  };
}

function main(): void {
  const g = findGpu(points.gpu);
  if (!g) throw new Error(`unknown GPU ${points.gpu}`);
  const unit: GemmUnit = { rate: (g.peakFlops.bf16 ?? 0) * g.achievableFlopsFraction, sms: g.sms ?? 132, hbm: g.hbmBandwidth, inBytes: 2 };
  const loss = (x: number[]) => {
    if (x.some((v) => !(v > 0)) || x[2] > 1 || x[3] > 1 || x[4] > 1) return 1e9;
    const c = curveOf(x);
    return (points.points as [number, number, number, number][]).reduce((s, [m, n, k, t]) => s + Math.log((2 * m * n * k) / gemmSeconds(m, n, k, unit, c) / 1e12 / t) ** 2, 0);
  };
  const start = [GEMM_CURVE.kHalf, GEMM_CURVE.fixedSeconds * 1e6, GEMM_CURVE.memoryFraction, GEMM_CURVE.tiles[1][2], GEMM_CURVE.tiles[2][2]];
  const fit = nelderMead(loss, start, [20, 1, 0.05, 0.05, 0.05], 2000, 1e-10);
  const x = [Math.round(fit.x[0]), Number(fit.x[1].toFixed(1)), Number(fit.x[2].toFixed(2)), Number(fit.x[3].toFixed(3)), Number(fit.x[4].toFixed(3))];
  const errs = curveErrors(curveOf(x), unit).sort((a, b) => a - b);
  const median = errs[Math.floor(errs.length / 2)];
  const max = errs[errs.length - 1];
  console.log(`kHalf ${x[0]}, fixed ${x[1]} µs, memoryFraction ${x[2]}, tiles 128×64 ${x[3]}, 64×64 ${x[4]}: median |error| ${(median * 100).toFixed(1)} %, max ${(max * 100).toFixed(1)} % over ${errs.length} points`);
  if (!process.argv.includes('--write')) return;
  const file = JSON.parse(readFileSync(FILE, 'utf8')) as { gemm: Record<string, unknown> };
  const c = curveOf(x);
  file.gemm = { ...file.gemm, tiles: c.tiles, kHalf: c.kHalf, fixedSeconds: c.fixedSeconds, memoryFraction: c.memoryFraction,
    fit: { ...(file.gemm.fit as object), points: errs.length, medianAbsError: Number(median.toFixed(3)), maxAbsError: Number(max.toFixed(3)), script: 'scripts/fit-gemm-curve.ts' } };
  writeFileSync(FILE, JSON.stringify(file, null, 2) + '\n');
}

if (require.main === module) main();
