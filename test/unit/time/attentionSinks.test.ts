/**
 * Attention sinks: a per-head offset in the softmax's denominator, learned in gpt-oss (transformers
 * modeling_gpt_oss.py GptOssAttention `sinks`; Megatron-LM `softmax_type` 'learnable', fixed 'off-by-one',
 * megatron/core/transformer/transformer_config.py). ShardLens times them as plain fused attention and says so: the
 * Megatron-Bridge 26.06 GPT OSS 120B row on 64 GB200 under a full-iteration CUDA graph is a third slower than the
 * model, and the 64 H100 row 14 % slower with the MoE host constant (docs/time-model.md §7), where Qwen3-30B-A3B,
 * without sinks, is within 4 % on GB200.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { modelFromHfConfig } from '../../../shared/model/hfConfig';
import { findPreset } from '../../../shared/model/presets';
import { makePlan } from '../../../shared/plan/defaults';
import { resolvePlan } from '../../../shared/plan/resolve';
import { findGpu } from '../../../shared/hardware/gpus';
import type { GpuSpec, ModelSpec } from '../../../shared/plan/types';
import { estimateStepTime } from '../../../shared/time/estimate';
import { simulateStep } from '../../../shared/sim/simulate';

const H100 = findGpu('h100-sxm') as GpuSpec;
const sinkWarning = (model: ModelSpec) => {
  const plan = makePlan({ engine: 'megatron', model, training: { microBatch: 1, seqLen: 4096, precision: 'bf16-mixed' }, parallel: { dp: 8 }, cluster: { gpusPerNode: 8, nodes: 1 } }, H100);
  return [estimateStepTime(plan).problems, simulateStep(plan).problems].map((ps) => ps.find((p) => p.code === 'attention-sink-timing'));
};

describe('attention sinks', () => {
  before(async () => { await initFormats(); });

  test('a gpt-oss config.json and the presets have them; a Llama config does not', () => {
    assert.equal(modelFromHfConfig({ model_type: 'gpt_oss', num_hidden_layers: 4 }).model?.attentionSinks, true);
    assert.equal(findPreset('gpt-oss-120b')?.model.attentionSinks, true);
    assert.equal(findPreset('gpt-oss-20b')?.model.attentionSinks, true);
    assert.equal(modelFromHfConfig({ model_type: 'llama', hidden_size: 1024, num_attention_heads: 8, num_hidden_layers: 4 }).model?.attentionSinks, undefined);
    // The editor's reader of config.json says the same, as a default from the family.
    const r = parseConfig('/ws/config.json', JSON.stringify({ model_type: 'gpt_oss', hidden_size: 2880, num_attention_heads: 64, num_hidden_layers: 36 }));
    assert.equal(r.facts['model.attentionSinks']?.value, true);
  });

  test('Megatron --softmax-type: learnable and off-by-one are sinks, vanilla is not, anything else is a warning', () => {
    const facts = (v: string) => parseConfig('/ws/train.sh', `torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 8 --softmax-type ${v}\n`);
    assert.equal(facts('learnable').facts['model.attentionSinks']?.value, true);
    assert.equal(facts('off-by-one').facts['model.attentionSinks']?.value, true);
    assert.equal(facts('vanilla').facts['model.attentionSinks']?.value, false);
    const bad = facts('sparsemax');
    assert.equal(bad.facts['model.attentionSinks'], undefined);
    assert.ok(bad.diagnostics.some((d) => d.code === 'invalid-value' && d.message.includes('--softmax-type')), JSON.stringify(bad.diagnostics));
    const plan = resolvePlan(facts('learnable'), []).plan!;
    assert.equal(plan.model.attentionSinks, true);
  });

  test('a model with sinks is warned in the estimate and the simulation, at model.attentionSinks; one without is not', () => {
    const gptOss = findPreset('gpt-oss-20b')!.model;
    for (const w of sinkWarning(gptOss)) {
      assert.ok(w && w.severity === 'warning' && w.paths[0] === 'model.attentionSinks', JSON.stringify(w));
      assert.match(w.message, /too short/);
    }
    const plain: ModelSpec = { ...gptOss, attentionSinks: undefined };
    for (const w of sinkWarning(plain)) assert.equal(w, undefined);
  });
});
