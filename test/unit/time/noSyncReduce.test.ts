/**
 * FSDP under `no_sync` reduce-scatters once per step. The Hugging Face Trainer and Accelerate's `accumulate` run every
 * micro-batch but the last under `no_sync` (FSDP1 `FullyShardedDataParallel.no_sync`, FSDP2
 * `set_requires_gradient_sync(False)`): the gradients stay unsharded and are reduced in the last backward only. DeepSpeed's
 * engine is not put under `no_sync` by the Trainer and reduces its partitions in every micro-batch. Expected sizes come
 * from Llama 3.1 8B's published parameter count (8,030,261,248) and torchtitan's fp32 reduce dtype.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../cli/load';
import { estimateStepTime } from '../../../shared/time/estimate';
import { stageComm } from '../../../shared/time/stageComm';
import { simulateStep } from '../../../shared/sim/simulate';
import type { Plan } from '../../../shared/plan/types';

const root = join(__dirname, '..', '..', '..');
async function planOf(rel: string, gpus: string): Promise<Plan> {
  const plan = (await loadConfig(join(root, rel), { gpus })).resolved.plan;
  assert.ok(plan, `${rel} was not estimated`);
  return plan;
}

/** The plan with `m` micro-batches per step and the sync setting given. */
function variant(plan: Plan, m: number, sync: boolean | undefined): Plan {
  const t = plan.training;
  return { ...plan, training: { ...t, gradAccum: m, globalBatch: t.microBatch * m * plan.parallel.dp, syncEveryMicroBatch: sync } };
}

const reduceScatter = (plan: Plan) => {
  const c = stageComm(plan, 0).collectives.find((x) => x.id === 'zero-grad-reduce-scatter');
  assert.ok(c, 'a gradient reduce-scatter is listed');
  return c;
};

describe('FSDP under no_sync reduce-scatters the gradients once per step', () => {
  test('FSDP2, 4 micro-batches: one reduce-scatter of the whole fp32 gradient instead of four', async () => {
    const plan = await planOf('data/calibration/measured-runs/tt24_t2_8b_fsdp8_cp1.toml', '8xH100');
    const synced = variant(plan, 4, undefined), noSync = variant(plan, 4, false);
    const a = reduceScatter(synced), b = reduceScatter(noSync);
    // S = Ψ·4 bytes (fp32 reduce) per occurrence either way.
    assert.equal(a.bytesPerOccurrence, 4 * 8_030_261_248);
    assert.equal(b.bytesPerOccurrence, 4 * 8_030_261_248);
    assert.equal(a.countPerStep, 4);
    assert.equal(b.countPerStep, 1);
    assert.equal(b.bytesPerRank, a.bytesPerRank / 4);
    assert.match(b.formula, /once per step/);
    // The step gets shorter, by no more than the three reduce-scatters it no longer runs.
    const ta = estimateStepTime(synced).stepSeconds, tb = estimateStepTime(noSync).stepSeconds;
    assert.ok(tb < ta, `${tb} < ${ta}`);
    assert.ok(ta - tb <= 3 * a.seconds / 4 + 1e-9, `${ta - tb} ≤ ${3 * a.seconds / 4}`);
    // The closed form and the event simulation agree on the no_sync step.
    assert.ok(Math.abs(simulateStep(noSync).stepSeconds - tb) < 1e-9 * tb);
  });

  test('FSDP1 (an Accelerate FULL_SHARD file) is put under no_sync the same way', async () => {
    const plan = await planOf('examples/accelerate/fsdp_v1_offload.yaml', '8xH100');
    assert.equal(plan.parallel.sharding.style, 'fsdp');
    assert.equal(plan.training.syncEveryMicroBatch, false);
    assert.equal(reduceScatter(variant(plan, 4, false)).countPerStep, 1);
    assert.equal(reduceScatter(variant(plan, 4, undefined)).countPerStep, 4);
  });

  test('DeepSpeed ZeRO-3 under the Trainer still reduces in every micro-batch', async () => {
    const plan = await planOf('test/server/fixtures/axolotl.yaml', '16xH100');
    assert.equal(plan.parallel.sharding.style, 'deepspeed');
    assert.equal(plan.training.syncEveryMicroBatch, false);
    assert.equal(reduceScatter(variant(plan, 4, false)).countPerStep, 4);
  });
});

