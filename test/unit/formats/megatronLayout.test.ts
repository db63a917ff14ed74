/**
 * Megatron's --pipeline-model-parallel-layout, read as megatron/core/transformer/pipeline_parallel_layer_layout.py
 * `parse_str_to_list` reads it (commas cosmetic, "(group)*n" then "x*n" unrolled, "|" between stages; stage i on rank
 * i mod PP). Expected splits are the ones Megatron's documentation (docs/source/api-guide/pipeline_parallel_layout.md)
 * and Megatron-Bridge's Llama 3 70B recipe (perf_recipes/llama/h100/llama3.py) describe.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { layersPerRank, parsePipelineLayout } from '../../../formats/megatron/layout';
import { resolvePlan } from '../../../shared/plan/resolve';
import { whatIfsFor } from '../../../shared/plan/whatIf';

describe('Megatron pipeline layouts', () => {
  before(async () => { await initFormats(); });

  test('DeepSeek-V3 on PP 16 (Megatron docs): "Et*3|(tt|)*29,m|L" is 32 stages, rank 0 holds 3 + 2 layers, ranks 14 and 15 two', () => {
    const l = parsePipelineLayout('Et*3|(tt|)*29,m|L');
    assert.ok(!('error' in l));
    assert.equal(l.stages.length, 32);
    const ranks = layersPerRank(l, 16);
    assert.deepEqual(ranks, [5, ...new Array(13).fill(4), 2, 2]);
    assert.equal(ranks.reduce((a, b) => a + b, 0), 61); // DeepSeek-V3's 61 decoder layers; the MTP layer is not one.
  });

  const base = '--num-layers 80 --hidden-size 8192 --num-attention-heads 64 --seq-length 8192 --max-position-embeddings 8192 --micro-batch-size 1 --global-batch-size 256 --bf16 --tensor-model-parallel-size 4 --pipeline-model-parallel-size 8';
  const script = (layout: string, extra = '') => `torchrun --nproc_per_node 8 --nnodes 8 pretrain_gpt.py ${base} ${extra} --pipeline-model-parallel-layout "${layout}"\n`;

  test('Llama 3 70B on PP 8 (Megatron-Bridge recipe): 40 stages, VPP 5, 11 layers on rank 3 and 9 on rank 7', () => {
    const c = parseConfig('/x/train.sh', script('Et*2|(t*2|)*34,t*3|(t*2|)*3,tL'));
    assert.deepEqual(c.diagnostics, []);
    const plan = resolvePlan(c, []).plan!;
    assert.deepEqual(plan.parallel.stageLayers, [10, 10, 10, 11, 10, 10, 10, 9]);
    assert.equal(plan.parallel.vpp, 5);
    assert.equal(plan.parallel.schedule, 'interleaved');
  });

  for (const [layout, extra, why] of [
    ['Et*2|(t*2|)*34,x*3|(t*2|)*3,tL', '', /"x" is not a layer symbol/],
    ['Et*2|(t*2|)*33,t*3|(t*2|)*3,tL', '', /not a multiple of the 8 pipeline ranks/],
    ['Et*2|(t*2|)*34,t*2|(t*2|)*3,tL', '', /places 79 decoder layers, the model has 80/],
    ['(t|)*999999999', '', /more stages than any cluster has/],
    ['Et*2|(t*2|)*34,t*3|(t*2|)*3,tL', '--num-virtual-stages-per-pipeline-rank 4', /5 virtual stages per rank, not 4/],
  ] as const) {
    test(`a bad layout is a warning at its value: ${why.source}`, () => {
      const text = script(layout, extra);
      const c = parseConfig('/x/train.sh', text);
      const d = c.diagnostics.find((x) => x.code === 'megatron-pipeline-layout');
      assert.ok(d && d.severity === 'warning' && why.test(d.message), JSON.stringify(c.diagnostics));
      // At the layout's value (its quotes included or not), not at the flag or the top of the file.
      const at = text.indexOf(`"${layout}"`);
      assert.equal(d.range?.start.line, 0);
      assert.ok(d.range?.start.character === at || d.range?.start.character === at + 1, `${JSON.stringify(d.range)} vs ${at}`);
    });
  }
});

describe('what-ifs of a laid-out pipeline', () => {
  before(async () => { await initFormats(); });
  test('PP has no what-if when the layout pins the split (another PP needs another layout); TP still has', () => {
    const text = 'torchrun --nproc_per_node 8 --nnodes 8 pretrain_gpt.py --num-layers 80 --hidden-size 8192 --num-attention-heads 64 --seq-length 8192 --max-position-embeddings 8192 --micro-batch-size 1 --global-batch-size 256 --bf16 --tensor-model-parallel-size 4 --pipeline-model-parallel-size 8 --pipeline-model-parallel-layout "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL"\n';
    const plan = resolvePlan(parseConfig('/x/train.sh', text), []).plan!;
    assert.deepEqual(whatIfsFor(plan, 'parallel.pp'), []);
    assert.ok(whatIfsFor(plan, 'parallel.tp').length > 0);
    const plain = resolvePlan(parseConfig('/x/train.sh', text.replace(/ --pipeline-model-parallel-layout "[^"]+"/, '')), []).plan!;
    assert.ok(whatIfsFor(plain, 'parallel.pp').length > 0, 'without a layout PP has its what-ifs');
  });
});
