// One multi-head latent attention layer's saved bytes against torch's: the oracle (probe/oracle, transformers'
// DeepseekV3Attention / DeepseekV2Attention on fake tensors) builds each MLA configuration of the grid at 2 and at 3
// layers, and the growth of its activation peak is one layer's saved tensors, as torch's MemTracker counts them. The
// estimate's growth is layerActivationBytes (shared/memory/blocks.ts hfBlockBytes with shared/memory/mlaSaves.ts).
// The expected values are torch's accounting, not ShardLens's. Skipped with a message when no Python with torch ≥ 2.4
// exists; fails instead when CI=true.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ci, oracleMissing, oraclePython } from './fixtures/python';
import { ORACLE_GRID, runOracleGrid, type GridCase, type GridResult } from '../../validation/torch/oracleGrid';

const python = oraclePython;
if (!python && !ci) console.log(`# MLA oracle check skipped: ${oracleMissing}`);

const MLA = ORACLE_GRID.filter((g) => / MLA/.test(g.name));
/** The case at `layers` layers, every layer dense (the config's first_k_dense_replace follows the depth). */
const at = (g: GridCase, layers: number): GridCase => ({
  ...g, name: `${g.name} @${layers}`, layers, ...(g.hfConfig ? { hfConfig: { ...g.hfConfig, first_k_dense_replace: layers } } : {}),
});

describe('MLA: one layer\'s saved tensors against the oracle\'s per-layer growth (torch ≥ 2.4)', { skip: ci ? false : !python }, () => {
  let results: GridResult[] = [];
  before(async () => {
    if (!python) assert.fail(`CI=true but ${oracleMissing}`);
    results = await runOracleGrid(python!, MLA.flatMap((g) => [at(g, 2), at(g, 3)]));
  });

  test('the grid has MLA cases (DeepSeek-V3 and V2-Lite widths; sdpa, eager; autocast, bf16, fp32) and every one ran', () => {
    assert.ok(MLA.length >= 5);
    assert.deepEqual(results.filter((r) => !r.comparison).map((r) => `${r.case.name}: ${r.error}`), []);
  });

  // Exact up to the norms' weights in the estimate's autocast weight copies (autocast casts only the linears' weights)
  // and DeepSeek-V2's complex rotary table, both below 0.01 %.
  test('per layer within 0.05 % of torch\'s saved bytes', () => {
    const bad: string[] = [];
    for (let i = 0; i < results.length; i += 2) {
      const act = (r: GridResult) => r.comparison!.stages[0].rows.find((x) => x.category === 'activations')!;
      const oracle = act(results[i + 1]).oracle - act(results[i]).oracle;
      const estimate = act(results[i + 1]).estimate - act(results[i]).estimate;
      const err = estimate / oracle - 1;
      if (!(Math.abs(err) <= 0.0005)) bad.push(`${MLA[i / 2].name}: oracle ${oracle} B, estimate ${estimate} B (${(err * 100).toFixed(2)} %)`);
    }
    assert.deepEqual(bad, []);
  });
});