describe('FSDP\'s hybrid sharding all-reduces across the replicas wherever it reduce-scatters', () => {
  /** torchtitan's Llama 3.1 8B on 128 GPUs as HSDP: shards of 8, 16 replicas, 4 micro-batches. */
  async function hsdp(sync: boolean | undefined): Promise<Plan> {
    const plan = await planOf('data/calibration/measured-runs/tt24_t3_8b_fsdp128_compile.toml', '128xH100');
    const sh = { ...plan.parallel.sharding, shardGroupSize: 8, fsdpStrategy: 'HYBRID_SHARD' as const };
    return variant({ ...plan, parallel: { ...plan.parallel, sharding: sh } }, 4, sync);
  }
  const allReduce = (plan: Plan) => {
    const c = stageComm(plan, 0).collectives.find((x) => x.id === 'hsdp-replicate-allreduce');
    assert.ok(c, 'the replica all-reduce is listed');
    return c;
  };

  test('torchtitan (every micro-batch reduces): one all-reduce of the fp32 shard per micro-batch', async () => {
    // FSDP2 foreach_reduce all-reduces each group's reduce-scatter output over the replicate mesh when the gradient
    // sync is on: S = Ψ/8 · 4 bytes = 4,015,130,624 per micro-batch.
    const plan = await hsdp(undefined);
    const c = allReduce(plan);
    assert.equal(c.bytesPerOccurrence, (4 * 8_030_261_248) / 8);
    assert.equal(c.countPerStep, 4);
    assert.match(c.formula, /every micro-batch/);
    assert.ok(c.exposedSeconds > 0 && c.exposedSeconds < c.seconds, `${c.exposedSeconds} of ${c.seconds}`);
    const est = estimateStepTime(plan).stepSeconds;
    assert.ok(Math.abs(simulateStep(plan).stepSeconds - est) < 1e-9 * est);
  });

  test('under no_sync the replicas reduce once, with the last micro-batch, and the step is shorter', async () => {
    const every = await hsdp(undefined), once = await hsdp(false);
    assert.equal(allReduce(once).countPerStep, 1);
    assert.ok(estimateStepTime(once).stepSeconds < estimateStepTime(every).stepSeconds);
  });
});

describe('a replicated stage all-reduces in every micro-batch under torch replicate (torchtitan\'s DDP)', () => {
  test('data_parallel_replicate_degree 8 alone, 4 micro-batches: four all-reduces of the whole gradient', async () => {
    // torchtitan applies torch's composable replicate (DDP) when only the replicate degree is set; it syncs in every
    // backward, and torchtitan's train_step does not turn it off while accumulating. S = Ψ · 4 bytes (fp32 gradients
    // of fp32 parameters under autocast): 32,121,044,992 for Llama 3.1 8B.
    const file = 'data/calibration/measured-runs/tt24_t1_8b_fsdp8_compile.toml';
    const text = readFileSync(join(root, file), 'utf8').replace('data_parallel_shard_degree = 8', 'data_parallel_shard_degree = 1\ndata_parallel_replicate_degree = 8');
    const dir = mkdtempSync(join(tmpdir(), 'shardlens-ddp-'));
    try {
      writeFileSync(join(dir, 'ddp.toml'), text);
      const plan = (await loadConfig(join(dir, 'ddp.toml'), { gpus: '8xH100' })).resolved.plan;
      assert.ok(plan);
      assert.equal(plan.parallel.sharding.stage, 0);
      const every = variant(plan, 4, undefined), once = variant(plan, 4, false);
      const a = stageComm(every, 0).collectives.find((x) => x.id === 'dp-grad-allreduce');
      const b = stageComm(once, 0).collectives.find((x) => x.id === 'dp-grad-allreduce');
      assert.ok(a && b);
      assert.equal(a.bytesPerOccurrence, 4 * 8_030_261_248);
      assert.equal(a.countPerStep, 4);
      assert.equal(b.countPerStep, 1);
      assert.ok(estimateStepTime(once).stepSeconds < estimateStepTime(every).stepSeconds);
      const est = estimateStepTime(every).stepSeconds;
      assert.ok(Math.abs(simulateStep(every).stepSeconds - est) < 1e-9 * est);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
