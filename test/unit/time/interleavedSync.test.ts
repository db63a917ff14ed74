/**
 * Megatron's interleaved schedule launches each model chunk's gradient reduce when that chunk's last backward ends
 * (megatron/core/pipeline_parallel/schedules.py `forward_backward_pipelining_with_interleaving`,
 * `config.grad_sync_func[model_chunk_id]`), so all but the last chunk's reduce can hide in the cooldown. Expected
 * values are worked by hand from that queue: v reduces of d = t/v on one stream, chunk c launched c·Δ before the lane
 * ends (Δ = p micro-batch chunks of backward), chunk 0 launched w (its bucket window) before the end.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { interleavedSyncHidden } from '../../../shared/time/syncExposure';
import { simulateStep } from '../../../shared/sim/simulate';
import { estimateStepTime } from '../../../shared/time/estimate';
import { A100, gpt, plan } from '../sim/fixtures';

const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-12, `${what}: ${a} vs ${b}`);

describe('interleaved gradient sync hidden in the cooldown', () => {
  test('reduces shorter than the gap between chunks: only chunk 0\'s is left after the end', () => {
    // t = 1 s over v = 5 chunks: d = 0.2 s; p = 2, one chunk backward 0.15 s: Δ = 0.3 s; window 0.05 s.
    // Chunks 4..1 launch at E − 1.2, − 0.9, − 0.6, − 0.3 and end by E − 0.1; chunk 0 launches at E − 0.05, ends at
    // E + 0.15. Hidden beyond the window: 1 − 0.05 − 0.15 = 0.8 s.
    close(interleavedSyncHidden(1, 5, 2, 0.15, 0.05), 0.8, 'no queue');
  });

  test('reduces longer than the gap queue up: the backlog spills past the end', () => {
    // d = 0.2 s, Δ = 2 · 0.05 = 0.1 s: chunk 4 launches at E − 0.4 and the stream stays busy, chunks 4..1 end at
    // E − 0.4 + 4 · 0.2 = E + 0.4; chunk 0 (launched at E − 0.02) waits and ends at E + 0.6. Hidden: 1 − 0.02 − 0.6 = 0.38 s.
    close(interleavedSyncHidden(1, 5, 2, 0.05, 0.02), 0.38, 'queue');
  });

  test('nothing without interleaving, nothing to sync, or a window covering the whole sync', () => {
    assert.equal(interleavedSyncHidden(1, 1, 4, 0.1, 0.05), 0);
    assert.equal(interleavedSyncHidden(0, 4, 4, 0.1, 0.05), 0);
    assert.equal(interleavedSyncHidden(1, 4, 4, 0, 0.05), 0);
    assert.equal(interleavedSyncHidden(0.1, 2, 4, 1, 5), 0);
  });

  test('the closed form and the event simulation of a Megatron interleaved step agree, chunk by chunk', () => {
    const p = plan({
      engine: 'megatron', model: gpt(24, 4096, 32), training: { microBatch: 1, globalBatch: 64, seqLen: 2048, precision: 'bf16-mixed' },
      parallel: { tp: 2, pp: 4, vpp: 3, dp: 4, sp: true, schedule: 'interleaved', sharding: { style: 'megatron-distopt', overlapComm: true } },
      // Two GPUs per node: each node holds one TP pair, so the DP group (stride 2 in the rank order tp-cp-ep-dp-pp) and
      // its gradient reduce cross the network and outlast the bucket window.
      cluster: { gpusPerNode: 2, nodes: 16 },
    });
    const sim = simulateStep({ ...p, cluster: { ...p.cluster, gpu: A100 } });
    const est = estimateStepTime({ ...p, cluster: { ...p.cluster, gpu: A100 } });
    assert.ok(sim.ok, sim.problems.map((x) => x.code).join());
    for (const s of sim.stages) {
      const pieces = s.blocks.filter((b) => b.label === 'gradient sync (DP, one chunk)');
      assert.equal(pieces.length, 3, `stage ${s.stage}: one reduce per chunk`);
    }
    assert.ok(Math.abs(sim.stepSeconds / est.stepSeconds - 1) <= 1e-3, `simulated ${sim.stepSeconds} vs closed form ${est.stepSeconds}`);
  });
});
