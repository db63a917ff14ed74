/**
 * Modules LoRA trains in full beside its adapters (LoraSpec.fullModules): PEFT's modules_to_save trains a deep copy of
 * each module and freezes the original (peft/utils/other.py ModulesToSaveWrapper.update), DeepSpeed-Chat without
 * --only_optimize_lora trains the modules themselves. Expected bytes from first principles: Llama 3 8B's embedding and
 * head are each 128,256 × 4,096 = 525,336,576 parameters (config.json vocab_size, hidden_size, untied).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countParams } from '../../../shared/model/params';
import { stageNumbers } from '../../../shared/memory/fast';
import { stageParams } from '../../../shared/comm/stageParams';
import type { LoraSpec } from '../../../shared/plan/types';
import { layoutLinks } from '../../../shared/comm/layout';
import { computeLayerCosts } from '../../../shared/time/context';
import { FITTED_PARAMS } from '../../../shared/time/params';
import { llamaPlan, preset } from './helpers';

const EMBED = 128_256 * 4_096;
const ADAPTERS: LoraSpec = { rank: 16, targets: ['q', 'k', 'v', 'o'], baseDtype: 'bf16' };
const SAVED: LoraSpec = { ...ADAPTERS, fullModules: ['embed', 'head'], fullModulesCopied: true };

/** Model states of the one stage of a 1-GPU plan, by term. */
function states(lora: LoraSpec, over: Parameters<typeof llamaPlan>[0] = {}) {
  const s = stageNumbers(llamaPlan({ lora, ...over }), 0);
  assert.ok(s, 'the plan computes');
  return { parameters: s.parameters, gradients: s.gradients, optimizer: s.optimizerStates, master: s.masterWeights, trainable: s.trainablePerRank };
}

describe('LoRA with modules trained in full', () => {
  test('parameter counts: the modules join the trainable count; the model keeps its size', () => {
    const base = countParams(preset('llama-3-8b'), ADAPTERS);
    const saved = countParams(preset('llama-3-8b'), SAVED);
    assert.equal(saved.trainableParameters - base.trainableParameters, 2 * EMBED);
    // PEFT's copies are memory (the next tests), not parameters of the model a user reads as its size.
    assert.equal(saved.parameters, base.parameters);
  });

  test('torch AMP (HF Trainer, one GPU): a bf16 copy, a bf16 gradient and AdamW states in bf16 per trained parameter', () => {
    // The model is loaded in bf16 (lora.baseDtype); PEFT casts only the adapters to fp32 (autocast_adapter_dtype), so
    // the copy is bf16 (2 B), its gradient bf16 (2 B) and torch AdamW's exp_avg and exp_avg_sq follow the parameter's
    // dtype (2 × 2 B); no master copy.
    const over = { training: { precision: 'bf16-mixed' as const, optimizer: 'adamw' as const } };
    const a = states(ADAPTERS, over), b = states(SAVED, over);
    assert.equal(b.parameters - a.parameters, 2 * EMBED * 2);
    assert.equal(b.gradients - a.gradients, 2 * EMBED * 2);
    assert.equal(b.optimizer - a.optimizer, 2 * EMBED * 4);
    assert.equal(b.master - a.master, 0);
    assert.equal(b.trainable - a.trainable, 2 * EMBED);
  });

  test('DeepSpeed ZeRO-2 over 8 GPUs, the modules trained in place: 16-bit gradients, fp32 master and Adam states, sharded', () => {
    // ZeRO (Rajbhandari et al. 2020 §3): 2 B of 16-bit weight, 2 B of gradient, 12 B of fp32 master and Adam states per
    // trained parameter; ZeRO-2 shards the gradient, master and states over the 8 data-parallel ranks. The weight was
    // held already (frozen in bf16), so it adds nothing.
    const over = {
      engine: 'deepspeed' as const, training: { precision: 'bf16-mixed' as const, optimizer: 'adamw' as const },
      parallel: { dp: 8, sharding: { style: 'deepspeed' as const, stage: 2 as const } }, cluster: { gpusPerNode: 8, nodes: 1 },
    };
    const inPlace: LoraSpec = { ...SAVED, fullModulesCopied: false };
    const a = states(ADAPTERS, over), b = states(inPlace, over);
    assert.equal(b.parameters - a.parameters, 0);
    assert.equal(b.gradients - a.gradients, (2 * EMBED * 2) / 8);
    assert.equal(b.master - a.master, (2 * EMBED * 4) / 8);
    assert.equal(b.optimizer - a.optimizer, (2 * EMBED * 8) / 8);
  });

  test('a tied head is the embedding: naming either trains the one matrix', () => {
    // Llama 3.2 1B ties lm_head to embed_tokens (config.json tie_word_embeddings: true): 128,256 × 2,048 parameters.
    const m = preset('llama-3.2-1b');
    const base = countParams(m, ADAPTERS).trainableParameters;
    for (const fullModules of [['head'], ['embed'], ['embed', 'head']] as const) {
      assert.equal(countParams(m, { ...ADAPTERS, fullModules, fullModulesCopied: true }).trainableParameters - base, 128_256 * 2_048, fullModules.join());
    }
  });

  test('pipeline stages: the embedding trains on the first stage, the head on the last; the gradient traffic follows', () => {
    const plan = (lora: LoraSpec) => llamaPlan({ lora, parallel: { pp: 4 }, cluster: { gpusPerNode: 4, nodes: 1 } });
    const a = plan(ADAPTERS), b = plan(SAVED);
    assert.equal(stageParams(b, 0).trainable - stageParams(a, 0).trainable, EMBED);
    assert.equal(stageParams(b, 1).trainable - stageParams(a, 1).trainable, 0);
    assert.equal(stageParams(b, 3).trainable - stageParams(a, 3).trainable, EMBED);
    assert.equal(stageNumbers(b, 1)!.gradients, stageNumbers(a, 1)!.gradients);
    assert.ok(stageNumbers(b, 3)!.gradients > stageNumbers(a, 3)!.gradients);
  });

  test('time: a frozen head runs one backward GEMM instead of two, and a frozen embedding no backward', () => {
    // The head's backward is dX = dY·W (2·T·V·h FLOPs) and dW = dYᵀ·X (the same FLOPs); autograd skips dW for a weight
    // that does not require grad, and an embedding fed token ids with a frozen weight has no backward at all.
    const costs = (lora: LoraSpec | undefined) => { const p = llamaPlan(lora ? { lora } : {}); return computeLayerCosts(p, layoutLinks(p), FITTED_PARAMS); };
    const full = costs(undefined), frozen = costs(ADAPTERS), saved = costs(SAVED);
    assert.ok(frozen.head.bwd.gemm < 0.7 * full.head.bwd.gemm, `${frozen.head.bwd.gemm} vs ${full.head.bwd.gemm}`);
    assert.ok(frozen.head.bwd.gemm > 0.3 * full.head.bwd.gemm);
    assert.equal(saved.head.bwd.gemm, full.head.bwd.gemm);
    assert.equal(frozen.embedding.bwdTotal, 0);
    assert.ok(full.embedding.bwdTotal > 0);
    assert.equal(saved.embedding.bwdTotal, full.embedding.bwdTotal);
  });
});
