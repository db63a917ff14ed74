/** Per-stage behaviour from first principles: schedules, edge stages, uneven splits, sharding, offload, LoRA. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countParams, layerParams } from '../../../shared/model/params';
import { estimateMemory } from '../../../shared/memory/estimate';
import { NF4_BYTES } from '../../../shared/memory/dtypes';
import { activationBytesPerMicrobatch, inFlightMicrobatches, peakMemoryFast, stageLayerCounts, staticBytes } from '../../../shared/memory/fast';
import { llamaPlan, preset } from './helpers';

const world8 = { gpusPerNode: 8, nodes: 1 };

describe('pipeline schedules', () => {
  test('1F1B: stage i holds min(m, p − i) micro-batches; the first stage holds p (Narayanan et al. 2021 §2.2.1)', () => {
    const e = estimateMemory(llamaPlan({ training: { gradAccum: 8 }, parallel: { pp: 4, dp: 2 }, cluster: world8 }));
    assert.deepEqual(e.stages.map((s) => s.inFlightMicrobatches), [4, 3, 2, 1]);
    assert.ok(e.stages[0].activationBytes > e.stages[1].activationBytes);
  });
  test('GPipe holds all m micro-batches on every stage', () => {
    const e = estimateMemory(llamaPlan({ training: { gradAccum: 8 }, parallel: { pp: 4, dp: 2, schedule: 'gpipe' }, cluster: world8 }));
    assert.deepEqual(e.stages.map((s) => s.inFlightMicrobatches), [8, 8, 8, 8]);
  });
  test('interleaved: first stage holds p·(1 + (p − 1)/(p·v)) (Korthikanti et al. 2022 §4.2.3)', () => {
    const plan = llamaPlan({ training: { gradAccum: 8 }, parallel: { pp: 4, dp: 2, vpp: 2, schedule: 'interleaved' }, cluster: world8 });
    assert.equal(inFlightMicrobatches(plan, 0), 4 * (1 + 3 / 8));
  });
  test('fewer micro-batches than stages: at most m in flight', () => {
    const e = estimateMemory(llamaPlan({ training: { gradAccum: 2 }, parallel: { pp: 4, dp: 2 }, cluster: world8 }));
    assert.deepEqual(e.stages.map((s) => s.inFlightMicrobatches), [2, 2, 2, 1]);
  });
});

describe('edge stages', () => {
  // Megatron keeps its gradients in a persistent buffer, so every stage peaks with its activations and, on the last,
  // its loss (engines that free gradients after the step can peak at the end of the backward instead).
  // fp32 main_grad, Megatron's default with --bf16 (accumulate_allreduce_grads_in_fp32).
  const e = estimateMemory(llamaPlan({ engine: 'megatron', training: { gradAccum: 8, gradDtype: 'fp32' }, parallel: { pp: 4, dp: 2 }, cluster: world8 }));
  test('embedding activations only on the first stage, logits only on the last', () => {
    assert.ok(e.stages[0].terms.embeddingActivations && !e.stages[0].terms.logits);
    assert.ok(e.stages[3].terms.logits && !e.stages[3].terms.embeddingActivations);
    assert.ok(!e.stages[1].terms.logits && !e.stages[1].terms.embeddingActivations);
    assert.deepEqual(e.stages.map((s) => s.kind), ['first', 'middle', 'middle', 'last']);
  });
  // The loss's copies of the logits at their peak, per engine, for n = b·s·V = 1 · 2048 · 128,256 logits plus the
  // output layer's saved inputs (final norm and head input, 2 · 2·sbh): PyTorch's log_softmax + nll_loss backward
  // keeps the saved log_softmax output, nll_loss's gradient and log_softmax's gradient, all fp32 (12n; aten
  // _log_softmax_backward_data); Megatron's vocab_parallel_cross_entropy forms the softmax in place in an fp32 copy
  // next to the bf16 logits (6n, megatron/core/tensor_parallel/cross_entropy.py); Megatron's fused cross-entropy keeps
  // no fp32 copy (2n + the 2n gradient, plus an fp32 per-token statistic).
  const n = 2048 * 128_256, head = 2 * 2 * 2048 * 4096;
  for (const [engine, lossFusion, bytes] of [['megatron', undefined, 6 * n], ['megatron', 'native', 4 * n + 4 * 2048]] as const) {
    test(`the loss on the last stage (${engine}${lossFusion ? `, ${lossFusion} fusion` : ''}): ${bytes / n}·n logit bytes`, () => {
      const p = llamaPlan({ engine, training: { gradAccum: 8, gradDtype: 'fp32', ...(lossFusion ? { lossFusion } : {}) }, parallel: { pp: 4, dp: 2 }, cluster: world8 });
      assert.equal(estimateMemory(p).stages[3].terms.logits!.bytes, bytes + head);
    });
  }
  // What the loss's backward adds (torch's "temporaries"): upcast 12n − the 4n log_softmax output it saved = 8n
  // (nll_loss's and log_softmax's fp32 gradients); Megatron 6n − 4n = 2n (the gradient's 16-bit cast), next to which
  // TE's head backward makes its dgrad and the final norm's input gradient (2 · 2·sbh = `head`). One micro-batch for
  // torch: with more, the head's fresh gradient next to the accumulated one is larger (below).
  for (const [engine, m, bytes] of [['ddp', 1, 8 * n], ['megatron', 8, 2 * n + head]] as const) {
    test(`the loss's and head's backward temporaries on the last stage (${engine}): ${(bytes / n).toFixed(2)}·n bytes`, () => {
      const p = llamaPlan({ engine, training: { gradAccum: m }, parallel: { pp: 4, dp: 2 }, cluster: world8 });
      assert.equal(estimateMemory(p).stages[3].peaks!.temporaries, bytes);
    });
  }
  test('embedding on the first stage and the untied head on the last: the per-layer parameters balance', () => {
    const per = layerParams(preset('llama-3-8b'));
    const layer = per.attnWeights + per.attnOther + per.norms + per.denseMlp;
    const V = 128_256 * 4096;
    assert.equal(e.stages[0].parametersPerRank, 8 * layer + V);
    assert.equal(e.stages[1].parametersPerRank, 8 * layer);
    assert.equal(e.stages[3].parametersPerRank, 8 * layer + V + 4096);
    // All stages together hold the whole model exactly once.
    assert.equal(e.stages.reduce((a, s) => a + s.parametersPerRank, 0), countParams(preset('llama-3-8b')).parameters);
  });
  test('a 64-stage pipeline reports 64 stages and the fast path agrees with the traceable peak', () => {
    const plan = llamaPlan({ model: { ...preset('llama-3-8b'), layers: 128 }, training: { gradAccum: 64 }, parallel: { pp: 64, dp: 1 }, cluster: { gpusPerNode: 8, nodes: 8 } });
    const est = estimateMemory(plan);
    assert.equal(est.stages.length, 64);
    assert.equal(peakMemoryFast(plan), Math.max(...est.stages.map((s) => s.peakReservedBytes)));
  });
});

describe('uneven split and simulator accessors', () => {
  const plan = llamaPlan({ training: { gradAccum: 8 }, parallel: { pp: 4, dp: 2, stageLayers: [7, 9, 9, 7] }, cluster: world8 });
  test('stageLayers are honoured', () => {
    assert.deepEqual(stageLayerCounts(plan), [7, 9, 9, 7]);
    assert.deepEqual(estimateMemory(plan).stages.map((s) => s.layers), [7, 9, 9, 7]);
    assert.deepEqual(estimateMemory(plan).problems, []);
  });
  test('fast path equals the traceable peak on uneven stages', () => {
    assert.equal(peakMemoryFast(plan), Math.max(...estimateMemory(plan).stages.map((s) => s.peakReservedBytes)));
  });
  test('static + in-flight × per-micro-batch activations = allocated', () => {
    const s = estimateMemory(plan).stages[1];
    assert.ok(Math.abs(staticBytes(plan, 1) + inFlightMicrobatches(plan, 1) * activationBytesPerMicrobatch(plan, 1) - s.peakAllocatedBytes) < 1);
    assert.equal(stageLayerCounts(llamaPlan({ parallel: { pp: 3 } })).join(), '11,11,10');
  });
});

describe('sharding', () => {
  test('norms are replicated over TP, matrices and vocabulary are split', () => {
    const per = layerParams(preset('llama-3-8b'));
    const s = estimateMemory(llamaPlan({ parallel: { tp: 2, dp: 4 }, cluster: world8 })).stages[0];
    const V = 128_256 * 4096;
    assert.equal(s.parametersPerRank, 32 * ((per.attnWeights + per.denseMlp) / 2 + per.norms) + V + 4096);
  });
  for (const stage of [1, 2, 3] as const) {
    test(`replicated baseline ≥ ZeRO-${stage} on every stage; model states shrink as the stage grows`, () => {
      const e = estimateMemory(llamaPlan({ parallel: { dp: 8, sharding: { style: 'deepspeed', stage } }, cluster: world8 }));
      e.stages.forEach((s, i) => assert.ok(e.replicated.stages[i].modelStatesBytes > s.modelStatesBytes));
    });
  }
  test('ZeRO-3 adds gathered parameters; keeping them after forward costs more', () => {
    const a = estimateMemory(llamaPlan({ parallel: { dp: 8, sharding: { style: 'fsdp2', stage: 3 } }, cluster: world8 })).stages[0];
    const b = estimateMemory(llamaPlan({ parallel: { dp: 8, sharding: { style: 'fsdp2', stage: 3, reshardAfterForward: false } }, cluster: world8 })).stages[0];
    assert.ok(a.terms.gatheredParameters!.bytes > 0);
    assert.ok(b.terms.gatheredParameters!.bytes > a.terms.gatheredParameters!.bytes);
  });
  test('MoE experts are divided by EP', () => {
    const m = preset('mixtral-8x7b');
    const per = layerParams(m);
    const one = estimateMemory(llamaPlan({ model: m, parallel: { dp: 8, ep: 1 }, cluster: world8 })).stages[0].parametersPerRank;
    const eight = estimateMemory(llamaPlan({ model: m, parallel: { dp: 8, ep: 8 }, cluster: world8 })).stages[0].parametersPerRank;
    assert.equal(one - eight, 32 * per.experts * (7 / 8));
  });
});

describe('offload, recompute, adapters, fp8', () => {
  test('optimizer offload moves optimizer states and master weights to the host', () => {
    const base = { parallel: { dp: 8, sharding: { style: 'deepspeed' as const, stage: 3 as const } }, cluster: world8 };
    const on = estimateMemory(llamaPlan({ ...base, parallel: { ...base.parallel, sharding: { ...base.parallel.sharding, offloadOptimizer: 'cpu' } } }));
    const off = estimateMemory(llamaPlan(base));
    const s = off.stages[0];
    assert.equal(on.stages[0].terms.optimizerStates!.bytes, 0);
    assert.ok(on.stages[0].peakReservedBytes < s.peakReservedBytes);
    // 8 ranks per node × (8 + 4 bytes) × Ψ / 8.
    assert.ok(Math.abs(on.hostBytesPerNode - 8 * (s.terms.optimizerStates!.bytes + s.terms.masterWeights!.bytes)) < 1);
    assert.equal(off.hostBytesPerNode, 0);
  });
  test('recompute none > selective > full (activations)', () => {
    const act = (recompute: 'none' | 'selective' | 'full', flashAttention = false) =>
      estimateMemory(llamaPlan({ engine: 'megatron', training: { recompute, flashAttention, gradDtype: 'fp32' } })).stages[0].terms.activations!.bytes;
    assert.ok(act('none') > act('selective'));
    assert.ok(act('selective') > act('full'));
    assert.ok(act('none', true) < act('none', false));
  });
  test('QLoRA: NF4 base, gradients only for adapters', () => {
    const e = estimateMemory(llamaPlan({ model: preset('llama-2-7b'), lora: { rank: 8, targets: ['q', 'v'], baseDtype: 'nf4' } }));
    const s = e.stages[0];
    assert.equal(e.model.trainableParameters, 4_194_304);
    // Under torch.autocast (the HF Trainer's DDP, the default engine here) the adapters train in fp32: 4-byte weights
    // and gradients (PyTorch AMP keeps parameters in their own dtype).
    assert.equal(s.peaks!.gradients, 4 * 4_194_304);
    // NF4 replaces the blocks' linear weights only: the embedding and the untied head (32,000 × 4,096 each) and the
    // final norm (4,096) stay 16-bit (bitsandbytes skips nn.Embedding and lm_head: transformers get_keys_to_not_convert).
    const rest = 2 * 32_000 * 4_096 + 4_096;
    assert.ok(Math.abs(s.terms.parameters!.bytes - ((6_738_415_616 - rest) * NF4_BYTES + 2 * rest + 4 * 4_194_304)) < 1);
  });
  test('Adafactor keeps 4·(r + c) bytes per matrix (Shazeer & Stern 2018): far below Adam\'s 8 bytes per parameter', () => {
    const s = estimateMemory(llamaPlan({ training: { optimizer: 'adafactor', precision: 'fp32' } })).stages[0];
    const h = 4096, f = 14336, kv = 1024;
    const layerStates = 4 * ((h + h) + 2 * (h + kv) + (h + h) + 3 * (h + f)) + 4 * 2 * h;
    const layerParams = 2 * h * h + 2 * h * kv + 3 * h * f + 2 * h;
    assert.ok(Math.abs(s.terms.optimizerStates!.bytes - (layerStates / layerParams) * s.parametersPerRank) < 1);
  });
  // Muon (Liu et al. 2025, arXiv:2502.16982 §2): one fp32 momentum per weight-matrix parameter of the layers; the
  // embedding, LM head and final norm keep AdamW's two moments. Llama 3 8B: embedding and untied head 128,256 × 4,096
  // each and a 4,096 norm = 1,050,677,248 parameters; the layers hold the other 6,979,584,000 of 8,030,261,248.
  test('Muon keeps one momentum per layer parameter and AdamW\'s two for the embedding, head and final norm', () => {
    const adam = estimateMemory(llamaPlan({ training: { optimizer: 'adamw' } })).stages[0].terms.optimizerStates!.bytes;
    const muon = estimateMemory(llamaPlan({ training: { optimizer: 'muon' } })).stages[0].terms.optimizerStates!.bytes;
    const shard = (8 * 8_030_261_248) / adam;
    assert.ok(Math.abs(muon - (4 * 6_979_584_000 + 8 * 1_050_677_248) / shard) < 1, `${muon}`);
  });
  test('an fp32 accumulation buffer adds 4 bytes per parameter only when gradients are 16-bit', () => {
    // main_grad buffers are Megatron's (and nanotron's): the Megatron engine's regime.
    const g = (gradDtype: 'bf16' | 'fp32') => estimateMemory(llamaPlan({ engine: 'megatron', training: { gradDtype, fp32GradAccum: true } })).stages[0];
    const psi = g('bf16').parametersPerRank;
    assert.equal(g('bf16').terms.gradAccumBuffer!.bytes, 4 * psi);
    assert.equal(g('fp32').terms.gradAccumBuffer, undefined);
    assert.equal(g('fp32').terms.gradients!.bytes, 4 * psi);
  });
  test('fp8 adds weight caches (fp8 copy + transpose)', () => {
    const s = estimateMemory(llamaPlan({ training: { precision: 'fp8-mixed' } })).stages[0];
    assert.ok(s.terms.fp8WeightCache!.bytes > 0);
  });
  test('every term has a formula, a citation and sourced inputs', () => {
    for (const t of Object.values(estimateMemory(llamaPlan()).stages[0].terms)) {
      assert.ok(t && t.formula.length > 0 && t.citation.length > 0);
      for (const i of Object.values(t.inputs)) assert.ok(i.source.kind && i.source.detail);
    }
  });
});
