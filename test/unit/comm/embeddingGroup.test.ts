/**
 * Megatron's embedding-group all-reduce (megatron/core/distributed/finalize_model_grads.py at d98e8a64dd,
 * `_allreduce_word_embedding_grads`, `_get_shared_word_embedding_weight`; parallel_state.py `default_embedding_ranks`):
 * where the word embedding is duplicated on the first and the last pipeline stage — a tied output layer, or the copy
 * multi-token prediction builds — finalize_model_grads all-reduces its main_grad (V'·h/t elements, fp32 by default)
 * between those two ranks once per step, after the gradient sync and before the optimizer. Middle stages, untied models
 * without MTP, a single stage and other engines have none.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { busFactor } from '../../../shared/comm/links';
import type { Plan } from '../../../shared/plan/types';
import { estimateStepTime } from '../../../shared/time/estimate';
import { stageComm } from '../../../shared/time/stageComm';
import { gpt, plan } from '../sim/fixtures';

/**
 * GPT 4096 wide, vocabulary 51,200 (a multiple of 128·t for t = 2: Megatron pads nothing); TP 2 × DP 4 fill a node;
 * fp32 main gradients (Megatron's bf16 default: arguments.py sets accumulate_allreduce_grads_in_fp32).
 */
function layout(pp: number, engine: Plan['engine'] = 'megatron', tied = true, mtpLayers?: number): Plan {
  return plan({
    engine, model: { ...gpt(pp * 4, 4096, 32), tiedEmbeddings: tied, ...(mtpLayers ? { mtpLayers } : {}) },
    training: { microBatch: 1, globalBatch: 64, seqLen: 2048, precision: 'bf16-mixed', gradDtype: 'fp32' },
    parallel: { tp: 2, pp, dp: 4, sp: true, sharding: { style: engine === 'megatron' ? 'megatron-distopt' : 'fsdp2', stage: 1, overlapComm: true } },
    cluster: { gpusPerNode: 8, nodes: pp },
  });
}

const find = (p: Plan, stage: number) => stageComm(p, stage).collectives.find((c) => c.id === 'embedding-grad-allreduce');

describe("Megatron's embedding-group all-reduce", () => {
  test('tied on PP 4: on the first and last stage only, V\'·h/t fp32 gradients between two ranks on different nodes, exposed whole', () => {
    const p = layout(4);
    const first = find(p, 0), last = find(p, 3);
    assert.ok(first && last, 'both ends of the pipeline');
    assert.equal(find(p, 1), undefined);
    assert.equal(find(p, 2), undefined);
    const bytes = (51_200 * 4096 / 2) * 4;
    for (const c of [first, last]) {
      assert.equal(c.kind, 'all-reduce');
      assert.equal(c.groupSize, 2);
      assert.equal(c.bytesPerRank, bytes);
      assert.equal(c.countPerStep, 1);
      assert.equal(c.tier, 'network');
      assert.ok(c.exposedSeconds > 0 && Math.abs(c.exposedSeconds - c.seconds) < 1e-15, 'nothing runs beside it');
      // An all-reduce of two ranks moves the message once: 2(N − 1)/N = 1.
      assert.equal(busFactor('all-reduce', 2), 1);
    }
  });

  test('the step grows by exactly its time: an untied head holds the same copy on the last stage, and no all-reduce', () => {
    const tied = layout(4), untied = layout(4, 'megatron', false);
    const c = find(tied, 0)!;
    assert.equal(find(untied, 0), undefined);
    // With PP, Megatron's tied head is a second V'·h/t weight on the last stage, as an untied one is: same GEMMs, same states.
    const grew = estimateStepTime(tied).stepSeconds - estimateStepTime(untied).stepSeconds;
    assert.ok(Math.abs(grew / c.seconds - 1) < 1e-6, `${grew} vs ${c.seconds}`);
  });

  test('untied with multi-token prediction: the last stage\'s embedding copy is reduced the same way', () => {
    const p = layout(4, 'megatron', false, 1);
    assert.equal(find(p, 0)?.bytesPerRank, (51_200 * 4096 / 2) * 4);
    assert.ok(find(p, 3));
  });

  test('none on a single stage, and none under torch pipelining (FSDP2), whose tied weights are the user\'s to sync', () => {
    assert.equal(find(layout(1), 0), undefined);
    assert.equal(find(layout(4, 'fsdp2'), 0), undefined);
  });

  test("DeepSpeed's pipeline engine reduces a tied embedding's gradient too: BF16_Optimizer's fp32 copy, else the parameter's own", () => {
    // deepspeed/runtime/pipe/engine.py _exec_reduce_tied_grads: weight._hp_grad under the bf16 optimizer, else weight.grad.
    const ds = (stage: 0 | 1, precision: 'bf16-mixed' | 'fp16-mixed') => plan({
      engine: 'deepspeed', model: gpt(16, 4096, 32), training: { microBatch: 1, globalBatch: 64, seqLen: 2048, precision },
      parallel: { tp: 2, pp: 4, dp: 4, sharding: { style: 'deepspeed', stage } }, cluster: { gpusPerNode: 8, nodes: 4 },
    });
    assert.equal(find(ds(0, 'bf16-mixed'), 0)?.bytesPerRank, (51_200 * 4096 / 2) * 4);
    assert.equal(find(ds(1, 'fp16-mixed'), 3)?.bytesPerRank, (51_200 * 4096 / 2) * 2);
    assert.equal(find(ds(1, 'fp16-mixed'), 1), undefined);
    const untied = plan({ ...ds(0, 'bf16-mixed'), model: { ...gpt(16, 4096, 32), tiedEmbeddings: false } });
    assert.equal(find(untied, 0), undefined);
  });

  test('nanotron syncs its tied embedding between the first and last stage in its gradient dtype', () => {
    // nanotron trainer.py sync_tied_weights_gradients (the fp32 accumulator's buffer with accumulate_grad_in_fp32).
    const p = plan({
      engine: 'nanotron', model: gpt(16, 4096, 32), training: { microBatch: 1, globalBatch: 64, seqLen: 2048, precision: 'bf16-mixed', gradDtype: 'fp32' },
      parallel: { tp: 2, pp: 4, dp: 4 }, cluster: { gpusPerNode: 8, nodes: 4 },
    });
    assert.equal(find(p, 0)?.bytesPerRank, (51_200 * 4096 / 2) * 4);
  });
});
