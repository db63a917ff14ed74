/**
 * The scaled model keeps the config's family, and its parameter layout has exactly the parameters the formulas of
 * docs/formulas.md#parameters give for the scaled dimensions (computed here by hand, not by the code under test).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { scaleModel } from '../../validation/model/scale';
import { buildLayout } from '../../validation/model/layout';
import { GPT2, LLAMA3_8B, QWEN3 } from './models';

describe('scaled model', () => {
  test('Llama-3-8B → 2 layers × 128, GQA kept as 4 query heads per KV head, 557,696 parameters', () => {
    const s = scaleModel(LLAMA3_8B, { seqLen: 8192, microBatch: 1 });
    const m = s.model;
    assert.deepEqual([m.layers, m.hiddenSize, m.heads, m.kvHeads, m.headDim, m.ffnSize, m.vocabSize], [2, 128, 4, 1, 32, 448, 512]);
    assert.equal(m.gatedMlp, true);
    assert.equal(m.norm, 'rmsnorm');
    assert.equal(m.positions, 'rotary');
    assert.equal(s.seqLen, 64);
    // §7.2 Llama: attn = h·H·d + 2·h·KV·d + H·d·h; mlp = 3·h·I; norms 2h; total = L·(…) + V·h + V·h (untied) + h.
    const h = 128, H = 4, KV = 1, d = 32, I = 448, V = 512, L = 2;
    const layer = h * H * d + 2 * h * KV * d + H * d * h + 3 * h * I + 2 * h;
    const psi = L * layer + 2 * V * h + h;
    assert.equal(psi, 557_696);
    assert.equal(buildLayout(m, 4).parameters, psi);
  });

  test('GPT-2 → tied, learned positions, LayerNorm and biases: 470,528 parameters (tfjs-notes test model size)', () => {
    const s = scaleModel(GPT2, { seqLen: 1024, microBatch: 8 });
    const m = s.model;
    assert.equal(m.kvHeads, m.heads);
    assert.equal(m.ffnSize, 4 * m.hiddenSize);
    assert.equal(s.microBatch, 2);
    // §7.2 GPT-2: per layer = (h·3h + 3h) + (h·h + h) + (h·4h + 4h) + (4h·h + h) + 2·2h; total = V·h + n_pos·h + L·layer + 2h.
    const h = 128, V = 512, T = 64, L = 2;
    const layer = h * 3 * h + 3 * h + h * h + h + h * 4 * h + 4 * h + 4 * h * h + h + 4 * h;
    assert.equal(layer, 198_272);
    assert.equal(buildLayout(m, 4).parameters, V * h + T * h + L * layer + 2 * h);
  });

  test('Qwen3 → q/k-norm (2·d per layer) and tied embeddings kept', () => {
    const m = scaleModel(QWEN3, { seqLen: 4096, microBatch: 1 }).model;
    assert.equal(m.qkNorm, true);
    assert.equal(m.kvHeads, 2);
    const h = 128, H = 4, KV = 2, d = 32, I = 384, V = 512, L = 2;
    assert.equal(m.ffnSize, I);
    const layer = h * H * d + 2 * h * KV * d + H * d * h + 2 * d + 3 * h * I + 2 * h;
    assert.equal(buildLayout(m, 2).parameters, L * layer + V * h + h);
  });

  test('every unit is padded to a multiple of the rank count, and the padding is at most N−1 per unit', () => {
    const m = scaleModel(GPT2, { seqLen: 64, microBatch: 2 }).model;
    for (const n of [1, 2, 3, 4, 5, 7]) {
      const lay = buildLayout(m, n);
      for (const u of lay.units) {
        assert.equal(u.paddedSize % n, 0);
        assert.ok(u.paddedSize - u.size < n);
      }
    }
  });

  test('the scaling is stated dimension by dimension, with what was dropped', () => {
    const s = scaleModel({ ...LLAMA3_8B, moe: { experts: 8, topK: 2, expertFfnSize: 14336, sharedExperts: 0, sharedExpertFfnSize: 0, denseFirstLayers: 0, layerFrequency: 1, sharedExpertGate: false } }, { seqLen: 4096, microBatch: 1 });
    assert.deepEqual(s.scaling.layers, { config: 32, run: 2 });
    assert.deepEqual(s.scaling.hiddenSize, { config: 4096, run: 128 });
    assert.ok(s.scaling.dropped.some((x) => /mixture of experts/.test(x)));
    assert.match(s.scaling.summary, /2 layers × 128 hidden/);
  });
});
