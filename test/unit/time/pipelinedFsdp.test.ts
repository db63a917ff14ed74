/**
 * A pipeline stage of torch.distributed.pipelining sharded by FSDP2 (torchtitan with PP) reduces its gradients once per
 * step and gathers its parameters once per step. Every backward but the stage's last runs with
 * set_requires_gradient_sync(False) and set_reshard_after_backward(False); the last calls every group's post_backward,
 * which reduce-scatters the whole stage after its backward (torch/distributed/pipelining/stage.py
 * backward_maybe_with_nosync, torch 2.6 and later). torchtitan turns reshard_after_forward off under PP
 * (parallelize_llama.py), so a group gathered in the first forward stays gathered until then. Sizes come from Llama 3.1
 * 405B's published shape: 126 layers, hidden 16384, MLP 53248, vocabulary 128256, 8 KV heads of 128, untied head:
 * 405,853,388,800 parameters, reduced in fp32 (torchtitan's mixed_precision_reduce).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
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
const entry = (plan: Plan, stage: number, id: string) => {
  const c = stageComm(plan, stage).collectives.find((x) => x.id === id);
  assert.ok(c, `${id} is listed on stage ${stage}`);
  return c;
};

describe('torch pipelining with FSDP2: one reduce-scatter and one all-gather per stage and step', () => {
  test('torchtitan Llama 3.1 405B, FSDP 8 · TP 8 · PP 8, 1F1B with 8 micro-batches', async () => {
    const plan = await planOf('data/calibration/measured-runs/tt24_t5_405b_1f1b.toml', '512xH100');
    assert.equal(plan.parallel.pp, 8);
    assert.ok(plan.training.gradAccum > 1);
    assert.equal(plan.parallel.sharding.reshardAfterForward, false);
    let reduced = 0;
    for (let s = 0; s < plan.parallel.pp; s++) {
      const rs = entry(plan, s, 'zero-grad-reduce-scatter');
      const ag = entry(plan, s, 'zero3-param-all-gather');
      assert.equal(rs.countPerStep, 1);
      assert.equal(ag.countPerStep, 1);
      // Issued after the stage's last backward: nothing hides it on that stage.
      assert.equal(rs.overlapped, false);
      reduced += rs.bytesPerOccurrence * plan.parallel.tp;
    }
    // Every parameter's fp32 gradient is reduced once per step (norms, replicated over TP, are 0.001 % of it).
    const want = 4 * 405_853_388_800;
    assert.ok(Math.abs(reduced - want) < 0.001 * want, `${reduced} vs ${want}`);
    // The closed form (the estimate's pass-by-pass run) and the event simulation agree.
    const est = estimateStepTime(plan).stepSeconds;
    assert.ok(Math.abs(simulateStep(plan).stepSeconds - est) < 1e-9 * est);
  });

  test('resharding after forward keeps the gathers of every micro-batch; one stage keeps FSDP\'s own schedule', async () => {
    const plan = await planOf('data/calibration/measured-runs/tt24_t5_405b_1f1b.toml', '512xH100');
    const m = plan.training.gradAccum;
    const resharding = { ...plan, parallel: { ...plan.parallel, sharding: { ...plan.parallel.sharding, reshardAfterForward: true } } };
    assert.equal(entry(resharding, 0, 'zero3-param-all-gather').countPerStep, 2 * m);
    assert.equal(entry(resharding, 0, 'zero-grad-reduce-scatter').countPerStep, 1);
    // Without PP, torchtitan's FSDP2 reduces in every micro-batch (no no_sync).
    const titan = await planOf('data/calibration/measured-runs/tt24_t2_8b_fsdp8_cp1.toml', '8xH100');
    const t = titan.training;
    const accumulating = { ...titan, training: { ...t, gradAccum: 4, globalBatch: t.microBatch * 4 * titan.parallel.dp } };
    assert.equal(entry(accumulating, 0, 'zero-grad-reduce-scatter').countPerStep, 4);
  });
});
