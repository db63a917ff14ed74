/**
 * Real validation runs: 4 ranks as worker threads exchanging tensors through the ring, in DDP and ZeRO-1/2/3.
 * Expected bytes come from first principles (Rajbhandari et al. 2020, §5 and §7): fp32 parameters 4 B/param, fp32
 * gradients 4 B/param, Adam m and v 8 B/param, each divided by N from stage 3 / 2 / 1; a ring all-reduce sends
 * 2(N−1)/N·Ψ·4 B per rank (reduce-scatter + all-gather, Patarasuk & Yuan 2009), ZeRO-1/2 the same split in two,
 * ZeRO-3 3(N−1)/N·Ψ·4 B (all-gather in forward, again in backward, gradient reduce-scatter).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runValidation, type ValidationReport } from '../../validation/index';
import { GPT2, LLAMA3_8B, QWEN3, planOf } from './models';

const N = 4;
/** Ψ of the scaled Llama-3-8B (scale.test.ts derives it from §7.2). */
const PSI = 557_696;

describe('validation run, Llama-3-8B family, 4 ranks × {DDP, ZeRO-1, ZeRO-2, ZeRO-3} × 3 steps on wasm', () => {
  let r: ValidationReport;
  const progress: number[] = [];
  before(async () => {
    r = await runValidation({ plan: planOf(LLAMA3_8B), ranks: N, steps: 3, onProgress: (p) => progress.push(p.fraction) });
  });

  test('finishes with every check passed on the wasm backend, honestly labelled', () => {
    assert.equal(r.error, undefined);
    assert.equal(r.status, 'ok');
    assert.equal(r.backend, 'wasm');
    assert.match(r.backendLabel, /GPU memory is estimated, not measured/);
    assert.equal(r.parameters, PSI);
    assert.deepEqual(r.runs.map((x) => x.mode), ['ddp', 'zero1', 'zero2', 'zero3']);
    assert.ok(r.checks.length > 0 && r.checks.every((c) => c.passed !== false), r.checks.filter((c) => c.passed === false).map((c) => c.label).join('; '));
    assert.ok(progress.length > 0 && progress.every((f, i) => f >= 0 && f <= 1 && (i === 0 || f >= progress[i - 1])));
  });

  const stage = { ddp: 0, zero1: 1, zero2: 2, zero3: 3 } as const;
  for (const mode of ['ddp', 'zero1', 'zero2', 'zero3'] as const) {
    test(`${mode}: model-state bytes and bytes sent per rank equal first principles`, () => {
      const run = r.runs.find((x) => x.mode === mode);
      assert.ok(run);
      assert.equal(run.ranks.length, N);
      const s = stage[mode];
      for (const rank of run.ranks) {
        assert.equal(rank.measured.parametersBytes, (4 * PSI) / (s >= 3 ? N : 1));
        assert.equal(rank.measured.gradientsBytes, (4 * PSI) / (s >= 2 ? N : 1));
        assert.equal(rank.measured.optimizerStatesBytes, (8 * PSI) / (s >= 1 ? N : 1));
        assert.equal(rank.measured.sentBytes, ((s === 3 ? 3 : 2) * (N - 1) / N) * PSI * 4);
        assert.equal(rank.measured.receivedBytes, rank.measured.sentBytes);
        assert.equal(rank.measured.leakedBytes, 0);
        assert.deepEqual(rank.extras, []);
        // The core's estimate agrees exactly (no padding here: every unit of Ψ divides by 4).
        assert.equal(rank.estimated.parametersBytes, rank.measured.parametersBytes);
        assert.equal(rank.estimated.optimizerStatesBytes, rank.measured.optimizerStatesBytes);
        assert.equal(rank.estimated.sentBytes, rank.measured.sentBytes);
        assert.ok(rank.measured.tapePeakBytes > rank.measured.parametersBytes);
      }
    });
  }

  test('ZeRO-3 gathers every unit once in forward and once in backward', () => {
    const c = r.runs.find((x) => x.mode === 'zero3')?.ranks[0].measured.collectives ?? {};
    const third = ((N - 1) / N) * PSI * 4;
    assert.equal(c['all-gather (forward)']?.sentBytes, third);
    assert.equal(c['all-gather (backward)']?.sentBytes, third);
    assert.equal(c['reduce-scatter (gradients)']?.sentBytes, third);
  });

  test('ranks hold bitwise-identical parameters; sharded modes match DDP within relative L2 1e-4; loss falls', () => {
    for (const run of r.runs) {
      assert.equal(run.ranksIdentical, true);
      if (run.mode !== 'ddp') assert.ok(run.relativeL2VsReplicated !== null && run.relativeL2VsReplicated <= 1e-4);
      assert.equal(run.losses.length, 3);
      // Cross-entropy of untrained logits ≈ ln V = ln 512 ≈ 6.24.
      assert.ok(Math.abs(run.losses[0] - Math.log(512)) < 0.2, `first loss ${run.losses[0]}`);
      assert.ok(run.losses[2] < run.losses[0]);
    }
  });
});

