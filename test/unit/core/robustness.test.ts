/** Property-style loop: random and absurd plans never throw and never give NaN, ∞ or negative bytes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateMemory } from '../../../shared/memory/estimate';
import { peakMemoryFast } from '../../../shared/memory/fast';
import { makePlan } from '../../../shared/plan/defaults';
import type { Plan } from '../../../shared/plan/types';
import { listPresets } from '../../../shared/model/presets';
import { H100 } from './helpers';

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WEIRD = [0, -1, 0.5, 1, 2, 3, 4, 7, 8, 64, 1e9, 1e16, Number.NaN, Number.POSITIVE_INFINITY];

/** Checks every number in an estimate is finite and ≥ 0. */
function assertClean(x: unknown, path = ''): void {
  if (typeof x === 'number') assert.ok(Number.isFinite(x) && x >= 0, `${path} = ${x}`);
  else if (Array.isArray(x)) x.forEach((v, i) => assertClean(v, `${path}[${i}]`));
  else if (x && typeof x === 'object') for (const [k, v] of Object.entries(x)) if (k !== 'inputs' && k !== 'problems') assertClean(v, `${path}.${k}`);
}

test('1,000 random plans: no throw, no NaN/∞/negative bytes', () => {
  const r = rng(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const presets = listPresets();
  for (let i = 0; i < 1000; i++) {
    const weird = () => (r() < 0.15 ? pick(WEIRD) : pick([1, 2, 4, 8]));
    const model = { ...pick(presets).model, ...(r() < 0.1 ? { layers: pick(WEIRD) } : {}), ...(r() < 0.05 ? { kvHeads: pick(WEIRD) } : {}) };
    const plan: Plan = makePlan({
      model,
      training: {
        microBatch: weird(), gradAccum: weird(), seqLen: r() < 0.1 ? pick(WEIRD) : pick([512, 2048, 4096, 8192]),
        recompute: pick(['none', 'selective', 'full'] as const), precision: pick(['fp32', 'bf16-mixed', 'fp16-mixed', 'bf16', 'fp8-mixed'] as const),
        optimizer: pick(['adamw', 'sgd', 'sgd-momentum', 'adafactor', 'adam-8bit', 'lion'] as const), flashAttention: r() < 0.5,
        fp32GradAccum: r() < 0.3,
      },
      parallel: {
        tp: weird(), pp: weird(), dp: weird(), cp: r() < 0.8 ? 1 : weird(), ep: r() < 0.8 ? 1 : weird(), vpp: r() < 0.8 ? 1 : weird(),
        sp: r() < 0.5, schedule: pick(['1f1b', 'gpipe', 'interleaved', 'zb-h1'] as const),
        sharding: {
          style: pick(['ddp', 'deepspeed', 'fsdp', 'fsdp2', 'megatron-distopt'] as const), stage: pick([0, 1, 2, 3] as const),
          offloadOptimizer: pick(['none', 'cpu', 'nvme'] as const), offloadParams: pick(['none', 'cpu'] as const),
        },
      },
      ...(r() < 0.2 ? { lora: { rank: weird(), targets: ['q', 'v'], baseDtype: pick(['bf16', 'nf4'] as const) } } : {}),
    }, H100);
    let e;
    assert.doesNotThrow(() => { e = estimateMemory(plan); });
    assertClean(e);
    const fast = peakMemoryFast(plan);
    assert.ok(fast === Number.POSITIVE_INFINITY || (Number.isFinite(fast) && fast >= 0), `fast ${fast}`);
  }
});

test('structurally broken plans give problems, not exceptions', () => {
  for (const broken of [{}, { model: {} }, { model: null, training: 3 }, null]) {
    const e = estimateMemory(broken as unknown as Plan);
    assert.deepEqual(e.stages, []);
    assert.ok(e.problems.length > 0);
    assert.equal(peakMemoryFast(broken as unknown as Plan), Number.POSITIVE_INFINITY);
  }
});
