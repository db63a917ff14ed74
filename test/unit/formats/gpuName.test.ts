/**
 * A GPU named in a file is the GPU of the estimate (issue 11 item 5): the Slurm reader writes `cluster.gpuName` from
 * `--gres=gpu:<type>:<n>`, the resolver looks it up in the catalog, and the `shardlens.cluster.gpu` setting, when set,
 * wins over the file (its description in package.json says so).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';

const SCRIPT = `#!/bin/bash
#SBATCH --nodes=2
#SBATCH --gres=gpu:a100:8
#SBATCH --ntasks-per-node=1
torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py \\
  --tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 \\
  --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 \\
  --micro-batch-size 1 --global-batch-size 64 --bf16
`;

describe('cluster.gpuName', () => {
  before(async () => { await initFormats(); });
  test('Slurm --gres=gpu:a100:8 makes the estimate an A100 estimate', () => {
    const facts = parseConfig('file:///ws/train.slurm', SCRIPT);
    assert.equal(facts.facts['cluster.gpuName']?.value, 'a100');
    const r = resolvePlan(facts, []);
    assert.match(r.plan!.cluster.gpu.id, /^a100/);
  });
  test('a GPU name that does not say its memory is an assumption when a smaller part answers to it too', () => {
    // "a100" names the A100 40 GB and 80 GB alike (NVIDIA A100 datasheet: both SXM4 parts); the estimate reads the
    // 80 GB, so a "fits" verdict on it may not hold on the 40 GB, and the reading is an assumption that says so.
    const r = resolvePlan(parseConfig('file:///ws/train.slurm', SCRIPT), []);
    assert.equal(r.plan!.cluster.gpu.id, 'a100-80gb');
    assert.equal(r.plan!.sources['cluster.gpu']?.kind, 'assumed');
    const a = r.assumptions.find((x) => x.path === 'cluster.gpu');
    assert.ok(a && /40 GiB/.test(a.detail) && a.detail.includes('"a100-40gb"') && a.setting === 'shardlens.cluster.gpu', JSON.stringify(r.assumptions));
    // A name that states the memory, or the 80 GB's own id, is not assumed.
    for (const gres of ['a100-80gb', 'a100_80g', 'a100-sxm4-40gb']) {
      const s = resolvePlan(parseConfig('file:///ws/train.slurm', SCRIPT.replace('gpu:a100:8', `gpu:${gres}:8`)), []);
      assert.equal(s.plan!.sources['cluster.gpu']?.kind, 'explicit', gres);
      assert.ok(!s.assumptions.some((x) => x.path === 'cluster.gpu'), gres);
    }
    // A bare name whose other parts are larger ("H100": the 96 GB) keeps the verdict conservative and is not assumed.
    const h = resolvePlan(parseConfig('file:///ws/train.slurm', SCRIPT.replace('gpu:a100:8', 'gpu:h100:8')), []);
    assert.equal(h.plan!.sources['cluster.gpu']?.kind, 'explicit');
  });
  test('a GPU the catalog does not have is a warning naming the nearest entries, and the H100 stand-in is an assumption', () => {
    // "V100-PCIE-32GB" (torch's name for the PCIe V100) has no entry; before, a prefix match read it as the V100 SXM 16GB.
    const facts = parseConfig('file:///ws/train.slurm', SCRIPT.replace('gpu:a100:8', 'gpu:v100-pcie-32gb:8'));
    const r = resolvePlan(facts, []);
    const p = r.problems.find((x) => x.code === 'unknown-gpu');
    assert.ok(p && p.severity === 'warning', JSON.stringify(r.problems));
    assert.match(p.message, /"v100-32gb"/);
    // It points at the file's GPU name (the --gres value), where the fix is typed.
    assert.ok(p.paths.includes('cluster.gpuName'));
    assert.equal(r.plan!.cluster.gpu.id, 'h100-sxm');
    const a = r.assumptions.find((x) => x.path === 'cluster.gpu');
    assert.ok(a && a.detail.includes('"v100-pcie-32gb" is not in the GPU catalog'), JSON.stringify(r.assumptions));
  });
  test('a MIG slice in the settings is named as one, not as an unknown GPU, and the estimate says it stands in for it', () => {
    // torch names a MIG instance "NVIDIA A100-SXM4-40GB MIG 3g.20gb": 3 of 7 compute slices and 20 GB, not the A100.
    const facts = parseConfig('file:///ws/train.slurm', SCRIPT);
    const r = resolvePlan(facts, [], { settings: { gpu: 'NVIDIA A100-SXM4-40GB MIG 3g.20gb' } });
    const p = r.problems.find((x) => x.code === 'unknown-gpu');
    assert.ok(p, JSON.stringify(r.problems));
    assert.match(p.message, /MIG slice/);
    assert.ok(p.paths.includes('cluster.gpu'));
    assert.ok(r.assumptions.some((x) => x.path === 'cluster.gpu'));
  });
  test('the GPU setting wins over the file', () => {
    const facts = parseConfig('file:///ws/train.slurm', SCRIPT);
    const r = resolvePlan(facts, [], { settings: { gpu: 'H100-SXM' } });
    assert.equal(r.plan!.cluster.gpu.id, 'h100-sxm');
    assert.equal(r.plan!.sources['cluster.gpu']?.kind, 'setting');
  });
});
