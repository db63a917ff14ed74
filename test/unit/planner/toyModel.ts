/**
 * A deliberately simple first-principles estimator for planner tests, and an independent brute-force search.
 * Memory: ZeRO paper §3 (2Ψ params + 2Ψ grads + 12Ψ Adam states, sharded by stage over the shard group) plus Korthikanti et al. 2022
 * activations 34·s·b·h per layer (÷TP, ÷CP), times in-flight microbatches min(p, m) of 1F1B.
 * Time: 6·P·tokens / (GPUs · 100 TFLOP/s) × recompute factor × (1 + bubble (p−1)/(v·m)) plus small fixed costs.
 */
import type { Plan } from '../../../shared/plan/types';
import { planForLayout, shardingFor } from '../../../shared/planner/build';
import { divisors, stageSplit } from '../../../shared/planner/space';
import type { PlannerEstimators } from '../../../shared/planner/types';

function params(plan: Plan): number {
  const m = plan.model;
  return 12 * m.layers * m.hiddenSize ** 2 + m.vocabSize * m.hiddenSize;
}

export const toyEstimators: PlannerEstimators = {
  peakBytes(plan) {
    const { tp, pp, cp, vpp, sharding } = plan.parallel;
    const psi = params(plan) / (tp * pp);
    const shard = sharding.stage;
    const n = sharding.shardGroupSize;
    const opt = sharding.offloadOptimizer !== 'none' ? 0 : 12 * psi / (shard >= 1 ? n : 1);
    const states = 2 * psi / (shard >= 3 ? n : 1) + 2 * psi / (shard >= 2 ? n : 1) + opt;
    const t = plan.training;
    const m = t.gradAccum;
    const inFlight = Math.min(pp, m) * (vpp > 1 ? 1 + (pp - 1) / (pp * vpp) : 1);
    const rc = t.recompute === 'none' ? 1 : t.recompute === 'selective' ? 0.5 : 2 / 34;
    const act = (34 * t.seqLen * t.microBatch * plan.model.hiddenSize * (plan.model.layers / pp)) / (tp * cp) * inFlight * rc;
    return states + act;
  },
  stepSeconds(plan) {
    const { tp, pp, cp, dp, vpp, sharding } = plan.parallel;
    const t = plan.training;
    const gpus = tp * pp * cp * dp;
    const rc = t.recompute === 'none' ? 1 : t.recompute === 'selective' ? 1.03 : 4 / 3;
    const compute = (6 * params(plan) * t.globalBatch * t.seqLen) / (gpus * 1e14) * rc;
    const bubble = 1 + (pp - 1) / (vpp * t.gradAccum);
    // Sharding over fewer ranks (HSDP) keeps its collectives inside a node: cheaper.
    const shardComm = 0.01 * sharding.stage * (sharding.shardGroupSize < dp ? 0.5 : 1);
    const fixed = 1e-3 * tp + 1e-3 * cp + (sharding.offloadOptimizer !== 'none' ? 0.5 : 0) + shardComm + 1e-4 * t.gradAccum;
    return compute * bubble + fixed;
  },
};

/** Every layout of the default space, evaluated without pruning: the best fitting one and the Pareto front. */
export function bruteForce(base: Plan, est: PlannerEstimators, limit: number): { best?: { stepSeconds: number }; front: [number, number][] } {
  const gpus = base.cluster.gpusPerNode * base.cluster.nodes;
  const B = base.training.globalBatch;
  const m = base.model;
  const pts: [number, number][] = [];
  const zeros = base.parallel.sharding.style === 'deepspeed' ? [0, 1, 2, 3] : base.parallel.sharding.style === 'ddp' ? [0, 1] : [0, 2, 3];
  for (const tp of [1, 2, 4, 8]) for (const cp of [1, 2, 4, 8, 16, 32]) for (const pp of divisors(gpus)) {
    if (m.heads % tp || m.kvHeads % tp || tp > base.cluster.gpusPerNode || pp > m.layers) continue;
    if (base.training.seqLen % (2 * cp) && cp > 1) continue;
    const dp = gpus / (tp * cp * pp);
    if (!Number.isInteger(dp) || B % dp) continue;
    const split = stageSplit(m.layers, pp);
    if (split === null) continue;
    const vpps = pp === 1 || split ? [1] : divisors(m.layers / pp).filter((v) => v <= 8);
    const fsdp = base.parallel.sharding.style === 'fsdp2' || base.parallel.sharding.style === 'fsdp';
    const gpn = base.cluster.gpusPerNode;
    const groups = fsdp && dp > gpn && dp % gpn === 0 ? [dp, gpn] : [dp];
    for (const vpp of vpps) for (const zero of zeros) for (const offload of ['none', 'cpu'] as const) for (const g of groups) {
      const sharding = shardingFor(base.parallel.sharding, zero as 0 | 1 | 2 | 3, offload, dp, g);
      if (!sharding) continue;
      // DeepSpeed's pipeline engine refuses ZeRO-2/3 (deepspeed/runtime/pipe/engine.py asserts the stage is below 2).
      if (sharding.style === 'deepspeed' && pp > 1 && zero >= 2) continue;
      for (const recompute of ['none', 'selective', 'full'] as const) for (const mb of divisors(B / dp)) {
        const gradAccum = B / (dp * mb);
        if (vpp > 1 && gradAccum % pp) continue;
        // The plan of each layout as derivePlan gives it (planForLayout), independent of the search's fast plan building.
        const plan = planForLayout(base, {
          tp, pp, cp, dp, vpp, ep: 1, sp: tp > 1, zero: zero as 0 | 1 | 2 | 3, sharding: sharding.style, ...(sharding.fsdpStrategy ? { fsdpStrategy: sharding.fsdpStrategy } : {}),
          ...(g < dp ? { shardGroup: g } : {}), distributedOptimizer: sharding.style === 'megatron-distopt', microBatch: mb, gradAccum, recompute, offload,
          ...(split ? { stageLayers: split } : {}),
        }, gpus);
        if (!plan) continue;
        const bytes = est.peakBytes(plan);
        if (bytes <= limit) pts.push([bytes, est.stepSeconds(plan)]);
      }
    }
  }
  const front = pts
    .filter((p) => !pts.some((q) => q[0] <= p[0] && q[1] <= p[1] && (q[0] < p[0] || q[1] < p[1])))
    .sort((a, b) => a[0] - b[0]);
  const unique = front.filter((p, i) => i === 0 || p[0] !== front[i - 1][0] || p[1] !== front[i - 1][1]);
  const best = pts.length ? { stepSeconds: Math.min(...pts.map((p) => p[1])) } : undefined;
  return { best, front: unique };
}
