/**
 * A node count a launch script leaves to the scheduler with a fallback of its own (`NNODES=${SLURM_NNODES:-1}`, as
 * Megatron-LM's examples/mixtral/train_mixtral_8x7b_distributed.sh writes it): bash gives the fallback only when Slurm
 * did not set the variable, which is not how the script is run. It is an assumption the plan says it rests on, and
 * when the fallback cannot hold the file's layout the world holds it instead of raising a confident error. A knob
 * with a default (`GPUS_PER_NODE=${GPUS_PER_NODE:-8}`) stays the script's own setting.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { memoryHost } from './helpers';

const script = (nodes: string, layout: string, head = '') => `#!/bin/bash
${head}GPUS_PER_NODE=\${GPUS_PER_NODE:-8}
NNODES=${nodes}
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NNODES pretrain_gpt.py \\
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --ffn-hidden-size 14336 --swiglu \\
    --seq-length 4096 --micro-batch-size 1 --global-batch-size 256 --bf16 \\
    ${layout}
`;
// Mixtral 8x7B's example: PP 4 and EP 8 need DP·CP·TP to be a multiple of 8 on each of 4 stages: 32 GPUs at least.
const MIXTRAL = '--num-experts 8 --moe-router-topk 2 --pipeline-model-parallel-size 4 --expert-model-parallel-size 8';

function read(text: string) {
  return loadConfigGraph('/ws/train.sh', memoryHost({ '/ws/train.sh': text }), { settings: {} }).resolved;
}

describe('node counts left to the scheduler', () => {
  before(async () => { await initFormats(); });

  test('${SLURM_NNODES:-1} under PP 4 × EP 8: 4 nodes assumed (the fewest that hold it), said so, no EP error', () => {
    const r = read(script('${SLURM_NNODES:-"1"}', MIXTRAL));
    const p = r.plan!;
    assert.equal(p.cluster.gpusPerNode * p.cluster.nodes, 32);
    assert.equal(p.parallel.dp, 8);
    assert.ok(!r.problems.some((x) => x.code === 'ep-divides-dp'), JSON.stringify(r.problems));
    const a = r.assumptions.find((x) => x.path === 'cluster.worldSize');
    assert.ok(a, JSON.stringify(r.assumptions));
    assert.match(a.detail, /fallback 1 for SLURM_NNODES.*too few.*assumed 32 GPUs \(4 nodes of 8/);
  });

  test('a fallback that holds the layout is used, as an assumption', () => {
    const r = read(script('${SLURM_NNODES:-2}', '--tensor-model-parallel-size 8'));
    assert.equal(r.plan!.cluster.nodes, 2);
    assert.match(r.assumptions.find((x) => x.path === 'cluster.worldSize')?.detail ?? '', /fallback 2 for SLURM_NNODES.*assumed 16 GPUs \(2 nodes of 8\)/);
  });

  test('#SBATCH --nodes sets SLURM_NNODES: the count is the file\'s, not assumed', () => {
    const r = read(script('${SLURM_NNODES:-1}', MIXTRAL, '#SBATCH --nodes=4\n'));
    assert.equal(r.plan!.cluster.nodes, 4);
    assert.ok(!r.assumptions.some((x) => x.path === 'cluster.worldSize'), JSON.stringify(r.assumptions));
  });

  test('a knob with a default (NNODES=${NNODES:-2}, GPUS_PER_NODE=${GPUS_PER_NODE:-8}) is the script\'s setting', () => {
    const r = read(script('${NNODES:-2}', '--tensor-model-parallel-size 8'));
    assert.equal(r.plan!.cluster.nodes, 2);
    assert.equal(r.plan!.cluster.gpusPerNode, 8);
    assert.ok(!r.assumptions.some((x) => x.path === 'cluster.worldSize' || x.path === 'cluster.gpusPerNode'), JSON.stringify(r.assumptions));
  });
});
