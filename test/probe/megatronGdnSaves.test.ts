// What Megatron-LM's Gated DeltaNet mixer keeps for its backward (shared/memory/gatedDeltaNetSaves.ts
// megatronGatedDeltaNetSavedBytesPerToken) against torch's own saved-tensor hooks on the same forward
// (probe/oracle/megatron_gdn_saves.py): the views the kernels keep, and what AOTAutograd's min-cut partitioner keeps in
// Megatron's compiled gates and gate multiply, with the Triton and Transformer Engine kernels stood in by what their
// sources save. Two shapes: value heads twice the key heads (Qwen3-Next's ratio) and equal heads with wider values.
// Skipped with a message when no Python with torch ≥ 2.4 exists; fails instead when CI=true.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ci, oracleMissing, oraclePython, runOracle } from './fixtures/python';
import { megatronGatedDeltaNetSavedBytesPerToken } from '../../shared/memory/gatedDeltaNetSaves';

const python = oraclePython;
if (!python && !ci) console.log(`# Megatron Gated DeltaNet saves skipped: ${oracleMissing}`);

describe('Megatron-LM Gated DeltaNet saves (torch ≥ 2.4)', { skip: ci ? false : !python }, () => {
  for (const [T, hk, hv, dk, dv] of [[256, 2, 4, 16, 16], [128, 4, 4, 16, 32]]) {
    test(`${hk} key heads of ${dk}, ${hv} value heads of ${dv}: bytes per token as torch keeps them`, () => {
      if (!python) assert.fail(`CI=true but ${oracleMissing}`);
      const r = runOracle<{ bytes: number; tensors: unknown[] }>(python!, 'megatron_gdn_saves', [T, hk, hv, dk, dv]);
      const la = { layers: 1, keyHeads: hk, valueHeads: hv, keyHeadDim: dk, valueHeadDim: dv, convKernel: 4 };
      assert.equal(megatronGatedDeltaNetSavedBytesPerToken(la, 2), r.bytes, JSON.stringify(r.tensors));
    });
  }
});
