/**
 * The planner against published practice (issue 14 §4). Expected layouts:
 * - Llama 3.1 405B on 16,384 H100, sequence 8192, 2,048 sequences per step: Meta's TP 8 · PP 16 · DP 128 with the
 *   interleaved schedule and one layer less on the first and last stage (Dubey et al. 2024, "The Llama 3 Herd of
 *   Models", §3.3.2 and Table 4). The paper does not give the number of virtual stages; the test takes 7, the most the
 *   7-layer first and last stages allow, and states it.
 * - Llama 3 70B on 1,024 H100 and Llama 3 8B on 64 H100, BF16, sequence 8192: NVIDIA's recipes, TP 4 · PP 4 · CP 2 ·
 *   VP 5 (70B) and TP 1 · PP 1 · CP 2 (8B), micro batch 1 (NVIDIA/NeMo scripts/performance/recommended_model_configs/
 *   model_configs_h100.csv at ae861a9c, pre_train llama3 rows, published for 64 and 8 GPUs with global batch 128; the
 *   data-parallel size and the global batch scale with the GPU count as in the recipes' weak scaling: 2,048 and 1,024).
 * Each published layout must be within 5 % of the planner's best (both simulated step by step); where the planner
 * prefers something else, the test prints why, term by term. The planner's fast path and the step simulator must agree
 * to 0.1 % on the layouts the planner returns (its top 20 and its memory/time front), even and uneven splits alike.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findGpu } from '../../../shared/hardware/gpus';
import { findPreset } from '../../../shared/model/presets';
import { makePlan } from '../../../shared/plan/defaults';
import type { GpuSpec, Plan } from '../../../shared/plan/types';
import { planForLayout } from '../../../shared/planner/build';
import { planLayouts } from '../../../shared/planner/plan-layouts';
import type { Layout } from '../../../shared/planner/types';
import { choiceOf } from '../../../shared/planner/search';
import { simulateStep } from '../../../shared/sim/simulate';
import { TimeCache } from '../../../shared/time/cache';
import { estimateStepTime } from '../../../shared/time/estimate';
import { stepSecondsFast } from '../../../shared/time/stepTime';
import type { StepTimeEstimate } from '../../../shared/time/types';

const H100 = findGpu('h100-sxm') as GpuSpec;

/** A Megatron/NeMo base plan: distributed optimizer with overlapped grad reduce and param gather, TP comm overlap. */
function base(preset: string, gpus: number, globalBatch: number): Plan {
  const p = findPreset(preset);
  assert.ok(p, preset);
  return makePlan({
    engine: 'megatron', model: p.model, training: { microBatch: 1, globalBatch, seqLen: 8192, precision: 'bf16-mixed' },
    parallel: { tp: 1, pp: 1, dp: gpus, sp: true, tpCommOverlap: true, sharding: { style: 'megatron-distopt', overlapComm: true } },
    cluster: { gpusPerNode: 8, nodes: gpus / 8 },
  }, H100);
}

/** The plan of a published layout on the base plan's cluster. */
function published(b: Plan, gpus: number, l: { tp: number; pp: number; vpp: number; cp: number; stageLayers?: number[] }): Plan {
  const dp = gpus / (l.tp * l.pp * l.cp);
  const plan = planForLayout(b, {
    ...l, ep: 1, dp, sp: l.tp > 1, zero: 1, sharding: 'megatron-distopt', distributedOptimizer: true, microBatch: 1,
    gradAccum: b.training.globalBatch / dp, recompute: 'none', offload: 'none',
  }, gpus);
  assert.ok(plan, 'the published layout is expressible');
  return plan;
}

/** Term-by-term seconds per step of an estimate: pipeline terms, bubble, gradient sync, optimizer, post-step. */
function terms(e: StepTimeEstimate): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of e.operatorTerms) out[t.name] = t.stepSeconds;
  out.bubble = e.terms.bubble.seconds;
  out.exposedGradSync = e.terms.exposedGradSync.seconds;
  out.optimizer = e.optimizerSeconds;
  out.postStep = e.terms.postStep.seconds;
  return out;
}

/** Prints why the planner prefers its best layout over the published one, term by term (seconds per step). */
function explain(name: string, pub: StepTimeEstimate, best: StepTimeEstimate, bestLayout: Layout): void {
  const a = terms(pub);
  const b = terms(best);
  const lines = [`${name}: published ${pub.stepSeconds.toFixed(3)} s vs planner's best ${best.stepSeconds.toFixed(3)} s `
    + `(TP ${bestLayout.tp} · PP ${bestLayout.pp} · VPP ${bestLayout.vpp} · CP ${bestLayout.cp} · DP ${bestLayout.dp}, micro ${bestLayout.microBatch}×${bestLayout.gradAccum}); seconds per step:`];
  for (const k of Object.keys(a)) lines.push(`  ${k.padEnd(16)} ${a[k].toFixed(3).padStart(8)} ${b[k].toFixed(3).padStart(8)} ${(a[k] - b[k] >= 0 ? '+' : '') + (a[k] - b[k]).toFixed(3)}`);
  console.log(lines.join('\n'));
}

