/**
 * DeepSpeed's pipeline engine as Megatron-DeepSpeed runs it, from DeepSpeed's source (0.19.8, the version the oracle
 * pins):
 * - deepspeed/runtime/pipe/engine.py runs each micro-batch as RecvActivation, ForwardPass, SendActivation, RecvGrad,
 *   BackwardPass, SendGrad, and deepspeed/runtime/pipe/p2p.py `send`/`recv` are blocking: a middle stage waits for two
 *   transfers in each pass, the first and last stages for one;
 * - engine.py `_do_optimizer_sanity_check` picks BF16_Optimizer for bf16 without ZeRO under pipeline parallelism:
 *   fp32 master weights and Adam states partitioned over data parallel (12 bytes per parameter / N), one gradient
 *   buffer in the accumulation dtype (bf16: 2 bytes per parameter), the gradients all-reduced and the 16-bit weights
 *   all-gathered after the step (bf16_optimizer.py).
 * And `shardlens.cluster.networkGbps`: a node's adapters shared by its GPUs, Gbit/s · 10⁹ / 8 / GPUs per node.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { allStageTimings } from '../../../shared/time/stage';
import { estimateStepTime } from '../../../shared/time/estimate';
import { TimeCache } from '../../../shared/time/cache';
import { stageNumbers } from '../../../shared/memory/fast';
import { stageParams } from '../../../shared/comm/stageParams';
import type { Plan } from '../../../shared/plan/types';

const launch = (extra: string) => [
  'deepspeed pretrain_gpt.py --tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 \\',
  '  --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 2048 --max-position-embeddings 2048 \\',
  `  --micro-batch-size 1 --global-batch-size 64 --bf16 --checkpoint-activations ${extra}`,
  '',
].join('\n');

function planOf(extra: string, settings: Record<string, unknown> = {}): Plan {
  const plan = resolvePlan(parseConfig('/x/train.sh', launch(extra)), [], { settings: { gpu: 'a100-80gb', gpusPerNode: 8, nodes: 1, ...settings } }).plan;
  assert.ok(plan);
  return plan;
}

describe('DeepSpeed pipeline engine', () => {
  before(async () => { await initFormats(); });

  test('every transfer is a blocking call: a middle stage\'s passes each wait for two, the first and last stage\'s for one', () => {
    const ds = planOf('--deepspeed --zero-stage 0');
    // The same layout on Megatron-LM's own schedule (overlapped sends, shared/time/stepTime.ts pipelineHops).
    const mlm = { ...ds, parallel: { ...ds.parallel, sharding: { ...ds.parallel.sharding, style: 'ddp' as const } } };
    const a = allStageTimings(ds, new TimeCache()), b = allStageTimings(mlm, new TimeCache());
    const x = b[1].p2p;
    assert.ok(x > 0);
    const close = (u: number, v: number, what: string) => assert.ok(Math.abs(u - v) <= 1e-12 + 1e-9 * Math.abs(v), `${what}: ${u} vs ${v}`);
    for (const [s, n] of [[0, 1], [1, 2], [2, 2], [3, 1]] as const) {
      close(a[s].forward - b[s].forward, n * x, `stage ${s} forward`);
      close(a[s].backward - b[s].backward, n * x, `stage ${s} backward`);
      assert.equal(a[s].p2p, 0, 'no separate schedule sends: they are in the passes');
    }
    // Listed with what it costs: every send and receive of a middle stage, all exposed.
    const row = estimateStepTime(ds).collectives.find((c) => c.id === 'pp-send-recv' && c.stage === 1);
    assert.ok(row);
    assert.equal(row.countPerStep, 2 * 32 * 2); // m = 64 / (micro 1 × DP 2) = 32 micro-batches, 2 neighbours, both passes
    close(row.exposedSeconds, row.seconds, 'exposed');
  });

  test('under TP each rank sends 1/t of a transfer and the receiver all-gathers it over TP (pipe_partitioned, grad_partitioned)', () => {
    // 16 GPUs, TP 2 · PP 4 · DP 2: 64 / (micro 1 × DP 2) = 32 micro-batches.
    const withTp = planOf('--deepspeed --zero-stage 0 --tensor-model-parallel-size 2', { nodes: 2 });
    assert.equal(withTp.parallel.dp, 2);
    const full = 1 * 2048 * 4096 * 2; // b·s·h·B of one micro-batch (bf16)
    const rows = estimateStepTime(withTp).collectives.filter((c) => c.stage === 1);
    const send = rows.find((c) => c.id === 'pp-send-recv');
    const gather = rows.find((c) => c.id === 'pp-partition-gather');
    assert.ok(send && gather);
    assert.equal(send.bytesPerOccurrence, full / 2);
    assert.equal(gather.bytesPerOccurrence, full);
    assert.equal(gather.group, 'tp');
    assert.equal(gather.countPerStep, 2 * 32); // a middle stage receives from both neighbours in every micro-batch
    assert.equal(gather.exposedSeconds, gather.seconds);
  });

  test('bf16 without ZeRO is BF16_Optimizer: partitioned master weights and Adam states, a bf16 gradient buffer, a weight all-gather', () => {
    const plan = planOf('--deepspeed --zero-stage 0', { nodes: 2 });
    assert.equal(plan.parallel.dp, 4);
    const st = stageNumbers(plan, 1)!;
    const psi = stageParams(plan, 1).dense;
    assert.equal(st.optimizerStates + st.masterWeights, (12 * psi) / 4);
    assert.equal(st.ds.staticGrads, 2 * psi);
    const gather = estimateStepTime(plan).collectives.find((c) => c.label === 'BF16_Optimizer weight all-gather' && c.stage === 1);
    assert.ok(gather);
    assert.equal(gather.bytesPerOccurrence, psi * 2); // each rank's 16-bit weights; the ring moves (N − 1)/N of it
  });
});

describe('shardlens.cluster.networkGbps', () => {
  before(async () => { await initFormats(); });
  test('400 Gbit/s over 8 GPUs is 6.25 GB/s per GPU; 0 keeps the catalog figure', () => {
    assert.equal(planOf('--deepspeed', { networkGbps: 400 }).cluster.gpu.interNodeBandwidth, 6.25e9);
    const catalog = planOf('--deepspeed');
    assert.equal(planOf('--deepspeed', { networkGbps: 0 }).cluster.gpu.interNodeBandwidth, catalog.cluster.gpu.interNodeBandwidth);
  });
  test('a slower network slows what crosses nodes: the step of a two-node layout grows', () => {
    const fast = estimateStepTime(planOf('--deepspeed', { nodes: 2, networkGbps: 3200 })).stepSeconds;
    const slow = estimateStepTime(planOf('--deepspeed', { nodes: 2, networkGbps: 100 })).stepSeconds;
    assert.ok(slow > fast, `${slow} vs ${fast}`);
  });
});
