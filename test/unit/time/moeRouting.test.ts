/**
 * The memory-bound bytes of a MoE layer beyond its GEMMs (shared/time/kernels/moeRouting.ts, layerCost.ts): routing the
 * tokens to their experts and back, and the experts' activation on the routed copies. Expected values are first
 * principles from the engines' code: Megatron's permute and unpermute move T·h in and S = T·k copies out and back
 * (megatron/core/transformer/moe/moe_utils.py), an expert's gated activation runs once per routed copy, and an fp32
 * weighting (transformers' Mixtral) doubles the bytes of the tensors it makes fp32. transformers' own op list is
 * checked against torch's dispatcher in test/probe/moeTraffic.test.ts.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { estimateStepTime } from '../../../shared/time/estimate';
import { FITTED_PARAMS } from '../../../shared/time/params';
import { moeRoutingBytes } from '../../../shared/time/kernels/moeRouting';
import { modelFromHfConfig } from '../../../shared/model/hfConfig';
import { expertsGetFp32Inputs } from '../../../shared/time/moeHost';
import { hfMoeRoutingSaves } from '../../../shared/memory/blocks';

before(() => initFormats());

// 4 MoE layers, micro-batch 2 × 2,048 tokens on each rank (TP 1, no CP), EP 8 over 8 experts.
const MEGATRON = (k: number) => `torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 --ffn-hidden-size 4096 --num-attention-heads 8 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 2 --global-batch-size 16 --bf16 --swiglu --normalization RMSNorm --num-experts 8 --moe-router-topk ${k} --moe-ffn-hidden-size 1536 --expert-model-parallel-size 8 --moe-grouped-gemm --cuda-graph-impl full_iteration\n`;
const elementwiseForward = (text: string) => {
  const plan = resolvePlan(parseConfig('/x/train.sh', text), []).plan!;
  assert.ok(plan, 'the script resolves');
  const t = estimateStepTime(plan).operatorTerms.find((o) => o.name === 'elementwise')!;
  return { seconds: t.forward, rate: plan.cluster.gpu.hbmBandwidth * FITTED_PARAMS.memoryFraction };
};

describe('MoE routing and activation bytes', () => {
  test("Megatron's permutation: 2·T·h·B·(1 + k) each way", () => {
    const s = { tokens: 4096, copies: 8, hidden: 2048, experts: 128, gatedFfn: 768 };
    const bytes = 2 * 4096 * 2048 * 2 * (1 + 8);
    for (const f of ['fused', 'eager', 'compiled'] as const) {
      assert.equal(moeRoutingBytes(f, {}, s, 2, 'fwd'), bytes, f);
      assert.equal(moeRoutingBytes(f, {}, s, 2, 'bwd'), bytes, f);
    }
  });

  test('one more expert per token adds its routed copy and its activation: 2·T·h·B + 3·T·f·B per layer forward (fused SwiGLU)', () => {
    const one = elementwiseForward(MEGATRON(1));
    const two = elementwiseForward(MEGATRON(2));
    const T = 2 * 2048, h = 1024, f = 1536, B = 2, layers = 4;
    // The permutation writes one more copy and the unpermutation reads it; bias-SwiGLU reads gate and up and writes one.
    const want = layers * (2 * T * h * B + 3 * T * f * B);
    const got = (two.seconds - one.seconds) * one.rate;
    assert.ok(Math.abs(got - want) <= 1e-6 * want, `${got} bytes against ${want}`);
  });

  test("transformers' Mixtral weights its copies in fp32: the weighted copies, their unsort and sum at 4 bytes, and a cast back", () => {
    const read = (cfg: object) => modelFromHfConfig({ ...cfg, hidden_size: 2048, num_attention_heads: 16, num_hidden_layers: 2, vocab_size: 1000, num_experts_per_tok: 2 }).model!.moe!;
    const mixtral = read({ model_type: 'mixtral', intermediate_size: 768, num_local_experts: 8 });
    const qwen = read({ model_type: 'qwen3_moe', moe_intermediate_size: 768, num_experts: 8 });
    assert.equal(mixtral.routerWeightsFp32, true);
    assert.equal(qwen.routerWeightsFp32, undefined);
    const T = 1024, k = 2, h = 2048, B = 2, S = T * k;
    const s = { tokens: T, copies: k, hidden: h, experts: 8, gatedFfn: 768 };
    // Forward: the weighted copies written at 4 bytes (+S·h·2), the unsort reading and writing them (+S·h·4), the sum
    // reading them (+S·h·2) and writing fp32 (+T·h·2), then the cast back to bf16 (T·h·(4 + 2)).
    const extra = S * h * (2 + 4 + 2) + T * h * 2 + T * h * (4 + 2);
    assert.equal(moeRoutingBytes('hf', mixtral, s, B, 'fwd') - moeRoutingBytes('hf', qwen, s, B, 'fwd'), extra);
    // Megatron's permutation does not depend on the family.
    assert.equal(moeRoutingBytes('fused', mixtral, s, B, 'fwd'), moeRoutingBytes('fused', qwen, s, B, 'fwd'));
  });

  test("fp32 weights under autocast hand transformers' grouped GEMMs fp32 inputs, which torch's CUDA kernel refuses: a warning at the precision", () => {
    // transformers integrations/moe.py _grouped_mm: input.to(weight.dtype), not autocast-enabled; torch's
    // nn.functional.grouped_mm takes bf16 inputs on CUDA. LLaMA-Factory's bf16 without DeepSpeed or FSDP is autocast
    // with fp32 weights; pure_bf16 loads bf16 weights; LoRA freezes a 16-bit base.
    const lf = (extra: string) => resolvePlan(parseConfig('/x/sft.yaml', `model_name_or_path: Qwen/Qwen3-30B-A3B\nstage: sft\nper_device_train_batch_size: 1\ncutoff_len: 2048\n${extra}`, 'llamafactory'), []).plan!;
    const warned = (p: ReturnType<typeof lf>) => estimateStepTime(p).problems.find((x) => x.code === 'moe-fp32-experts');
    const amp = lf('finetuning_type: full\nbf16: true\n');
    assert.equal(expertsGetFp32Inputs(amp), true);
    const w = warned(amp);
    assert.ok(w && w.severity === 'warning' && w.paths[0] === 'training.precision' && /BF16/.test(w.message), JSON.stringify(w));
    assert.equal(warned(lf('finetuning_type: full\npure_bf16: true\n')), undefined);
    assert.equal(warned(lf('finetuning_type: lora\nlora_target: all\nbf16: true\n')), undefined);
    // A dense model has no grouped GEMMs.
    const dense = resolvePlan(parseConfig('/x/sft.yaml', 'model_name_or_path: meta-llama/Llama-3.1-8B\nstage: sft\nfinetuning_type: full\nbf16: true\n', 'llamafactory'), []).plan!;
    assert.equal(estimateStepTime(dense).problems.some((x) => x.code === 'moe-fp32-experts'), false);
  });
});

describe("transformers' MoE routing: what backward keeps", () => {
  // Measured with torch's saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks, unique storages, weights and
  // the block's input left out) on transformers 5.24's Qwen3MoeSparseMoeBlock in bf16, grouped_mm experts, hidden 512,
  // expert FFN 128, 32 experts, top 8, 192 tokens: 4,802,432 bytes trained, 2,836,352 with every parameter frozen.
  // Less the MLP's saves on the 1,536 routed copies (4·B·S·f trained, 3·B·S·f frozen: the product feeds only the
  // frozen down projection's weight gradient), the routing keeps 3,229,568 and 1,656,704 bytes.
  test('trained experts keep the gathered tokens and the down projection\'s output; frozen ones only the latter', () => {
    const moe = { topK: 8, experts: 32 };
    const trained = hfMoeRoutingSaves(moe, 192, 512, 2);
    const frozen = hfMoeRoutingSaves(moe, 192, 512, 2, true);
    // The expert count's few bytes (histc's counts, 4·E) are not counted.
    assert.ok(Math.abs(trained - 3229568) <= 256, `${trained}`);
    assert.ok(Math.abs(frozen - 1656704) <= 256, `${frozen}`);
  });
});
