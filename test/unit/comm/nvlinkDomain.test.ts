/**
 * NVLink that spans hosts (GB200 NVL72). Facts: a GB200 compute tray holds 4 GPUs, and the rack's NVLink switch trays
 * join 72 of them (NVIDIA GB200 NVL72 datasheet); the catalog counts 64, the power-of-two part a job is placed on, so
 * a rank group of up to 64 GPUs talks over NVLink (1.8 TB/s per GPU) and only larger ones reach the network (one
 * 400 Gb/s adapter per GPU). On HGX H100 the same groups leave the 8-GPU node.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findGpu } from '../../../shared/hardware/gpus';
import { axisLink, nvlinkDomainSize } from '../../../shared/comm/links';
import { makePlan } from '../../../shared/plan/defaults';
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
});
