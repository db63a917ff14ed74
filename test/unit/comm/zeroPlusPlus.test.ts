/**
 * DeepSpeed ZeRO++ (Wang et al. 2023, "ZeRO++: Extremely Efficient Collective Communication for Giant Model
 * Training"; keys in deepspeed/runtime/zero/config.py) at ZeRO-3: qwZ gathers the weights in int8 (§4.1: half of the
 * 16-bit gather), hpZ keeps a secondary copy partitioned over the GPUs of a node and gathers the backward's weights
 * from it inside the node (§4.2: the cross-node gathers fall from 2 per micro-batch to 1, for Ψ·2/hpz bytes more per
 * GPU), qgZ reduces the gradients as int4 (§4.3: a quarter of the 16-bit volume). Expected sizes from those rules and
 * Llama-3.1-8B's config.json (hidden 4096, 32 layers, 8 K/V heads of 128, MLP 14336, vocabulary 128256, untied).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { validatePlan } from '../../../shared/plan/validate';
import { estimateMemory } from '../../../shared/memory/estimate';
import { TimeCache } from '../../../shared/time/cache';
import { stageComm } from '../../../shared/time/stageComm';

const h = 4096, L = 32, kv = 1024, f = 14336, V = 128256;
const PSI = 2 * V * h + L * (h * h + 2 * h * kv + h * h + 3 * h * f + 2 * h) + h;
const json = (zpp: string, stage = 3) => `{"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 4, "bf16": {"enabled": true},
  "zero_optimization": {"stage": ${stage}${zpp}}}`;
const ALL = ', "zero_quantized_weights": true, "zero_hpz_partition_size": 8, "zero_quantized_gradients": true';

describe('DeepSpeed ZeRO++', () => {
  before(async () => { await initFormats(); });
  const planOf = (text: string) => resolvePlan(parseConfig('/ws/ds_config.json', text), [], { settings: { model: 'llama-3.1-8b', gpu: 'h100-sxm', worldSize: 64 } });

  test('the three switches are read into the plan', () => {
    const s = planOf(json(ALL)).plan!.parallel.sharding;
    assert.equal(s.quantizedWeights, true);
    assert.equal(s.hpzPartition, 8);
    assert.equal(s.quantizedGradients, true);
  });

  test('qwZ: an int8 forward gather; hpZ: the backward\'s gather in 16 bits inside the node; qgZ: an int4 reduce-scatter', () => {
    const plan = planOf(json(ALL)).plan!;
    const cache = new TimeCache();
    const k = cache.stageTraffic(plan, 0);
    assert.equal(k.agBytes, PSI * 1);
    assert.equal(k.agBackBytes, PSI * 2);
    assert.equal(k.rsBytes, PSI * 0.5);
    assert.equal(k.hpzLink?.size, 8);
    assert.equal(k.hpzLink?.tier, 'nvlink');
    const c = stageComm(plan, 0, cache).collectives;
    assert.equal(c.find((x) => x.id === 'zero3-param-all-gather')?.countPerStep, 4, 'one cross-node gather per micro-batch');
    assert.equal(c.find((x) => x.id === 'zeropp-hpz-all-gather')?.countPerStep, 4);
    // Without ZeRO++: two 16-bit cross-node gathers per micro-batch and a 16-bit reduce-scatter.
    const plain = new TimeCache().stageTraffic(planOf(json('')).plan!, 0);
    assert.equal(plain.agBytes, PSI * 2);
    assert.equal(plain.rsBytes, PSI * 2);
    assert.equal(plain.hpzLink, undefined);
  });

  test('hpZ\'s secondary partition: Ψ·2/8 more per GPU', () => {
    const withHpz = estimateMemory(planOf(json(', "zero_hpz_partition_size": 8')).plan!).stages[0].terms.commBuffers!.bytes;
    const without = estimateMemory(planOf(json('')).plan!).stages[0].terms.commBuffers!.bytes;
    assert.equal(withHpz - without, (PSI * 2) / 8);
  });

  test('bad partition sizes: 0 is an error at the value, 3 (not dividing 64, DeepSpeed partitions a node) a warning, "abc" an error at the value', () => {
    const zero = parseConfig('/ws/ds_config.json', json(', "zero_hpz_partition_size": 0'));
    assert.ok(zero.diagnostics.some((d) => d.severity === 'error' && /at least 1/.test(d.message)));
    const three = validatePlan(planOf(json(', "zero_hpz_partition_size": 3')).plan!);
    assert.ok(three.some((p) => p.code === 'zeropp-hpz-layout' && p.severity === 'warning'));
    assert.ok(!validatePlan(planOf(json(', "zero_hpz_partition_size": 8')).plan!).some((p) => p.code === 'zeropp-hpz-layout'));
    const text = json(', "zero_hpz_partition_size": "abc"');
    const abc = parseConfig('/ws/ds_config.json', text).diagnostics.filter((d) => d.severity === 'error');
    assert.ok(abc.length >= 1, JSON.stringify(abc));
    for (const d of abc) assert.equal(d.range?.start.line, text.split('\n').findIndex((l) => l.includes('"abc"')));
  });

  test('below ZeRO-3 the switches change nothing and say so', () => {
    const r = planOf(json(ALL, 2));
    assert.equal(r.plan!.parallel.sharding.hpzPartition, undefined);
    assert.ok(r.problems.some((p) => p.code === 'zeropp-needs-zero3' && p.severity === 'info'));
  });
});
