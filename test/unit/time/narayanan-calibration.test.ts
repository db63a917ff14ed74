/**
 * Calibration of the step-time model against Narayanan et al. 2021 Table 1 (formulas.md §c): GPT models on Selene
 * (A100 80 GB, 8 per node, HDR InfiniBand), fp16, full activation recomputation, interleaved schedule where p > 1.
 * Published iteration time t = F / (GPUs × X) with F from Eq. 3 and X the achieved TFLOP/s per GPU.
 * Not stated in Table 1 and assumed here, the same for every row: micro batch 1 (then m = B/d is a multiple of p in every
 * row, as the interleaved schedule requires); v = the smallest divisor > 1 of the layers per stage; gradients all-reduced
 * in fp16 after backward without overlap (Megatron-LM 2021). One set of constants for every row (data/gpus.json,
 * data/collectives.json, data/timing.json); no per-row tuning.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findGpu } from '../../../shared/hardware/gpus';
import { makePlan } from '../../../shared/plan/defaults';
import type { GpuSpec, ModelSpec } from '../../../shared/plan/types';
import { estimateStepTime } from '../../../shared/time/estimate';

/** params(B) | heads | h | layers | t | p | GPUs | global batch | achieved TFLOP/s (Table 1). */
const ROWS: readonly (readonly [number, number, number, number, number, number, number, number, number])[] = [
  [1.7, 24, 2304, 24, 1, 1, 32, 512, 137],
  [3.6, 32, 3072, 30, 2, 1, 64, 512, 138],
  [7.5, 32, 4096, 36, 4, 1, 128, 512, 142],
  [18.4, 48, 6144, 40, 8, 1, 256, 1024, 135],
  [39.1, 64, 8192, 48, 8, 2, 512, 1536, 138],
  [76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140],
  [145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148],
  [310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155],
  [529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163],
  [1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163],
];

const V = 51200;
const S = 2048;

/** GPT model of a row (Megatron GPT: learned positions, LayerNorm, biases, GeLU MLP 4h, tied embeddings). */
function gpt(name: string, a: number, h: number, l: number): ModelSpec {
  return {
    name, layers: l, hiddenSize: h, heads: a, kvHeads: a, headDim: h / a, ffnSize: 4 * h, gatedMlp: false, attnBias: 'all',
    mlpBias: true, tiedEmbeddings: true, positions: 'learned', maxPositions: S, norm: 'layernorm', qkNorm: false, vocabSize: V,
  };
}

/** Eq. 3: F = 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)). */
function eq3(B: number, l: number, h: number): number {
  return 96 * B * S * l * h * h * (1 + S / (6 * h) + V / (16 * l * h));
}

/** Smallest divisor > 1 of n (n itself when prime). */
function smallestDivisor(n: number): number {
  for (let d = 2; d <= n; d++) if (n % d === 0) return d;
  return 1;
}

test('Narayanan et al. 2021 Table 1: predicted iteration time, median |error| ≤ 8 %, max ≤ 20 %', () => {
  const gpu = findGpu('a100-80gb') as GpuSpec;
  assert.ok(gpu, 'A100 80GB in the catalog');
  const errors: number[] = [];
  const lines: string[] = ['params  t  p   d   v   published s  predicted s  error   pred TFLOP/s'];
  for (const [P, a, h, l, t, p, gpus, B, X] of ROWS) {
    const d = gpus / (t * p);
    const v = p > 1 ? smallestDivisor(l / p) : 1;
    const plan = makePlan({
      model: gpt(`${P}B`, a, h, l),
      training: { microBatch: 1, globalBatch: B, gradAccum: B / d, seqLen: S, precision: 'fp16-mixed', gradDtype: 'fp16', recompute: 'full', flashAttention: false },
      parallel: { tp: t, pp: p, dp: d, vpp: v, schedule: p > 1 ? 'interleaved' : '1f1b', sharding: { style: 'ddp', stage: 0, overlapComm: false } },
      cluster: { gpu, gpusPerNode: 8, nodes: gpus / 8 },
    });
    const est = estimateStepTime(plan);
    assert.deepEqual(est.problems, [], `row ${P}B has no problems`);
    const published = eq3(B, l, h) / (gpus * X * 1e12);
    const err = (est.stepSeconds - published) / published;
    errors.push(Math.abs(err));
    lines.push(`${String(P).padStart(6)} ${String(t).padStart(2)} ${String(p).padStart(2)} ${String(d).padStart(3)} ${String(v).padStart(3)}   `
      + `${published.toFixed(2).padStart(10)}  ${est.stepSeconds.toFixed(2).padStart(11)}  ${(err * 100).toFixed(1).padStart(5)} %  `
      + `${(est.achievedFlopsPerGpu / 1e12).toFixed(1).padStart(8)}`);
  }
  const sorted = [...errors].sort((x, y) => x - y);
  const median = (sorted[4] + sorted[5]) / 2;
  const max = sorted[sorted.length - 1];
  lines.push(`median |error| ${(median * 100).toFixed(1)} %, max ${(max * 100).toFixed(1)} %`);
  console.log(lines.join('\n'));
  assert.ok(median <= 0.08, `median |error| ${(median * 100).toFixed(1)} % ≤ 8 %`);
  assert.ok(max <= 0.2, `max |error| ${(max * 100).toFixed(1)} % ≤ 20 %`);
});