/** The planner's best layout and the published layout's gap to it. */
function compare(name: string, b: Plan, gpus: number, layout: Parameters<typeof published>[2]): { gap: number; best: Layout } {
  const r = planLayouts(b, { topK: 5 });
  assert.ok(r.layouts.length > 0, 'something fits');
  const best = r.layouts[0];
  const bestPlan = planForLayout(b, choiceOf(best), gpus);
  assert.ok(bestPlan);
  const pubPlan = published(b, gpus, layout);
  const pub = estimateStepTime(pubPlan);
  assert.deepEqual(pub.problems.filter((p) => p.severity === 'error'), []);
  explain(name, pub, estimateStepTime(bestPlan), best);
  // The gap is measured with the step simulator, the event-by-event schedule the closed form approximates (on uneven
  // pipeline splits the closed form is up to 1 % conservative, see below).
  const simPub = simulateStep(pubPlan);
  const simBest = simulateStep(bestPlan);
  assert.ok(simPub.ok && simBest.ok);
  const gap = simPub.stepSeconds / simBest.stepSeconds - 1;
  console.log(`  simulated: published ${simPub.stepSeconds.toFixed(3)} s, best ${simBest.stepSeconds.toFixed(3)} s, gap ${(gap * 100).toFixed(1)} %`);
  return { gap, best };
}

describe('published layouts are within 5 % of the planner\'s best', () => {
  test('Llama 3.1 405B on 16,384 H100: Meta\'s TP 8 · PP 16 · DP 128, interleaved, 7 + 14·8 + 7 layers', () => {
    const b = base('llama-3.1-405b', 16384, 2048);
    const { gap } = compare('405B', b, 16384, { tp: 8, pp: 16, vpp: 7, cp: 1, stageLayers: [7, ...Array<number>(14).fill(8), 7] });
    assert.ok(gap <= 0.05, `Meta's layout is ${(gap * 100).toFixed(1)} % slower than the planner's best`);
  });

  test('Llama 3 70B on 1,024 H100: NVIDIA\'s TP 4 · PP 4 · CP 2 · VP 5', () => {
    const { gap } = compare('70B', base('llama-3.1-70b', 1024, 2048), 1024, { tp: 4, pp: 4, vpp: 5, cp: 2 });
    assert.ok(gap <= 0.05, `${(gap * 100).toFixed(1)} %`);
  });

  test('Llama 3 8B on 64 H100: NVIDIA\'s TP 1 · PP 1 · CP 2', () => {
    const { gap } = compare('8B', base('llama-3.1-8b', 64, 1024), 64, { tp: 1, pp: 1, vpp: 1, cp: 2 });
    assert.ok(gap <= 0.05, `${(gap * 100).toFixed(1)} %`);
  });
});

describe('126 layers on PP 16 with virtual stages are in the search', () => {
  test('the 405B search evaluates uneven splits with interleaving, and the fast path equals the traceable estimate', () => {
    const b = base('llama-3.1-405b', 16384, 2048);
    const r = planLayouts(b, { topK: 20 });
    const interleavedUneven = r.layouts.filter((l) => l.stageLayers && l.vpp > 1);
    assert.ok(interleavedUneven.length > 0, 'uneven interleaved layouts among the top 20');
    for (const l of interleavedUneven) assert.equal(l.stageLayers?.reduce((x, y) => x + y, 0), 126);
  });
});

describe('the planner\'s fast path and the simulator agree (0.1 %)', () => {
  const cases: [string, Plan, number][] = [
    ['405B', base('llama-3.1-405b', 16384, 2048), 16384], ['70B', base('llama-3.1-70b', 1024, 2048), 1024], ['8B', base('llama-3.1-8b', 64, 1024), 64],
  ];
  for (const [name, b, gpus] of cases) {
    test(`${name}: the top 20 and the memory/time front`, () => {
      const r = planLayouts(b, { topK: 20 });
      assert.ok(r.layouts.length > 0 && r.pareto.length > 0);
      for (const l of [...r.layouts, ...r.pareto]) {
        const plan = planForLayout(b, choiceOf(l), gpus);
        assert.ok(plan);
        const fast = stepSecondsFast(plan, new TimeCache());
        const sim = simulateStep(plan);
        assert.ok(sim.ok, sim.problems.map((p) => p.code).join());
        const rel = Math.abs(fast / sim.stepSeconds - 1);
        // The 0.1 %, on even and uneven splits alike: the fast path runs the simulator's schedule over the same
        // stage timings (the closed form it used to rank with was up to 0.7 % slow on Meta's uneven interleaved split).
        assert.ok(rel <= 1e-3, `${JSON.stringify(choiceOf(l))}: fast ${fast} vs simulated ${sim.stepSeconds} (${(rel * 100).toFixed(3)} %)`);
        // What the planner shows is the simulation's own number: its top layouts re-estimated with the traceable
        // estimate, its front with the fast figures of the search.
        if (r.layouts.includes(l)) assert.equal(l.estimate, 'full');
        assert.ok(Math.abs(l.stepSeconds / sim.stepSeconds - 1) <= 1e-9, `${JSON.stringify(choiceOf(l))}: shown ${l.stepSeconds} vs simulated ${sim.stepSeconds}`);
      }
    });
  }
});
