/**
 * Multi-token prediction (DeepSeek-V3 §2.2; Megatron-LM multi_token_prediction.py at d98e8a64dd, gpt_builders.py,
 * gpt_model.py; docs/formulas.md#multi-token-prediction) in parameters, per-stage memory and step FLOPs. Expected values
 * are written out from the module layout, not read from ShardLens:
 * - a module is enorm and hnorm (h each), eh_proj (2h → h, no bias, column-parallel), one transformer layer built from
 *   the last decoder layer's spec (`decoder_layer_specs[-1]`) and final_layernorm (h); the output layer is shared;
 * - the stage that builds the modules also builds the embedding (`pre_process or mtp_process`): a vocabulary × h copy;
 * - Megatron's num_floating_point_operations adds, per module, the layer and 3·2·(2h·h + 3h) FLOPs a token for the
 *   projection and norms, and one more logits pass: 3·2·h·V a token.
 * DeepSeek-V3 config.json: h 7168, 128 heads, q rank 1536, kv rank 512, 128 + 64 query/key and 128 value head widths,
 * 256 routed experts of 2,048 and one shared, vocabulary 129,280; its last layer is MoE.
 */
import { readFileSync } from 'node:fs';
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { stageParams } from '../../../shared/comm/stageParams';
import { findGpu } from '../../../shared/hardware/gpus';
import { stageNumbers } from '../../../shared/memory/fast';
import { countParams, moeLayersIn } from '../../../shared/model/params';
import { findPreset } from '../../../shared/model/presets';
import { modelFromHfConfig } from '../../../shared/model/hfConfig';
import { makePlan } from '../../../shared/plan/defaults';
import type { GpuSpec, ModelSpec, Plan } from '../../../shared/plan/types';
import { estimateStepTime } from '../../../shared/time/estimate';
import { modelParamsHint } from '../../../shared/wording/hints';
import { timeContext } from '../../../shared/time/context';
import { layoutLinks } from '../../../shared/comm/layout';
import { linkSeconds } from '../../../shared/comm/links';
import { readInputs } from '../../../shared/plan/inputs';
import { initFormats } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { memoryHost } from '../formats/helpers';

const H100 = findGpu('h100-sxm') as GpuSpec;
const h = 7168, V = 129_280;

function v3(mtpLayers?: number): ModelSpec {
  const m = findPreset('deepseek-v3')!.model;
  return mtpLayers === undefined ? m : { ...m, mtpLayers };
}

/** One DeepSeek-V3 MoE layer from its config.json: MLA (five projections, two latent norms), two norms, 257 experts, the router. */
const mla = h * 1536 + 1536 + 1536 * 128 * (128 + 64) + h * (512 + 64) + 512 + 512 * 128 * (128 + 128) + 128 * 128 * h;
const expert = 3 * h * 2048;
const router = 256 * h; // e_score_correction_bias is a buffer (transformers and Megatron alike), not a parameter.
const moeLayer = mla + 2 * h + 256 * expert + expert + router;
/** What a module adds beyond its layer: eh_proj and three norms. */
const own = 2 * h * h + 3 * h;

function megatron(model: ModelSpec, pp: number): Plan {
  return makePlan({
    engine: 'megatron', model,
    training: { microBatch: 1, seqLen: 4096, globalBatch: 1024, precision: 'bf16-mixed', flashAttention: true },
    parallel: { tp: 1, pp, ep: 64, dp: 64 }, cluster: { gpusPerNode: 8, nodes: 8 * pp },
  }, H100);
}

