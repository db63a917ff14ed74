/**
 * Megatron's selective recomputation by module (`--recompute-modules`; TransformerConfig.recompute_modules,
 * Megatron-LM d98e8a64): what each module's layers stop keeping (shared/memory/megatronRecompute.ts), against
 * Korthikanti et al.'s per-layer counts with that module's tensors taken out, from first principles:
 * - mlp (dense): the checkpointed MLP with its fused pre-MLP norm keeps its input only: the gate and up outputs and the
 *   down projection's input, 3·B·sb·f/t, and the norm's output, B·sbh;
 * - moe_act: the routed experts' activation output (the down projection's input), B·sb·k·f_e/t;
 * - layernorm: a MoE layer's pre-MLP norm output, B·sbh (a dense layer's norms are fused into TE's linears);
 * - mla_up_proj: each latent norm's output and fp32 rsigma, (B·r + 4)·sb, and q, k, v, B·sb·(2·a·(d_n + d_r) + a·d_v)/t;
 * - core_attn left out of the list: attention's log-sum-exp stays, 4·a·sb/t.
 * Plans: one H100, one micro-batch of 4,096 tokens, bf16, TP 1, one pipeline stage.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { stageNumbers } from '../../../shared/memory/fast';
import { makePlan } from '../../../shared/plan/defaults';
import type { MegatronRecomputeModule, ModelSpec } from '../../../shared/plan/types';
import { parseRecomputeModules } from '../../../shared/plan/recomputeModules';
import { H100, preset } from './helpers';

const S = 4096;

/** Layer activations of one micro-batch on stage 0 under Megatron's selective recomputation of `modules`. */
function layerActs(model: ModelSpec, modules: MegatronRecomputeModule[] | undefined, recompute: 'selective' | 'none' = 'selective') {
  const plan = makePlan({
    model, engine: 'megatron',
    training: { microBatch: 1, seqLen: S, precision: 'bf16-mixed', recompute, modelImpl: 'megatron', ...(modules ? { recomputeModules: modules } : {}) },
  } as never, H100);
  return stageNumbers(plan, 0)!;
}

describe('Megatron --recompute-modules: what each module\'s layers stop keeping', () => {
  test('the list as files write it: words, commas, Python and YAML lists, unknown names apart', () => {
    assert.deepEqual(parseRecomputeModules('layernorm moe_act'), { modules: ['layernorm', 'moe_act'], unknown: [] });
    assert.deepEqual(parseRecomputeModules("['mla_up_proj', 'core_attn']"), { modules: ['mla_up_proj', 'core_attn'], unknown: [] });
    assert.deepEqual(parseRecomputeModules('[]'), { modules: [], unknown: [] });
    assert.deepEqual(parseRecomputeModules('mlp,bogus,mhc'), { modules: ['mlp'], unknown: ['bogus', 'mhc'] });
  });

  test('the default list is core attention: the same as no list; without it the log-sum-exp stays', () => {
    const llama = preset('llama-3-8b');
    assert.equal(layerActs(llama, undefined).layerActPerMicrobatch, layerActs(llama, ['core_attn']).layerActPerMicrobatch);
    assert.equal(layerActs(llama, []).layerActPerMicrobatch, layerActs(llama, undefined, 'none').layerActPerMicrobatch);
    assert.equal(layerActs(llama, []).layerActPerMicrobatch - layerActs(llama, ['core_attn']).layerActPerMicrobatch, 32 * 4 * 32 * S);
  });

  test('mlp: a dense layer keeps neither its MLP\'s tensors nor its pre-MLP norm\'s output; one layer\'s come back in the backward', () => {
    const llama = preset('llama-3-8b');
    const base = layerActs(llama, ['core_attn']), mlp = layerActs(llama, ['core_attn', 'mlp']);
    const perLayer = 3 * 2 * S * 14_336 + 2 * S * 4096;
    assert.equal(base.layerActPerMicrobatch - mlp.layerActPerMicrobatch, 32 * perLayer);
    // The working set of the backward: one layer's rebuilt MLP beside core attention's rebuilt log-sum-exp.
    assert.equal(mlp.working - base.working, perLayer);
  });

  test('moe_act and layernorm on Qwen3-30B-A3B\'s 48 MoE layers', () => {
    const q = preset('qwen3-30b-a3b');
    const base = layerActs(q, ['core_attn']);
    const act = 2 * S * 8 * 768, norm = 2 * S * 2048;
    assert.equal(base.layerActPerMicrobatch - layerActs(q, ['core_attn', 'moe_act']).layerActPerMicrobatch, 48 * act);
    assert.equal(base.layerActPerMicrobatch - layerActs(q, ['core_attn', 'layernorm']).layerActPerMicrobatch, 48 * norm);
    assert.equal(base.layerActPerMicrobatch - layerActs(q, ['core_attn', 'moe_act', 'layernorm']).layerActPerMicrobatch, 48 * (act + norm));
  });

  test('mla_up_proj on DeepSeek-V3: the latents\' norm outputs and the up projections\' q, k and v in all 61 layers', () => {
    const ds = preset('deepseek-v3');
    const base = layerActs(ds, ['core_attn']), up = layerActs(ds, ['core_attn', 'mla_up_proj']);
    const latents = (2 * 1536 + 4) * S + (2 * 512 + 4) * S;
    const qkv = 2 * S * (2 * 128 * (128 + 64) + 128 * 128);
    assert.equal(base.layerActPerMicrobatch - up.layerActPerMicrobatch, 61 * (latents + qkv));
  });
});
