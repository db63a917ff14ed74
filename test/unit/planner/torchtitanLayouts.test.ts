/**
 * The planner's figures for a torchtitan file equal the figures of that file rewritten by "Apply layout" and read
 * again, in both of torchtitan's layouts (2025+ [parallelism] with pipeline_parallel_microbatch_size and
 * layers_per_stage; the benchmark-era batch_size / [experimental] with micro-batch counts and split points). No
 * expected number is written here: the planner's estimate and the edited file's estimate are computed independently
 * (search fast path vs. editor + reader + resolver). What makes them meet is torchtitan's own rules, cited in
 * formats/torchtitan and shared/plan/derived.ts: micro-batches cut from the local batch, stages it can name, its
 * weighted split, FSDP only over a dp_shard × cp mesh larger than 1.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../../cli/load';
import { layoutEdits } from '../../../formats/layout';
import { applyTextEdits } from '../../../formats/common/edit/text';
import { planLayouts } from '../../../shared/planner/plan-layouts';
import { choiceOf } from '../../../shared/planner/search';
import { estimateMemory } from '../../../shared/memory/estimate';
import { estimateStepTime } from '../../../shared/time/estimate';

const OLD = resolve(__dirname, '../../../data/calibration/measured-runs/tt24_t5_405b_1f1b.toml');
const NEW = `[model]
name = "llama3"
flavor = "405B"
converters = ["float8"]

[training]
local_batch_size = 32
seq_len = 8192

[parallelism]
data_parallel_shard_degree = 8
tensor_parallel_degree = 8
pipeline_parallel_degree = 8
pipeline_parallel_microbatch_size = 4

[activation_checkpoint]
mode = "full"
`;

describe('torchtitan: what the planner proposes is what the rewritten file estimates', () => {
  const dir = mkdtempSync(join(tmpdir(), 'shardlens-tt-'));
  const newPath = join(dir, 'new_layout.toml');
  writeFileSync(newPath, NEW);
  for (const [name, path] of [['2025 layout', newPath], ['2024 layout (batch_size, [experimental])', OLD]] as const) {
    test(name, async () => {
      const gpus = '512xh100-96gb-500w';
      const base = (await loadConfig(path, { gpus })).resolved.plan;
      assert.ok(base, 'the file resolves');
      const r = planLayouts(base, { topK: 12, format: 'torchtitan' });
      assert.ok(r.layouts.some((l) => l.pp > 1 && l.vpp > 2), 'interleaved layouts beyond 2 stages per rank are proposed');
      assert.ok(r.layouts.every((l) => l.zero === 2 || l.zero === 3), 'FSDP2 only');
      const text = readFileSync(path, 'utf8');
      for (const l of r.layouts) {
        const c = choiceOf(l);
        const edits = layoutEdits('torchtitan', text, { ...c, globalBatch: base.training.globalBatch, layers: base.model.layers });
        const edited = join(dir, `edited-${l.tp}-${l.pp}-${l.vpp}-${l.cp}-${l.zero}-${l.microBatch}.toml`);
        writeFileSync(edited, applyTextEdits(text, edits.edits));
        const plan = (await loadConfig(edited, { gpus })).resolved.plan;
        const what = JSON.stringify(c);
        assert.ok(plan, `${what}: the edited file resolves`);
        assert.deepEqual([plan.parallel.pp, plan.parallel.vpp, plan.training.microBatch, plan.training.gradAccum], [l.pp, l.vpp, l.microBatch, l.gradAccum], what);
        const step = estimateStepTime(plan).stepSeconds;
        const peak = Math.max(...estimateMemory(plan).stages.map((s) => s.peakReservedBytes));
        assert.ok(Math.abs(step / l.stepSeconds - 1) < 1e-3, `${what}: step ${l.stepSeconds} planned, ${step} edited`);
        assert.ok(Math.abs(peak / l.peakReservedBytes - 1) < 1e-3, `${what}: peak ${l.peakReservedBytes} planned, ${peak} edited`);
      }
    });
  }
});