describe('multi-token prediction', () => {
  before(async () => { await initFormats(); });

  test('DeepSeek-V3 with one module: one more MoE layer, eh_proj and three norms (11,610,067,968 parameters)', () => {
    assert.equal(moeLayer, 11_507_286_016);
    assert.equal(countParams(v3(1)).parameters - countParams(v3()).parameters, moeLayer + own);
    assert.equal(countParams(v3(1)).mtp, 11_610_067_968);
    // Active parameters: the module's layer routes to 8 of 256 experts like every other MoE layer.
    assert.equal(countParams(v3(1)).activeParameters - countParams(v3()).activeParameters, moeLayer - 248 * expert + own);
  });

  test("the module's layer is the last decoder layer's kind, not the next one the MoE frequency would give", () => {
    // Layers 1 and 3 of four are MoE (the Qwen-MoE phase, f = 2): a fifth layer by the pattern would be dense.
    const base = v3();
    const alternate: ModelSpec = { ...base, layers: 4, moe: { ...base.moe!, denseFirstLayers: 0, layerFrequency: 2, firstLayerMoe: false }, mtpLayers: 1 };
    assert.equal(moeLayersIn(alternate, 0, 4), 2);
    assert.equal(moeLayersIn(alternate, 4, 5), 1);
    const denseLast: ModelSpec = { ...alternate, moe: { ...alternate.moe!, firstLayerMoe: true } };
    assert.equal(moeLayersIn(denseLast, 4, 5), 0);
    assert.equal(countParams(denseLast).mtp, countParams({ ...denseLast, mtpLayers: undefined, moe: undefined, layers: 1 }).parameters
      - countParams({ ...denseLast, mtpLayers: undefined, moe: undefined, layers: 0 }).parameters + own);
  });

  test("the model's inlay hint says how many of its parameters are the prediction module's", () => {
    const withMtp = v3(1);
    const hint = modelParamsHint(countParams(withMtp).parameters, withMtp);
    assert.equal(hint.label, '683 B params');
    assert.equal(hint.tooltip, 'The model has 683 B parameters, 11.6 B of them in its multi-token-prediction module.');
    assert.equal(modelParamsHint(countParams(v3()).parameters, v3()).tooltip, 'The model has 671 B parameters.');
  });

  test("a config.json's num_nextn_predict_layers or mtp_num_hidden_layers is recorded apart: transformers builds no such layer", () => {
    for (const id of ['deepseek-v3', 'glm-4.5', 'glm-4.5-air']) {
      const p = findPreset(id)!;
      assert.equal(p.mtpLayersInConfig, 1, id);
      assert.equal(p.model.mtpLayers, undefined, `${id}: an HF-trainer plan of it has no prediction module`);
    }
    const cfg = { model_type: 'qwen3_next', hidden_size: 2048, num_hidden_layers: 48, num_attention_heads: 16, num_key_value_heads: 2, intermediate_size: 5120, vocab_size: 151936 };
    assert.equal(modelFromHfConfig({ ...cfg, mtp_num_hidden_layers: 1 }).mtpLayersInConfig, 1);
    assert.equal(modelFromHfConfig({ ...cfg, num_nextn_predict_layers: 0 }).mtpLayersInConfig, undefined);
    assert.equal(modelFromHfConfig({ ...cfg, num_nextn_predict_layers: -1 }).mtpLayersInConfig, undefined);
    assert.equal(modelFromHfConfig({ ...cfg, num_nextn_predict_layers: 1e9 }).mtpLayersInConfig, undefined);
  });

  test('on PP 4 · EP 64 the last stage holds the module, its embedding copy and one more MoE layer; the others do not change', () => {
    const without = megatron(v3(), 4), withMtp = megatron(v3(1), 4);
    for (const s of [0, 1, 2]) assert.deepEqual(stageParams(withMtp, s), stageParams(without, s), `stage ${s}`);
    const a = stageParams(without, 3), b = stageParams(withMtp, 3);
    // Per rank at EP 64: the attention, norms, shared expert and router whole; 4 of the 256 routed experts.
    assert.equal(b.dense - a.dense, mla + 2 * h + expert + router + own + V * h);
    assert.equal(b.expert - a.expert, 4 * expert);
    assert.equal(stageNumbers(withMtp, 3)!.layers, stageNumbers(without, 3)!.layers + 1);
  });

  test("the last stage's activations grow by the module's layer and at least its own fp32 logits (Megatron's vocab-parallel loss)", () => {
    const a = stageNumbers(megatron(v3(), 4), 3)!, b = stageNumbers(megatron(v3(1), 4), 3)!;
    const perLayer = a.layerActPerMicrobatch / a.layers;
    assert.ok(Math.abs(b.layerActPerMicrobatch - a.layerActPerMicrobatch - perLayer) < 1, 'one more MoE layer of saves');
    const logits = 4 * 4096 * V;
    const grew = b.momentInputs.head - a.momentInputs.head;
    // Its softmax in fp32, its head's and final norm's inputs and its projection's inputs (3·D + 1)·s·h in bf16.
    assert.ok(grew >= logits && grew <= logits + 8 * 2 * 4096 * h, `${grew} vs ${logits}`);
    assert.ok(b.allocated > a.allocated + logits);
    assert.equal(stageNumbers(megatron(v3(1), 4), 0)!.allocated, stageNumbers(megatron(v3(), 4), 0)!.allocated);
  });

  test('a Megatron launch with --mtp-num-layers 1 plans one module, shown among what was read with its place', () => {
    // Megatron-Bridge 26.06's DeepSeek-V3 on 256 GB200 as Megatron-LM flags (the check set's launch file).
    const text = readFileSync('data/calibration/checks/mbridge2606/deepseek_v3_gb200.sh', 'utf8');
    const r = loadConfigGraph('/ws/run.sh', memoryHost({ '/ws/run.sh': text }), { settings: {} }).resolved;
    const plan = r.plan!;
    assert.equal(plan.model.mtpLayers, 1);
    const read = readInputs(plan, r.factsUsed).model.mtpLayers;
    assert.equal(read?.value, 1);
    assert.equal(read?.source.kind, 'explicit');
    // 3 dense layers (MLA, two norms, a 3·h·18,432 MLP), 58 MoE layers, embedding and head (129,280 × h each, 128 divides
    // the vocabulary, so Megatron pads nothing), the final norm: 671,026,404,352, the report's 671B; then the module.
    const dense = mla + 2 * h + 3 * h * 18_432;
    const model = 3 * dense + 58 * moeLayer + 2 * V * h + h;
    assert.equal(model, 671_026_404_352);
    assert.equal(countParams(plan.model).parameters, model + moeLayer + own);
  });

  test("under TP 2 with SP each module gathers eh_proj's 2h-wide input and h-wide output forward and returns them backward", () => {
    // multi_token_prediction.py _concat_embeddings: eh_proj (column-parallel) all-gathers its sequence-parallel input,
    // gather_from_tensor_model_parallel_region all-gathers its output columns, scatter_to_sequence_parallel_region splits
    // them (no traffic); backward, the input's gradient is reduce-scattered and the scatter's backward all-gathers.
    const tp2 = (mtpLayers?: number): Plan => makePlan({
      engine: 'megatron', model: v3(mtpLayers),
      training: { microBatch: 1, seqLen: 4096, globalBatch: 64, precision: 'bf16-mixed', flashAttention: true },
      parallel: { tp: 2, sp: true, pp: 1, ep: 8, dp: 4 }, cluster: { gpusPerNode: 8, nodes: 1 },
    }, H100);
    const with1 = timeContext(tp2(1)).head, without = timeContext(tp2()).head;
    const link = layoutLinks(tp2(1)).tpLink;
    const T = 4096, B = 2;
    const gather = (w: number) => linkSeconds('all-gather', T * w * B, link);
    assert.ok(Math.abs(with1.fwd.comm - without.fwd.comm - (gather(2 * h) + gather(h))) < 1e-12);
    assert.ok(Math.abs(with1.bwd.comm - without.bwd.comm - (linkSeconds('reduce-scatter', T * 2 * h * B, link) + gather(h))) < 1e-12);
    // And one more output-layer pass, the head's GEMM twice over, plus eh_proj's, 2h/V of a head pass in FLOPs (0.11).
    const ratio = with1.fwd.gemm / without.fwd.gemm;
    assert.ok(ratio > 2 && ratio < 2.25, `${ratio}`);
  });

  test("model FLOPs per step grow by Megatron's count: one more layer, the projection and one more logits pass", () => {
    const small = (layers: number, mtpLayers?: number): Plan => {
      const model: ModelSpec = { ...v3(mtpLayers), layers, moe: { ...v3().moe!, denseFirstLayers: 0 } };
      return makePlan({
        engine: 'megatron', model,
        training: { microBatch: 1, seqLen: 4096, globalBatch: 64, precision: 'bf16-mixed', flashAttention: true },
        parallel: { tp: 1, pp: 1, ep: 8, dp: 8 }, cluster: { gpusPerNode: 8, nodes: 1 },
      }, H100);
    };
    const f = (p: Plan) => estimateStepTime(p).modelFlopsPerStep;
    const tokens = 64 * 4096;
    const layer = f(small(3)) - f(small(2));
    const expected = layer + 3 * 2 * tokens * (2 * h * h + h * V);
    const got = f(small(2, 1)) - f(small(2));
    assert.ok(Math.abs(got / expected - 1) < 1e-9, `${got} vs ${expected}`);
    assert.ok(estimateStepTime(small(2, 1)).stepSeconds > estimateStepTime(small(3)).stepSeconds, 'the module costs more than its layer alone');
  });
});
