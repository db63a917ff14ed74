// The memory-bound traffic around transformers' Gated DeltaNet mixers (docs/time-model.md, Gated DeltaNet layers): every
// aten op torch dispatches for one forward and backward (probe/oracle/gdn_traffic.py) of Qwen3NextGatedDeltaNet and
// Qwen3_5GatedDeltaNet in bf16, the convolution and the chunked rule stood in for by their I/O contracts, beside
// ShardLens's per-token formulas (shared/time/kernels/gatedDeltaNet.ts gatedDeltaNetEagerBytesPerToken).
// Expected values: torch's dispatch. The formulas were read off the op list of one shape (hidden 2048, 16 key and
// 32 value heads of 128); the shapes here are others. What they leave out: the per-layer reads of the small weights
// (A_log, dt_bias, the norm's weight), under 0.1 %.
// Skipped with a message when no Python with torch ≥ 2.4 and transformers exists; fails instead when CI=true.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ci, memoizedOracle, oracleMissing, oraclePython, withinBytes as within, type TrafficRun } from './fixtures/python';
import { gatedDeltaNetEagerBytesPerToken, gatedDeltaNetKernels } from '../../shared/time/kernels/gatedDeltaNet';
import type { LinearAttentionSpec } from '../../shared/plan/types';

const python = oraclePython;
if (!python && !ci) console.log(`# Gated DeltaNet traffic skipped: ${oracleMissing}`);

type Probe = { qwen3_next: TrafficRun; qwen3_5: TrafficRun };
const gdnProbe = memoizedOracle<Probe>(python, 'gdn_traffic');

describe("transformers' Gated DeltaNet mixers: memory-bound bytes (torch ≥ 2.4, transformers ≥ 5)", { skip: ci ? false : !python }, () => {
  const shapes = [
    { h: 1024, hk: 8, hv: 16, dk: 64, dv: 96, T: 96 },
    { h: 768, hk: 4, hv: 12, dk: 32, dv: 64, T: 160 },
  ];
  for (const s of shapes) {
    test(`hidden ${s.h}, ${s.hk} key and ${s.hv} value heads of ${s.dk}/${s.dv}, ${s.T} tokens: both families within 0.1 %`, () => {
      if (!python) assert.fail(`CI=true but ${oracleMissing}`);
      const run = gdnProbe([s.h, s.hk, s.hv, s.dk, s.dv, s.T]);
      for (const [family, r] of [['Qwen3-Next', run.qwen3_next], ['Qwen3.5', run.qwen3_5]] as const) {
        const la: LinearAttentionSpec = { layers: 1, keyHeads: s.hk, valueHeads: s.hv, keyHeadDim: s.dk, valueHeadDim: s.dv, convKernel: 4, ...(family === 'Qwen3.5' ? { splitProjections: true } : {}) };
        within(s.T * gatedDeltaNetEagerBytesPerToken(la, s.h, 'fwd'), r.fwd.bytes, 0.001, `${family} forward`);
        within(s.T * gatedDeltaNetEagerBytesPerToken(la, s.h, 'bwd'), r.bwd.bytes, 0.001, `${family} backward`);
        // The data-moving ops are the eager part of the kernel count (the chunked rule's own 7 and 10 besides).
        const k = gatedDeltaNetKernels(la);
        assert.deepEqual([r.fwd.kernels, r.bwd.kernels], [k.fwd - 7, k.bwd - 10], `${family} kernels`);
      }
    });
  }
});
