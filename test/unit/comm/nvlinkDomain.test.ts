/**
 * NVLink that spans hosts (GB200 NVL72). Facts: a GB200 compute tray holds 4 GPUs, and the rack's NVLink switch trays
 * join 72 of them (NVIDIA GB200 NVL72 datasheet); the catalog counts 64, the power-of-two part a job is placed on, so
 * a rank group of up to 64 GPUs talks over NVLink (1.8 TB/s per GPU) and only larger ones reach the network (one
 * 400 Gb/s adapter per GPU). On HGX H100 the same groups leave the 8-GPU node.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findGpu } from '../../../shared/hardware/gpus';
import { axisLink, nvlinkDomainSize } from '../../../shared/comm/links';
import { makePlan } from '../../../shared/plan/defaults';
import { readInputs } from '../../../shared/plan/inputs';
import { resolvePlan } from '../../../shared/plan/resolve';
import { initFormats, parseConfig } from '../../../formats/index';
import type { GpuSpec } from '../../../shared/plan/types';
import { tpCandidates } from '../../../shared/planner/space';
import { planLayouts } from '../../../shared/planner/plan-layouts';
import { findPreset } from '../../../shared/model/presets';
import { gpt, plan } from '../sim/fixtures';

const GB200 = findGpu('gb200') as GpuSpec;
const H100 = findGpu('h100-sxm') as GpuSpec;

/** Megatron rank order (tp innermost), TP 4 and DP = world / 4 on nodes of `gpn` GPUs. */
function layout(gpu: GpuSpec, world: number, gpn: number) {
  return plan({
    engine: 'megatron', model: gpt(8, 4096, 32), training: { microBatch: 1, globalBatch: world, seqLen: 2048, precision: 'bf16-mixed' },
    parallel: { tp: 4, dp: world / 4, sharding: { style: 'megatron-distopt' } }, cluster: { gpu, gpusPerNode: gpn, nodes: world / gpn },
  });
}

describe('NVLink across hosts (GB200 NVL72)', () => {
  test('the catalog entry: 4 GPUs per tray, 64 joined by NVLink, known by its common names', () => {
    for (const name of ['GB200', 'gb200-nvl72', 'NVIDIA GB200 NVL72']) assert.equal(findGpu(name)?.id, 'gb200-nvl72', name);
    assert.equal(GB200.gpusPerNode, 4);
    assert.equal(GB200.nvlinkDomain, 64);
    assert.equal(GB200.arch, 'blackwell');
  });

  test('data parallel over 16 trays stays on NVLink; on HGX H100 it crosses the network', () => {
    const gb = layout(GB200, 64, 4), h = layout(H100, 64, 8);
    assert.equal(nvlinkDomainSize(gb), 64);
    assert.equal(nvlinkDomainSize(h), 8);
    assert.equal(axisLink(gb, 'dp').tier, 'nvlink');
    assert.equal(axisLink(h, 'dp').tier, 'network');
    // A node-bound GPU lists no NVLink domain among what the estimate read.
    assert.equal(readInputs(h).cluster.nvlinkDomain, undefined);
    // On NVLink the group runs at NVLink's bus bandwidth, many times one adapter's.
    assert.ok(axisLink(gb, 'dp').busbw > 5 * axisLink(h, 'dp').busbw);
  });

  test('beyond the domain the group crosses the network, 16 ranks of it in each domain', () => {
    const l = axisLink(layout(GB200, 128, 4), 'dp');
    assert.equal(l.tier, 'network');
    assert.equal(l.perNode, 16);
    assert.equal(l.nodes, 2);
  });

  test('a GB200 cluster defaults to 4-GPU nodes', () => {
    const p = makePlan({ model: gpt(8, 4096, 32), parallel: { dp: 256 }, cluster: { worldSize: 256 } }, GB200);
    assert.equal(p.cluster.gpu.id, 'gb200-nvl72');
    assert.equal(p.cluster.gpusPerNode, 4);
    assert.equal(p.cluster.nodes, 64);
    // Other GPUs keep HGX's eight.
    assert.equal(makePlan({ model: gpt(8, 4096, 32), parallel: { dp: 256 }, cluster: { worldSize: 256 } }, H100).cluster.gpusPerNode, 8);
  });

  test('the planner keeps TP inside the NVLink domain, not the 4-GPU tray', () => {
    const model = findPreset('llama-3.1-70b')?.model;
    assert.ok(model);
    const none = () => undefined;
    assert.deepEqual(tpCandidates(model, 8, 64, {}, none), [1, 2, 4, 8]);
    const base = plan({
      engine: 'megatron', model, training: { microBatch: 1, globalBatch: 256, seqLen: 8192, precision: 'bf16-mixed' },
      parallel: { tp: 8, dp: 8, sharding: { style: 'megatron-distopt' } }, cluster: { gpu: GB200, gpusPerNode: 4, nodes: 16 },
    });
    const r = planLayouts(base, { topK: 20 });
    assert.ok(r.layouts.length > 0, r.problems.map((p) => p.message).join('; '));
    assert.ok(r.layouts.every((l) => l.tp <= 8));
  });

  describe('shardlens.cluster.nvlinkDomain', () => {
    before(async () => { await initFormats(); });
    // Megatron TP 4 on 32 trays of 4 GB200 (128 GPUs): data parallel over 32 ranks, a group of 128 GPUs.
    const launch = [
      'torchrun --nproc_per_node 4 --nnodes 32 pretrain_gpt.py --tensor-model-parallel-size 4 \\',
      '  --num-layers 8 --hidden-size 4096 --num-attention-heads 32 --seq-length 2048 --max-position-embeddings 2048 \\',
      '  --micro-batch-size 1 --global-batch-size 64 --bf16 --use-distributed-optimizer',
      '',
    ].join('\n');
    const planOf = (settings: Record<string, unknown>) => {
      const p = resolvePlan(parseConfig('/x/train.sh', launch), [], { settings: { gpu: 'gb200', ...settings } }).plan;
      assert.ok(p);
      return p;
    };
    test('unset: the catalog\'s 64, so 128 GPUs of data parallel cross the network', () => {
      const p = planOf({});
      assert.equal(p.cluster.gpusPerNode, 4);
      assert.equal(nvlinkDomainSize(p), 64);
      assert.equal(axisLink(p, 'dp').tier, 'network');
    });
    test('stated: whole racks of 72 are not enough for 128 GPUs, 128 is, and the setting is the source', () => {
      assert.equal(axisLink(planOf({ nvlinkDomain: 72 }), 'dp').tier, 'network');
      const p = planOf({ nvlinkDomain: 128 });
      assert.equal(nvlinkDomainSize(p), 128);
      assert.equal(axisLink(p, 'dp').tier, 'nvlink');
      assert.equal(p.sources['cluster.nvlinkDomain']?.kind, 'setting');
      // What the estimate read says so, with its source; the catalog's figure is listed as the catalog's.
      assert.deepEqual(readInputs(p).cluster.nvlinkDomain, { value: 128, source: p.sources['cluster.nvlinkDomain'] });
      assert.equal(readInputs(planOf({})).cluster.nvlinkDomain?.source.kind, 'default');
    });
    test('a domain no larger than a node changes nothing', () => {
      assert.equal(nvlinkDomainSize(planOf({ nvlinkDomain: 1 })), 4);
    });
  });
});
