/**
 * "Apply layout" end to end: the format parser's facts steer value edits to where the value lives (a variable's
 * definition), the planner's best layout is written back into the file it came from, and the delta names the change.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { applyLayoutEdits, layoutEdits } from '../../../formats/layout';
import { applyTextEdits } from '../../../formats/common/edit/text';
import { findPreset } from '../../../shared/model/presets';
import { makePlan } from '../../../shared/plan/defaults';
import { planLayouts } from '../../../shared/planner/plan-layouts';
import { findFlags } from '../../../formats/common/edit/shellFlags';

const SCRIPT = `#!/bin/bash
# Values live in variables; the flags only reference them (Megatron-LM examples/ style).
TP=\${TP:-2}
MBS=4
ARGS=(
    --num-layers 32
    --hidden-size 4096
    --num-attention-heads 32
    --seq-length 4096
    --tensor-model-parallel-size $TP
    --micro-batch-size $MBS
    --global-batch-size 64
    --bf16
)
torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py "\${ARGS[@]}"
`;

describe('apply layout with the parser facts', () => {
  before(async () => {
    await initFormats();
  });

  test('value edits land on the variable definitions the parser points at', () => {
    const facts = parseConfig('file:///w/pretrain.sh', SCRIPT, 'megatron-script');
    const target = {
      tp: 4, pp: 1, vpp: 1, cp: 1, ep: 1, dp: 2, sp: true, zero: 0 as const, sharding: 'ddp' as const, distributedOptimizer: false,
      microBatch: 2, gradAccum: 16, recompute: 'none' as const, offload: 'none' as const, globalBatch: 64, layers: 32,
    };
    const r = layoutEdits('megatron-script', SCRIPT, target, undefined, undefined, facts);
    const out = applyTextEdits(SCRIPT, r.edits);
    // Hand-written expectation: TP default 2 → 4, MBS=4 → 2, --sequence-parallel added next to the TP flag.
    assert.equal(out, SCRIPT.replace('${TP:-2}', '${TP:-4}').replace('MBS=4', 'MBS=2')
      .replace('    --tensor-model-parallel-size $TP\n', '    --tensor-model-parallel-size $TP\n    --sequence-parallel\n'));
  });

  test('the best planned layout round-trips through the file', () => {
    const preset = findPreset('llama-3.1-8b');
    assert.ok(preset);
    const plan = makePlan({
      model: preset.model,
      training: { microBatch: 4, globalBatch: 64, seqLen: 4096 },
      parallel: { tp: 2, dp: 4, sharding: { style: 'ddp' } },
      cluster: { gpusPerNode: 8, nodes: 1 },
    });
    const result = planLayouts(plan, { topK: 1 });
    const best = result.layouts[0];
    assert.ok(best, 'a layout fits');
    assert.equal(best.estimate, 'full', 'the top layouts carry the traceable estimate');
    const r = applyLayoutEdits('megatron-script', SCRIPT, plan, best);
    const out = applyTextEdits(SCRIPT, r.edits);
    // Reading the flags back gives the layout (variables resolved by hand: the edits changed their definitions).
    const vars = Object.fromEntries([...out.matchAll(/^([A-Z]+)=(?:\$\{[A-Z]+:-)?(\d+)\}?$/gm)].map((m) => [m[1], Number(m[2])]));
    const flags = new Map(findFlags(out).map((h) => [h.flag, h.value?.startsWith('$') ? vars[h.value.slice(1)] : Number(h.value)]));
    assert.equal(flags.get('--tensor-model-parallel-size') ?? 1, best.tp);
    assert.equal(flags.get('--pipeline-model-parallel-size') ?? 1, best.pp);
    assert.equal(flags.get('--micro-batch-size'), best.microBatch);
    assert.equal(flags.has('--use-distributed-optimizer'), best.distributedOptimizer);
    assert.match(r.delta, /^peak \d+\.\d → \d+\.\d GiB, step [\d.]+ → [\d.]+ s; /);
  });
});
