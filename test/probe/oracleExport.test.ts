// The oracle's plan as ShardLens exports it (pure): each engine's regime, model implementation, checkpointing policy
// and mesh, reduced depth, and the comparison's tolerances (issue #13: categories 3 %, total 2 %).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePlan } from '../../shared/plan/defaults';
import { compareCategories } from '../../validation/torch/oracleCompare';
import { exportOraclePlan, hfConfigOf } from '../../validation/torch/oraclePlan';
import type { OraclePlan } from '../../validation/torch/oracleTypes';
import { LLAMA3_8B } from './fixtures/plans';

function exported(p: Parameters<typeof makePlan>[0], layers?: number): OraclePlan {
  const e = exportOraclePlan(makePlan(p), { layers });
  if ('code' in e) throw new Error(e.message);
  return e.oraclePlan;
}

describe('oracle export', () => {
  test('torchtitan FSDP2 × CP × TP: FSDP2 regime and model, shard group over dp_shard, CP and TP as meshes', () => {
    const p = exported({
      engine: 'fsdp2', model: LLAMA3_8B,
      training: { recompute: 'selective', recomputePolicy: 'torchtitan-op', modelImpl: 'torchtitan' },
      parallel: { dp: 4, tp: 2, cp: 2, sharding: { style: 'fsdp2', stage: 3, shardGroupSize: 2 } },
    }, 2);
    assert.equal(p.regime, 'fsdp2');
    assert.equal(p.impl, 'torchtitan');
    assert.deepEqual(p.ac, { mode: 'selective-op' });
    assert.equal(p.model.layers, 2);
    assert.deepEqual([p.parallel.dpReplicate, p.parallel.dpShard, p.parallel.cp, p.parallel.tp, p.parallel.sharding], [2, 2, 2, 2, 'fsdp2']);
  });

  test('torchtitan selective per-layer defaults to every 2nd block (torchtitan selective_ac_option "2")', () => {
    const p = exported({ engine: 'fsdp2', model: LLAMA3_8B, training: { recompute: 'selective' }, parallel: { dp: 8, sharding: { style: 'fsdp2' } } });
    assert.deepEqual(p.ac, { mode: 'selective-layer', every: 2 });
  });

  test('Megatron: its regime and model, the distributed optimizer flag, vocabulary padded to 128·TP', () => {
    const p = exported({
      engine: 'megatron', model: { ...LLAMA3_8B, vocabSize: 128000, vocabPadMultiple: 128 },
      training: { recompute: 'full', gradDtype: 'fp32', fp32GradAccum: true },
      parallel: { dp: 8, tp: 4, sp: true, sharding: { style: 'megatron-distopt' } },
    });
    assert.equal(p.regime, 'megatron');
    assert.equal(p.impl, 'megatron');
    assert.equal(p.training.distributedOptimizer, true);
    assert.equal(p.training.gradReduceInBf16, false);
    assert.deepEqual(p.ac, { mode: 'full' });
    assert.equal(p.parallel.sharding, 'none');
    // 128000 is a multiple of 512: no padding (Megatron _vocab_size_with_padding).
    assert.equal(p.model.vocabSize, 128000);
  });

  test('HF Trainer DDP: autocast regime, transformers model from a config.json, DDP buckets', () => {
    const p = exported({ engine: 'ddp', model: LLAMA3_8B, training: { recompute: 'full' }, parallel: { dp: 4 } });
    assert.equal(p.regime, 'amp');
    assert.equal(p.impl, 'hf');
    assert.deepEqual(p.ac, { mode: 'hf' });
    assert.equal(p.parallel.sharding, 'ddp');
    assert.equal(p.hfConfig?.model_type, 'llama');
    assert.equal(p.hfConfig?.num_key_value_heads, 8);
  });

  test('config.json per family: mixtral for MoE, qwen3 for q/k norms, qwen2 for qkv bias', () => {
    assert.equal(hfConfigOf({ ...LLAMA3_8B, qkNorm: true }).model_type, 'qwen3');
    assert.equal(hfConfigOf({ ...LLAMA3_8B, attnBias: 'qkv' }).model_type, 'qwen2');
    assert.equal(hfConfigOf({ ...LLAMA3_8B, moe: { experts: 8, topK: 2, expertFfnSize: 14336, sharedExperts: 0, sharedExpertFfnSize: 0, denseFirstLayers: 0, layerFrequency: 1, sharedExpertGate: false } }).model_type, 'mixtral');
  });

  test('multi-head latent attention: a deepseek_v3 config.json with its latent and head widths, every layer dense', () => {
    // The keys DeepseekV3Config reads (transformers configuration_deepseek_v3.py); q_lora_rank null = queries projected directly.
    const mla = { qLoraRank: 1536, kvLoraRank: 512, qkNopeHeadDim: 128, qkRopeHeadDim: 64, vHeadDim: 128 };
    const cfg = hfConfigOf({ ...LLAMA3_8B, layers: 2, heads: 128, kvHeads: 128, headDim: 192, mla });
    assert.deepEqual([cfg.model_type, cfg.q_lora_rank, cfg.kv_lora_rank, cfg.qk_nope_head_dim, cfg.qk_rope_head_dim, cfg.v_head_dim, cfg.first_k_dense_replace], ['deepseek_v3', 1536, 512, 128, 64, 128, 2]);
    assert.equal('head_dim' in cfg, false);
    assert.equal(hfConfigOf({ ...LLAMA3_8B, mla: { ...mla, qLoraRank: 0 } }).q_lora_rank, null);
    const titan = exportOraclePlan(makePlan({ engine: 'fsdp2', model: { ...LLAMA3_8B, heads: 128, kvHeads: 128, headDim: 192, mla }, training: { modelImpl: 'torchtitan' }, parallel: { dp: 8 } } as never));
    assert.ok('code' in titan && /latent attention/.test(titan.message));
  });

  test('refused with a reason: fewer layers than pipeline chunks, offload, LoRA', () => {
    const pp = exportOraclePlan(makePlan({ model: LLAMA3_8B, parallel: { pp: 4, dp: 2 } }), { layers: 2 });
    assert.ok('code' in pp && /≥ 4/.test(pp.message));
    const off = exportOraclePlan(makePlan({ engine: 'deepspeed', model: LLAMA3_8B, parallel: { dp: 8, sharding: { style: 'deepspeed', stage: 2, offloadOptimizer: 'cpu' } } }));
    assert.ok('code' in off && /offload/.test(off.message));
  });
});

describe('oracle comparison tolerances', () => {
  const base = { parameters: 100, gradients: 100, optimizer: 200, activations: 500, temporaries: 100, other: 0, total: 1000 };
  test('3 % per category, 2 % on the total', () => {
    assert.ok(compareCategories(base, { ...base, activations: 514, total: 1019 }).ok);
    assert.ok(!compareCategories(base, { ...base, activations: 520 }).ok);
    assert.ok(!compareCategories(base, { ...base, total: 1021 }).ok);
  });
  test('a category difference below 0.5 % of the total passes whatever its relative error', () => {
    const c = compareCategories({ ...base, other: 2 }, { ...base, other: 6 });
    assert.ok(c.ok);
    assert.equal(c.rows.find((r) => r.category === 'other')?.relError, 2);
  });
});
