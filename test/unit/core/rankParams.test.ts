/**
 * One model of parameters per rank (issue 11 item 3): memory, communication and step time count the same parameters
 * on a rank, including KV heads replicated when TP exceeds them, the embedding on the first stage and the LM head on
 * the last, routed experts split by EP·ETP, and uneven pipeline stages.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { stageParams, stageLayerCount } from '../../../shared/comm/stageParams';
import { estimateMemory } from '../../../shared/memory/estimate';
import { kvHeadsPerRank } from '../../../shared/model/rankParams';
import { estimateStepTime } from '../../../shared/time/estimate';
import { H100, llamaPlan, preset } from './helpers';

describe('parameters per rank', () => {
  test('Llama-3-70B at TP 16: memory and communication both count 4,494,729,216 parameters per rank', () => {
    // Llama-3-70B (config.json): L 80, h 8192, 64 query heads, 8 KV heads, head dim 128, FFN 28672 (SwiGLU),
    // vocabulary 128256, RMSNorm, untied head. At TP 16 each rank holds one KV head (8 heads cannot split 16 ways;
    // Megatron replicates each over 2 ranks).
    //   q + o: 2·8192·8192 / 16                         =  8,388,608
    //   k + v: 2·8192·(1 head·128)                      =  2,097,152   (not 2·8192·1024/16 = 1,048,576)
    //   MLP:   3·8192·28672 / 16                        = 44,040,192
    //   norms: 2·8192                                   =     16,384
    //   per layer 54,542,336 × 80 layers               = 4,363,386,880
    //   embedding 128256·8192/16 = 65,667,072, LM head the same, final norm 8192
    //   total = 4,363,386,880 + 2·65,667,072 + 8,192   = 4,494,729,216
    const plan = llamaPlan({ model: preset('llama-3-70b'), parallel: { tp: 16, dp: 2 } });
    assert.equal(kvHeadsPerRank(8, 16), 1);
    const memory = estimateMemory(plan).stages[0]!.parametersPerRank;
    const comm = stageParams(plan, 0);
    assert.equal(memory, 4_494_729_216);
    assert.equal(comm.dense + comm.expert, 4_494_729_216);
  });

  test('the data-parallel gradient all-reduce moves those parameters: 2·(N−1)/N · Ψ · 2 bytes = 8,989,458,432', () => {
    // Ring all-reduce of bf16 gradients over DP N = 2: each rank sends 2·(2−1)/2 · 4,494,729,216 · 2 bytes (Patarasuk &
    // Yuan 2009; PyTorch DDP reduces gradients in the parameter dtype).
    const plan = llamaPlan({ model: preset('llama-3-70b'), parallel: { tp: 16, dp: 2 } });
    const dp = estimateStepTime(plan)!.collectives.filter((c) => c.group === 'dp');
    assert.equal(plan.training.gradDtype, 'bf16');
    assert.deepEqual(dp.map((c) => [c.kind, c.bytesPerRank]), [['all-reduce', 8_989_458_432]]);
  });

  test('uneven stages: layers per stage are computed once and the first/last stages carry embedding and head', () => {
    const plan = llamaPlan({ parallel: { pp: 4, dp: 2, stageLayers: [7, 9, 9, 7] }, cluster: { gpusPerNode: 8, nodes: 1, gpu: H100 } });
    const mem = estimateMemory(plan).stages;
    for (let s = 0; s < 4; s++) {
      assert.equal(mem[s]!.layers, stageLayerCount(plan, s));
      const sp = stageParams(plan, s);
      assert.equal(mem[s]!.parametersPerRank, sp.dense + sp.expert, `stage ${s}`);
    }
    assert.deepEqual(mem.map((s) => s.layers), [7, 9, 9, 7]);
  });

  test('MoE: routed experts split over EP·ETP in both models', () => {
    const plan = llamaPlan({ model: preset('mixtral-8x7b'), parallel: { tp: 2, ep: 4, etp: 1, dp: 4 } });
    const sp = stageParams(plan, 0);
    assert.ok(sp.expert > 0);
    assert.equal(estimateMemory(plan).stages[0]!.parametersPerRank, sp.dense + sp.expert);
  });
});