describe('validation run, GPT-2 family on 3 ranks: padding to a multiple of N is itemised', () => {
  test('DDP and ZeRO-3 with Ψ not divisible by 3', async () => {
    const r = await runValidation({ plan: planOf(GPT2), ranks: 3, modes: ['ddp', 'zero3'], steps: 2, scale: { hiddenSize: 64, vocabSize: 128, seqLen: 32 } });
    assert.equal(r.status, 'ok', r.error ?? r.checks.filter((c) => c.passed === false).map((c) => c.detail).join('; '));
    // §7.2 GPT-2 at h = 64, V = 128, T = 32, L = 2: V·h + T·h + L·(12h² + 13h) + 2h.
    const h = 64, psi = 128 * h + 32 * h + 2 * (12 * h * h + 13 * h) + 2 * h;
    assert.equal(r.parameters, psi);
    const z3 = r.runs.find((x) => x.mode === 'zero3')?.ranks[0];
    assert.ok(z3);
    const pad = z3.extras.find((e) => e.component === 'parametersBytes')?.bytes ?? 0;
    // The measured shard is ⌈unit/3⌉ per unit, never less than Ψ/3, and exactly the estimate plus the itemised padding.
    assert.ok(z3.measured.parametersBytes >= (4 * psi) / 3);
    assert.equal(z3.measured.parametersBytes, z3.estimated.parametersBytes + pad);
  });
});

describe('validation run on the pure-JS cpu backend', () => {
  test('a tiny model on 2 ranks runs and checks out', async () => {
    const r = await runValidation({ plan: planOf(LLAMA3_8B), ranks: 2, modes: ['ddp', 'zero2'], steps: 1, backend: 'cpu', scale: { hiddenSize: 32, vocabSize: 64, seqLen: 16, microBatch: 1 } });
    assert.equal(r.backend, 'cpu', r.error);
    assert.equal(r.status, 'ok');
    assert.equal(r.backends.length, 1);
    const z2 = r.runs[1].ranks[0].measured;
    assert.equal(z2.gradientsBytes, (4 * r.parameters) / 2);
  });
});

describe('validation run, Qwen3 family (q/k-norm, tied embeddings, GQA 2:1)', () => {
  test('ZeRO-3 and DDP on 2 ranks agree with the core and with each other', async () => {
    const r = await runValidation({ plan: planOf(QWEN3), ranks: 2, modes: ['ddp', 'zero3'], steps: 2, scale: { hiddenSize: 64, vocabSize: 128, seqLen: 32 } });
    assert.equal(r.status, 'ok', r.error ?? r.checks.filter((c) => c.passed === false).map((c) => c.label).join('; '));
    // §7.2 at h = 64, H = 4, KV = 2, d = 16, I = 192, V = 128, L = 2: L·(h·H·d + 2·h·KV·d + H·d·h + 2d + 3·h·I + 2h) + V·h + h.
    const h = 64, d = 16;
    assert.equal(r.parameters, 2 * (h * 4 * d + 2 * h * 2 * d + 4 * d * h + 2 * d + 3 * h * 192 + 2 * h) + 128 * h + h);
    assert.ok((r.runs[1].relativeL2VsReplicated ?? 1) <= 1e-4);
  });
});
