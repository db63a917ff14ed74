/**
 * Where the expert-data-parallel group sits. The ranks that hold the same experts reduce their gradients together;
 * EP (and expert TP) lie inside that group, so its members are ep · etp ranks apart: Megatron-core builds the expert
 * groups in the rank order tp-ep-dp-pp with tp the expert TP (megatron/core/parallel_state.py, the expert
 * RankGenerator), and torchtitan shards the experts over the mesh dimension outside dp_shard_in_ep × cp × tp. From
 * that placement: with EP 8 on 8-GPU nodes each member is on another node (the network); with EP 2 four members share
 * a node (NVLink).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { layoutLinks } from '../../../shared/comm/layout';
import { findGpu } from '../../../shared/hardware/gpus';
import type { GpuSpec, ModelSpec } from '../../../shared/plan/types';
import { gpt, plan } from '../sim/fixtures';

const H100 = findGpu('h100-sxm') as GpuSpec;
const moe: ModelSpec = {
  ...gpt(8, 2048, 16),
  moe: { experts: 64, topK: 8, expertFfnSize: 768, sharedExperts: 0, sharedExpertFfnSize: 0, denseFirstLayers: 0, layerFrequency: 1, sharedExpertGate: false },
};
const layout = (ep: number, dp: number, tp = 1, etp = 1) =>
  layoutLinks(plan({ model: moe, parallel: { dp, ep, tp, etp }, cluster: { gpu: H100, gpusPerNode: 8, nodes: (dp * tp) / 8 } }));

describe('the expert-data-parallel group', () => {
  test('EP 8 on 8-GPU nodes, 32 GPUs: 4 members, one per node, over the network', () => {
    const l = layout(8, 32);
    assert.equal(l.edp, 4);
    assert.equal(l.edpLink.tier, 'network');
    assert.equal(l.edpLink.perNode, 1);
    assert.equal(l.edpLink.nodes, 4);
  });

  test('EP 2 on the same nodes: 16 members, 4 per node (ranks 2 apart), still crossing nodes', () => {
    const l = layout(2, 32);
    assert.equal(l.edp, 16);
    assert.equal(l.edpLink.perNode, 4);
    assert.equal(l.edpLink.tier, 'network');
  });

  test('EP 2 on one node: 4 members on NVLink', () => {
    const l = layout(2, 8);
    assert.equal(l.edp, 4);
    assert.equal(l.edpLink.tier, 'nvlink');
  });

  test('expert TP widens the spacing: TP 2 × EP 4 with expert TP 2 on 64 GPUs puts one member in each node', () => {
    const l = layout(4, 32, 2, 2);
    assert.equal(l.edp, 8);
    assert.equal(l.edpLink.perNode, 1);
  });
});
