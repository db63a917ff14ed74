/**
 * `--gpus` is forgiving (README): a count, optionally nodes × GPUs per node, then any catalog spelling of the GPU. The
 * letters of the name are never separators, so "SXM" keeps its x (issue 11). Each case names a GPU `shardlens gpus`
 * lists; the expected catalog ids are the entries of data/gpus.json those spellings refer to.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGpusArg } from '../../../cli/args';
import { findGpu } from '../../../shared/hardware/gpus';

const CASES: [string, { id: string; worldSize?: number; nodes?: number; gpusPerNode?: number }][] = [
  ['8xH100-SXM', { id: 'h100-sxm', worldSize: 8 }],
  ['2x8xh100-sxm5-80gb', { id: 'h100-sxm', worldSize: 16, nodes: 2, gpusPerNode: 8 }],
  ['16×A100-80GB', { id: 'a100-80gb', worldSize: 16 }],
  ['h100-sxm5-80gb', { id: 'h100-sxm' }],
  ['4 x H100 SXM', { id: 'h100-sxm', worldSize: 4 }],
  ['2*4*A100-80GB', { id: 'a100-80gb', worldSize: 8, nodes: 2, gpusPerNode: 4 }],
  ['256xGB200', { id: 'gb200-nvl72', worldSize: 256 }],
  ['64x4xgb200-nvl72', { id: 'gb200-nvl72', worldSize: 256, nodes: 64, gpusPerNode: 4 }],
];

describe('--gpus', () => {
  for (const [arg, want] of CASES) {
    test(arg, () => {
      const r = parseGpusArg(arg);
      assert.ok(!('error' in r), `parses: ${'error' in r ? r.error : ''}`);
      assert.equal(findGpu(r.gpuName)?.id, want.id, `GPU of ${r.gpuName}`);
      assert.equal(r.worldSize, want.worldSize);
      assert.equal(r.nodes, want.nodes);
      assert.equal(r.gpusPerNode, want.gpusPerNode);
    });
  }
  test('malformed values are errors, not guesses', () => {
    for (const bad of ['', '8x', '0xH100', '2x0xH100']) assert.ok('error' in parseGpusArg(bad), bad);
  });
});
