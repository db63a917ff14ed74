/**
 * Megatron-DeepSpeed launch lines (`--deepspeed`): DeepSpeed's pipeline split of GPTModelPipe, the BigScience fork's
 * flags, the unfused attention default, DeepSpeed's engine owning the optimizer, and Megatron's rank order.
 *
 * Expected splits are DeepSpeed's own: deepspeed.runtime.utils `partition_balanced` and `partition_uniform` of
 * DeepSpeed 0.19.8 (the version probe/requirements.txt pins) run on GPTModelPipe's spec list [cast, EmbeddingPipe,
 * L × ParallelTransformerLayerPipe, MixedFusedLayerNorm, EmbeddingPipe (tied head), cast] with the method's weights, and
 * the transformer layers of each part counted. The BLOOM split [5, 6 × 10, 5] is also what the BigScience run used
 * (72 "transformer|embedding" specs over 12 stages, the embeddings on the first and last).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { deepspeedStageLayers, partitionBalanced, partitionUniform } from '../../../formats/megatron/deepspeedPipe';
import { resolvePlan } from '../../../shared/plan/resolve';
import { layoutLinks } from '../../../shared/comm/layout';

const P = { embedding: 900, layer: 600, norm: 1, head: 900 };
const split = (layers: number, pp: number, method: string) => deepspeedStageLayers({ layers, pp, method, tied: true, rmsnorm: false, params: P });

describe('DeepSpeed pipeline partition of GPTModelPipe', () => {
  for (const [layers, pp, method, expected] of [
    [70, 12, 'type:transformer|embedding', [5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5]],
    [70, 12, 'type:transformer', [6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5, 5]],
    [70, 12, "'type:transformer'", [6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5, 5]],
    [30, 4, 'type:transformer', [8, 8, 7, 7]],
    [24, 8, 'type:Transformer', [3, 3, 3, 3, 3, 3, 3, 3]],
    [10, 4, 'type:transformer|embedding', [2, 3, 3, 2]],
    [7, 3, 'type:transformer', [3, 2, 2]],
    [70, 12, 'uniform', [5, 7, 7, 6, 6, 6, 6, 6, 6, 6, 6, 3]],
    [70, 12, 'parameters', [5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5]],
  ] as const) {
    test(`${layers} layers over ${pp} stages by ${method}: ${expected.join(', ')}`, () => {
      const r = split(layers, pp, method);
      assert.ok(!('error' in r), JSON.stringify(r));
      assert.deepEqual(r.layers, expected);
    });
  }

  test('partition_uniform: the first n mod p parts one item larger; fewer items than parts leave empty parts', () => {
    assert.deepEqual(partitionUniform(75, 12), [0, 7, 14, 21, 27, 33, 39, 45, 51, 57, 63, 69, 75]);
    assert.deepEqual(partitionUniform(3, 5), [0, 1, 2, 3, 3, 3]);
    // Balanced over fewer items than parts falls back to the uniform split, as DeepSpeed does.
    assert.deepEqual(partitionBalanced([1, 1], 3), [0, 1, 2, 2]);
  });

  test('methods that are not DeepSpeed\'s, regular expressions and runaway sizes are refused, never run', () => {
    assert.match((split(70, 12, 'type:(a+)+b') as { error: string }).error, /not a list of class names/);
    assert.match((split(70, 12, 'balanced') as { error: string }).error, /not one DeepSpeed knows/);
    assert.match((split(1e6, 12, 'type:transformer') as { error: string }).error, /too large/);
  });
});

describe('Megatron-DeepSpeed launch lines', () => {
  before(async () => { await initFormats(); });

  const bloom = (extra = '') => [
    'deepspeed pretrain_gpt.py --tensor-model-parallel-size 4 --pipeline-model-parallel-size 12 \\',
    '  --num-layers 70 --hidden-size 14336 --num-attention-heads 112 --seq-length 2048 --max-position-embeddings 2048 \\',
    `  --micro-batch-size 2 --global-batch-size 2048 --bf16 --checkpoint-activations --pad-vocab-size-to 250880 ${extra} \\`,
    '  --deepspeed --deepspeed_config ds.json --zero-stage 0 --deepspeed-activation-checkpointing',
    '',
  ].join('\n');

  test('BLOOM\'s flags: vocabulary 250880 exactly, unfused attention, DeepSpeed\'s engine and its type:transformer|embedding split', () => {
    const c = parseConfig('/x/tr11.sh', bloom("--pp-partition-method 'type:transformer|embedding'"));
    const plan = resolvePlan(c, [], { settings: { gpu: 'a100-80gb', gpusPerNode: 8, nodes: 48 } }).plan!;
    assert.equal(plan.model.vocabSize, 250880);
    assert.equal(plan.model.vocabPadMultiple, 1);
    assert.equal(plan.training.flashAttention, false);
    assert.equal(plan.training.regime, 'deepspeed');
    assert.equal(plan.parallel.sharding.style, 'deepspeed');
    assert.deepEqual(plan.parallel.stageLayers, [5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5]);
  });

  test('without --pp-partition-method GPTModelPipe asks for type:transformer; --no-pipeline-parallel and flash flags are read', () => {
    const a = resolvePlan(parseConfig('/x/a.sh', bloom()), []).plan!;
    assert.deepEqual(a.parallel.stageLayers, [6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5, 5]);
    const b = resolvePlan(parseConfig('/x/b.sh', bloom('--use-flash-attn-v2')), []).plan!;
    assert.equal(b.training.flashAttention, true);
  });

  // Megatron-DeepSpeed's own GQA flag (megatron/arguments.py `--num-key-value-heads`; examples_deepspeed/pretrain_llama2_distributed.sh).
  test('--num-key-value-heads gives the KV heads (Megatron-DeepSpeed), where Megatron-LM writes --num-query-groups', () => {
    const plan = resolvePlan(parseConfig('/x/d.sh', bloom('--num-key-value-heads 8')), []).plan!;
    assert.equal(plan.model.kvHeads, 8);
  });

  test('a partition method ShardLens does not evaluate is said at its value, and the plan still resolves', () => {
    const text = bloom("--pp-partition-method 'type:[Tt]ransformer'");
    const c = parseConfig('/x/c.sh', text);
    const d = c.diagnostics.find((x) => x.code === 'megatron-deepspeed-partition');
    assert.ok(d && d.severity === 'info' && /not a list of class names/.test(d.message), JSON.stringify(c.diagnostics));
    assert.equal(d.range.start.line, 2);
    // At the value, its quote included or not.
    const at = text.split('\n')[2].indexOf("'type:[Tt]ransformer'");
    assert.ok(d.range.start.character === at || d.range.start.character === at + 1, JSON.stringify(d.range));
    assert.ok(resolvePlan(c, []).plan);
  });

  test('ZeRO-2 or 3 under the pipeline engine is an error at --zero-stage (DeepSpeed\'s PipelineEngine asserts it), not with --no-pipeline-parallel', () => {
    const text = bloom().replace('--zero-stage 0', '--zero-stage 2');
    const c = parseConfig('/x/z.sh', text);
    const d = c.diagnostics.find((x) => x.code === 'deepspeed-pipeline-zero');
    assert.ok(d && d.severity === 'error' && /incompatible with pipeline parallelism/.test(d.message), JSON.stringify(c.diagnostics));
    assert.equal(d.range.start.line, 3);
    assert.equal(d.range.start.character, text.split('\n')[3].indexOf('--zero-stage 2') + '--zero-stage '.length);
    const ok = parseConfig('/x/y.sh', text.replace('--deepspeed ', '--deepspeed --no-pipeline-parallel '));
    assert.ok(!ok.diagnostics.some((x) => x.code === 'deepspeed-pipeline-zero'));
  });

  test('Megatron-LM without --deepspeed keeps flash attention, its own regime and an even split', () => {
    const c = parseConfig('/x/d.sh', 'torchrun pretrain_gpt.py --tensor-model-parallel-size 4 --pipeline-model-parallel-size 4 --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 --bf16\n');
    const plan = resolvePlan(c, []).plan!;
    assert.equal(plan.training.flashAttention, true);
    assert.notEqual(plan.training.regime, 'deepspeed');
    assert.equal(plan.parallel.stageLayers, undefined);
  });
});

describe('rank order', () => {
  before(async () => { await initFormats(); });
  const line = (extra = '') => `torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --tensor-model-parallel-size 4 --pipeline-model-parallel-size 4 --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 --bf16 ${extra}\n`;

  test('Megatron\'s default tp-cp-ep-dp-pp: with TP 4 on 8-GPU nodes a node holds two DP ranks, every pipeline hop leaves the node', () => {
    // megatron/core/parallel_state.py initialize_model_parallel(order="tp-cp-ep-dp-pp"): DP stride 4, PP stride 4 · 2 = 8.
    const plan = resolvePlan(parseConfig('/x/e.sh', line()), []).plan!;
    assert.deepEqual(plan.parallel.order, ['tp', 'cp', 'ep', 'dp', 'pp']);
    const l = layoutLinks(plan);
    assert.equal(l.shardLink.tier, 'nvlink');
    assert.equal(l.ppLink.tier, 'network');
  });

  test('a pipeline wider than a node crosses the network at some hop, even when the first two stages share a node', () => {
    // TP 2 × DP 2 × PP 4 on two 8-GPU nodes: stages sit 4 ranks apart, stages 0-1 on node 0, 2-3 on node 1; the schedule
    // waits for its slowest hop (1 → 2).
    const text = line().replace('--tensor-model-parallel-size 4', '--tensor-model-parallel-size 2').replace('--nnodes 4', '--nnodes 2');
    const plan = resolvePlan(parseConfig('/x/g.sh', text), []).plan!;
    assert.equal(plan.parallel.dp, 2);
    assert.equal(layoutLinks(plan).ppLink.tier, 'network');
  });

  test('--use-tp-pp-dp-mapping puts the pipeline inside data parallel: with PP 2 both stages share a node, DP crosses nodes', () => {
    // megatron/training/initialize.py: order 'tp-pp-dp' with --use-tp-pp-dp-mapping (CP and EP 1). TP 4 · PP 2 fill a node.
    const plan = resolvePlan(parseConfig('/x/f.sh', line('--use-tp-pp-dp-mapping').replace('--pipeline-model-parallel-size 4', '--pipeline-model-parallel-size 2')), []).plan!;
    assert.deepEqual(plan.parallel.order, ['tp', 'cp', 'ep', 'pp', 'dp']);
    const l = layoutLinks(plan);
    assert.equal(l.shardLink.tier, 'network');
    assert.equal(l.ppLink.tier, 'nvlink');
  });
});
