/**
 * A step time that rests on something the model does not distinguish says so at the input. torchao's rowwise float8
 * is timed like tensorwise; torchtitan's June-2025 async-TP benchmark (pytorch/torchtitan
 * benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md) measured rowwise 26–34 % slower than tensorwise on the same
 * layouts, so a rowwise file gets a warning at `recipe_name` and a tensorwise one does not.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { estimateStepTime } from '../../../shared/time/estimate';
import { simulateStep } from '../../../shared/sim/simulate';

const file = (recipe: string) => `[model]\nname = "llama3"\nflavor = "8B"\nconverters = ["float8"]\n[training]\nlocal_batch_size = 2\nseq_len = 8192\n[parallelism]\ndata_parallel_shard_degree = 8\n[quantize.linear.float8]\nrecipe_name = "${recipe}"\n`;
const planOf = (recipe: string) => resolvePlan(parseConfig('/x/a.toml', file(recipe), 'torchtitan'), []).plan!;

describe('assumptions of the step time, as warnings at the input', () => {
  test('rowwise float8 is flagged in the estimate and the simulation; tensorwise is not', () => {
    const row = planOf('rowwise');
    for (const problems of [estimateStepTime(row).problems, simulateStep(row).problems]) {
      const w = problems.find((p) => p.code === 'fp8-rowwise-timing');
      assert.ok(w && w.severity === 'warning' && w.paths.includes('training.fp8.recipe'), JSON.stringify(problems));
    }
    assert.ok(simulateStep(row).ok, 'a warning does not stop the simulation');
    assert.equal(estimateStepTime(planOf('tensorwise')).problems.some((p) => p.code === 'fp8-rowwise-timing'), false);
  });
});
