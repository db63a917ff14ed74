/**
 * Issue 11, items 1 and 2: the what-ifs that used to disagree with editing the file. Each check runs the what-if the
 * way a hover or quick fix does (expressibleWhatIfs) and compares it with the edited file read again; the expected
 * relations come from the frameworks' rules, cited per test, not from ShardLens's own output.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { initFormats } from '../../../formats/index';
import { whatIfs } from './helpers';
import { estimateMemory } from '../../../shared/memory/estimate';
import { rederive } from '../../../shared/plan/derive';
import type { Plan } from '../../../shared/plan/types';
import { estimateStepTime } from '../../../shared/time/estimate';

const peak = (p: Plan) => Math.max(...estimateMemory(p).stages.map((s) => s.peakReservedBytes));
const step = (p: Plan) => estimateStepTime(p)!.stepSeconds;

describe('issue 11 item 1: DeepSpeed ZeRO 2 → 3 re-derives overlap_comm', () => {
  before(async () => { await initFormats(); });
  // Llama-3.1-8B (assumed: the JSON names no model) on 8 × H100 (assumed), micro 2, accumulation 4, ZeRO-2, bf16.
  const ds = JSON.stringify({ train_micro_batch_size_per_gpu: 2, gradient_accumulation_steps: 4, bf16: { enabled: true }, zero_optimization: { stage: 2 } }, null, 2);
  test('the ZeRO-3 what-if turns overlap_comm on, as editing the stage does', () => {
    const { plan, results } = whatIfs({ '/ws/ds_config.json': ds }, '/ws/ds_config.json', 'parallel.sharding.stage');
    // deepspeed/runtime/zero/config.py: overlap_comm left unset is True exactly for stage 3.
    assert.equal(plan.parallel.sharding.overlapComm, false);
    const z3 = results.find((r) => r.plan.parallel.sharding.stage === 3);
    assert.ok(z3, 'a ZeRO-3 what-if is offered');
    assert.equal(z3.plan.parallel.sharding.overlapComm, true);
    assert.equal(z3.edited.parallel.sharding.overlapComm, true);
    assert.equal(peak(z3.plan), peak(z3.edited));
    assert.equal(step(z3.plan), step(z3.edited));
  });
  test('keeping the old overlap (the bug) gives other figures: overlap hides communication', () => {
    const { results } = whatIfs({ '/ws/ds_config.json': ds }, '/ws/ds_config.json', 'parallel.sharding.stage');
    const z3 = results.find((r) => r.plan.parallel.sharding.stage === 3)!;
    const stale = rederive(z3.plan, { parallel: { sharding: { overlapComm: false } } });
    // ZeRO-3 keeps one reduce bucket whether or not it overlaps (DeepSpeed 0.19.8 runtime/zero/stage3.py
    // `_setup_for_real_optimizer` allocates `reduce_bucket_size` once per communication dtype), so the bytes agree; the
    // reduce-scatter overlapped with the backward is hidden.
    assert.equal(peak(z3.plan), peak(stale));
    assert.ok(step(z3.plan) < step(stale), 'overlapped communication is hidden');
  });
});

describe('issue 11 item 2: Megatron TP keeps the global batch and re-derives sequence parallelism', () => {
  before(async () => { await initFormats(); });
  const path = resolve(__dirname, '../../../examples/megatron/pretrain_llama3_8b.sh');
  const original = readFileSync(path, 'utf8');
  // The example at TP 1 (the starting point): TP=2 → TP=1 on its variable line.
  const tp1 = original.replace(/^TP=\$\{TP:-\d+\}/m, 'TP=${TP:-1}');
  test('TP 1 → 2: DP halves, accumulation doubles, the global batch stays (Megatron: global = micro × accumulation × DP)', () => {
    assert.notEqual(tp1, original, 'the example sets TP on a TP= line');
    const { plan, results } = whatIfs({ [path]: tp1 }, path, 'parallel.tp');
    const tp2 = results.find((r) => r.plan.parallel.tp === 2);
    assert.ok(tp2, 'a TP 2 what-if is offered');
    assert.equal(tp2.plan.training.globalBatch, plan.training.globalBatch);
    assert.equal(tp2.plan.parallel.dp * 2, plan.parallel.dp);
    assert.equal(tp2.plan.training.gradAccum, plan.training.gradAccum * 2);
    // --sequence-parallel is written; Megatron turns it off at TP 1 and on again at TP 2 (arguments.py).
    assert.equal(plan.parallel.sp, false);
    assert.equal(tp2.plan.parallel.sp, true);
    assert.equal(step(tp2.plan), step(tp2.edited));
    assert.deepEqual(estimateStepTime(tp2.plan)!.collectives.map((c) => c.bytesPerRank), estimateStepTime(tp2.edited)!.collectives.map((c) => c.bytesPerRank));
  });
  test('TP 2 → 1 on the example as shipped: SP goes off, accumulation halves', () => {
    const { plan, results } = whatIfs({ [path]: original }, path, 'parallel.tp');
    const down = results.find((r) => r.plan.parallel.tp === 1)!;
    assert.equal(plan.parallel.sp, true);
    assert.equal(down.plan.parallel.sp, false);
    assert.equal(down.plan.training.gradAccum * 2, plan.training.gradAccum);
    assert.equal(peak(down.plan), peak(down.edited));
  });
});
