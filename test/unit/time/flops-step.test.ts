/**
 * FLOP counts against the published closed forms and step-time properties from first principles:
 * Narayanan et al. 2021 Eq. 3 (hardware FLOPs with full recomputation, 96·B·s·l·h²·(1 + s/(6h) + V/(16lh)));
 * Korthikanti et al. 2022 Eq. 7 (model FLOPs, 72·B·l·s·h²·(1 + s/(6h) + V/(12hl))); LoRA backward of frozen weights
 * needs input gradients only (Hu et al. 2021); MoE counts active experts only (Fedus et al. 2022).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateStepTime } from '../../../shared/time/estimate';
import { stepSecondsFast } from '../../../shared/time/stepTime';
import { TimeCache } from '../../../shared/time/cache';
import { microbatchWork } from '../../../shared/time/microbatch';
import { A100, gpt, plan } from '../sim/fixtures';

const rel = (a: number, b: number) => Math.abs(a - b) / Math.abs(b);

describe('FLOPs per step equal the papers’ closed forms', () => {
  const rows: [number, number, number, number, number][] = [
    // B, l, h, a, tp — GPT shapes of Narayanan et al. 2021 Table 1 (1.7B, 18.4B) and a 175B-like one.
    [512, 24, 2304, 24, 1], [1024, 40, 6144, 48, 8], [64, 96, 12288, 96, 8],
  ];
  const s = 2048, V = 51200;
  for (const [B, l, h, a, t] of rows) {
    test(`l=${l} h=${h} B=${B}`, () => {
      const pl = plan({
        model: gpt(l, h, a, V), training: { microBatch: 1, globalBatch: B, gradAccum: B, seqLen: s, recompute: 'full', flashAttention: false },
        parallel: { tp: t, dp: 1 }, cluster: { gpu: A100, gpusPerNode: 8 },
      });
      const est = estimateStepTime(pl);
      const eq3 = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
      const eq7 = 72 * B * l * s * h * h * (1 + s / (6 * h) + V / (12 * h * l));
      assert.ok(rel(est.hardwareFlopsPerStep, eq3) < 1e-12, `hardware ${est.hardwareFlopsPerStep} vs Eq.3 ${eq3}`);
      assert.ok(rel(est.modelFlopsPerStep, eq7) < 1e-12, `model ${est.modelFlopsPerStep} vs Eq.7 ${eq7}`);
      assert.ok(est.mfu < est.hfu && est.hfu < 1);
      assert.ok(rel(est.tokensPerSecond, (B * s) / est.stepSeconds) < 1e-12);
    });
  }
});

test('LoRA: backward of frozen weights is 1× forward (input gradients only), not 2×', () => {
  const base = { model: gpt(8, 2048, 16), training: { microBatch: 1, seqLen: 1024 }, cluster: { gpu: A100 } };
  const full = microbatchWork(plan(base), 0);
  const lora = microbatchWork(plan({ ...base, lora: { rank: 8, targets: ['q', 'v'] } }), 0);
  assert.ok(rel(full.backwardFlops, 2 * full.forwardFlops) < 0.02, 'full fine-tuning ≈ 2× forward');
  assert.ok(lora.backwardFlops < 1.5 * lora.forwardFlops, `LoRA ${lora.backwardFlops / lora.forwardFlops}× forward`);
});

test('MoE: forward FLOPs count the top-k experts only (2 of 8 ≈ a dense MLP of twice the expert size)', () => {
  const dense = gpt(4, 1024, 16);
  const moe = { experts: 8, topK: 2, expertFfnSize: 2048, sharedExperts: 0, sharedExpertFfnSize: 0, denseFirstLayers: 0, layerFrequency: 1, sharedExpertGate: false };
  const a = microbatchWork(plan({ model: { ...dense, ffnSize: 4096 }, cluster: { gpu: A100 } }), 0).forwardFlops;
  const b = microbatchWork(plan({ model: { ...dense, ffnSize: 4096, moe }, cluster: { gpu: A100 } }), 0).forwardFlops;
  // Router adds 2·T·h·E FLOPs per layer: b − a = 4 layers × 2·2048·1024·8.
  assert.ok(Math.abs(b - a - 4 * 2 * 2048 * 1024 * 8) < 1e-3 * a);
});

describe('step-time properties', () => {
  const mk = (extra: object) => plan({
    model: gpt(24, 4096, 32), training: { microBatch: 1, gradAccum: 8, seqLen: 2048 },
    parallel: { tp: 8, dp: 4, ...extra }, cluster: { gpu: A100, gpusPerNode: 8 },
  });
  test('TP communication overlap shortens the step', () => {
    assert.ok(estimateStepTime(mk({ tpCommOverlap: true })).stepSeconds < estimateStepTime(mk({})).stepSeconds);
  });
  test('the fast path equals the estimate (the schedule run over the traceable timings)', () => {
    // pp = 5 and 7 split 24 layers unevenly (runs of ⌈L/p⌉ and ⌊L/p⌋ layers).
    for (const extra of [{}, { pp: 4 }, { pp: 5 }, { pp: 7, schedule: 'gpipe' }, { pp: 4, vpp: 2, schedule: 'interleaved' }, { pp: 4, vpp: 3, schedule: 'interleaved', stageLayers: [5, 7, 7, 5] }, { pp: 4, schedule: 'zb-h1' }, { pp: 3, sharding: { style: 'deepspeed', stage: 1 } }]) {
      const pl = mk(extra);
      assert.ok(rel(stepSecondsFast(pl, new TimeCache()), estimateStepTime(pl).stepSeconds) < 1e-12, JSON.stringify(extra));
    }
  });
  test('every term is finite, non-negative and carries a formula', () => {
    const est = estimateStepTime(mk({ pp: 4 }));
    for (const t of Object.values(est.terms)) {
      assert.ok(Number.isFinite(t.seconds) && t.seconds >= 0, t.name);
      assert.ok(t.formula.length > 0 && t.citation.length > 0);
    }
    assert.ok(est.flopConvention.includes('causal'));
  });
});
