// What torch.compile saves (issue 13 §3, "torch.compile changes what is saved"): torch's own AOTAutograd min-cut
// partitioner (the one Inductor uses; probe/oracle/compiled_saves.py runs it without Inductor's code generation, on a
// CPU) on torchtitan's SwiGLU FeedForward, beside ShardLens's torchtitan block. Expected values: torch's measurement,
// and first principles for the eager graph (w1/w3's input, w1's, silu's and w3's outputs, their product).
// Skipped with a message when no Python with torch ≥ 2.4 exists; fails instead when CI=true.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ci, oracleMissing, oraclePython, runOracle } from './fixtures/python';
import type { ActivationShape } from '../../shared/memory/activations';
import { titanBlockBytes } from '../../shared/memory/blocks';

const python = oraclePython;
if (!python && !ci) console.log(`# compiled saves skipped: ${oracleMissing}`);

describe('torch.compile\'s partitioner on a torchtitan MLP (torch ≥ 2.4)', { skip: ci ? false : !python }, () => {
  test('eager saves the input and four MLP-width tensors; compiled recomputes silu\'s output, as the estimate counts', () => {
    if (!python) assert.fail(`CI=true but ${oracleMissing}`);
    const T = 256, h = 512, f = 1536;
    const r = runOracle<{ eager: number; compiled: number }>(python!, 'compiled_saves', [T, h, f]);
    assert.equal(r.eager, 2 * T * h + 4 * 2 * T * f);
    const shape: ActivationShape = {
      sLocal: T, b: 1, h, heads: 8, kvHeadsEff: 2, headDim: 64, ffn: f, gated: true, tp: 1, sp: false, flash: true,
      actBytes: 2, sKeys: T, dropout: false, impl: 'torchtitan',
    };
    assert.equal(titanBlockBytes(shape) - titanBlockBytes({ ...shape, compiled: true }), r.eager - r.compiled);
  });
});
