// What recomputation reruns per policy (issue 14 §1: "forward, backward and recomputation, each from its own shape").
// torchtitan/distributed/activation_checkpoint.py: selective_ac_option = N checkpoints every N-th block whole, which
// reruns that block's forward in the backward and nothing else; "op" reruns the ops its policy does not save in every
// block; full recomputation reruns every block's forward. Expected counts from those rules (first principles).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findGpu } from '../../../shared/hardware/gpus';
import { findPreset } from '../../../shared/model/presets';
import { makePlan } from '../../../shared/plan/defaults';
import type { Plan } from '../../../shared/plan/types';
import { TimeCache } from '../../../shared/time/cache';
import { timeContext } from '../../../shared/time/context';
import { checkpointsWholeBlocks, microbatchWork } from '../../../shared/time/microbatch';

function titan8b(training: Record<string, unknown>): Plan {
  return makePlan({
    engine: 'fsdp2', model: findPreset('llama-3.1-8b')!.model,
    training: { microBatch: 1, seqLen: 8192, precision: 'bf16-mixed', optimizer: 'adamw', modelImpl: 'torchtitan', ...training },
    parallel: { dp: 8, sharding: { style: 'fsdp2', stage: 3 } }, cluster: { gpusPerNode: 8, nodes: 1 },
  } as never, findGpu('h100-sxm'));
}

describe('recomputation per policy (torchtitan, 32 layers)', () => {
  const layerFwd = (p: Plan) => timeContext(p, new TimeCache()).dense.cost.fwdTotal;
  test('selective_ac_option "2": 16 blocks rerun their whole forward', () => {
    const p = titan8b({ recompute: 'selective', recomputePolicy: 'torchtitan-layer', recomputeEvery: 2 });
    assert.ok(checkpointsWholeBlocks(p));
    assert.ok(Math.abs(microbatchWork(p, 0).recompute / (16 * layerFwd(p)) - 1) < 1e-12);
  });
  test('selective_ac_option "3": ⌊32/3⌋ = 10 blocks', () => {
    const p = titan8b({ recompute: 'selective', recomputePolicy: 'torchtitan-layer', recomputeEvery: 3 });
    assert.ok(Math.abs(microbatchWork(p, 0).recompute / (10 * layerFwd(p)) - 1) < 1e-12);
  });
  test('full recomputation reruns all 32; "op" reruns less than a whole forward per block, more than nothing', () => {
    const full = titan8b({ recompute: 'full' });
    assert.ok(Math.abs(microbatchWork(full, 0).recompute / (32 * layerFwd(full)) - 1) < 1e-12);
    const op = titan8b({ recompute: 'selective', recomputePolicy: 'torchtitan-op' });
    assert.ok(!checkpointsWholeBlocks(op));
    const r = microbatchWork(op, 0).recompute / (32 * layerFwd(op));
    assert.ok(r > 0.2 && r < 0.7, `op policy reruns ${r.toFixed(2)} of the forward`);
  });
  test('"op" with TP: the sequence-parallel gathers run again (not in the save list), the reduce-scatters do not', () => {
    // torchtitan's _save_list holds _c10d_functional.reduce_scatter_tensor but not all_gather_into_tensor
    // (models/llama3/infra/parallelize.py), so the recomputed forward communicates: more than nothing, less than the
    // forward's four collectives.
    const op = makePlan({
      engine: 'fsdp2', model: findPreset('llama-3.1-8b')!.model,
      training: { microBatch: 1, seqLen: 8192, precision: 'bf16-mixed', optimizer: 'adamw', modelImpl: 'torchtitan', recompute: 'selective', recomputePolicy: 'torchtitan-op' },
      parallel: { dp: 1, tp: 8, sp: true, sharding: { style: 'fsdp2', stage: 3 } }, cluster: { gpusPerNode: 8, nodes: 1 },
    } as never, findGpu('h100-sxm'));
    const w = microbatchWork(op, 0);
    assert.ok(w.parts.recompute.comm > 0 && w.parts.recompute.comm < w.parts.forward.comm, `${w.parts.recompute.comm} vs ${w.parts.forward.comm}`);
  });
});
