/**
 * The link model against measurements: Ultra-Scale Playbook H100 bus bandwidths (docs/formulas.md#reference-values, data/collectives.json),
 * 8 GPUs per node. Within one node and across two nodes the model's bus bandwidth lies between the measured all-gather
 * and all-reduce figures (NVLS lifts all-reduce above the link rate). From 4 nodes on, the measured cluster falls well
 * below its adapters' rate; the model's default fabric loses only fabric.dropPerDoubling per doubling (a measured
 * profile replaces it for the user's cluster).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import measured from '../../../data/collectives.json';
import { axisLink, kindBusBandwidth, linkSeconds } from '../../../shared/comm/links';
import { findGpu } from '../../../shared/hardware/gpus';
import type { GpuSpec, ModelSpec } from '../../../shared/plan/types';
import { gpt, plan } from '../sim/fixtures';

const H100 = findGpu('h100-sxm') as GpuSpec;

/** A small MoE model with one routed expert per rank of an EP group of `experts`. */
function moeModel(experts: number): ModelSpec {
  return { ...gpt(8, 1024, 16), moe: { experts, topK: 2, expertFfnSize: 1024, sharedExperts: 0, sharedExpertFfnSize: 0, denseFirstLayers: 0, layerFrequency: 1, sharedExpertGate: false } };
}
const table = measured.h100BusBandwidthByNodes;

for (const [i, nodes] of table.nodes.entries()) {
  if (nodes > 2) continue;
  test(`H100, DP over ${nodes} node(s) of 8: model bus bandwidth within the measured AG…AR range`, () => {
    const link = axisLink(plan({ model: gpt(8, 1024, 16), parallel: { dp: 8 * nodes }, cluster: { gpu: H100, gpusPerNode: 8 } }), 'dp');
    const gbs = link.busbw / 1e9;
    assert.equal(link.tier, nodes === 1 ? 'nvlink' : 'network');
    assert.ok(gbs >= table['all-gather'][i] && gbs <= table['all-reduce'][i], `${gbs.toFixed(1)} GB/s vs ${table['all-gather'][i]}…${table['all-reduce'][i]}`);
  });
}

test('TP of 8 inside a node uses NVLink; a DP group strided by TP·PP = 8 has one member per node (one adapter each)', () => {
  const pl = plan({ model: gpt(8, 1024, 16), parallel: { tp: 8, dp: 4 }, cluster: { gpu: H100, gpusPerNode: 8 } });
  assert.equal(axisLink(pl, 'tp').tier, 'nvlink');
  const dp = axisLink(pl, 'dp');
  assert.equal(dp.tier, 'network');
  assert.equal(dp.perNode, 1);
  // The group spans 4 nodes: one doubling beyond two, at the fabric's loss per doubling (data/collectives.json).
  assert.equal(dp.nodes, 4);
  assert.ok(Math.abs(dp.busbw - H100.interNodeBandwidth * measured.busEfficiency.network * (1 - measured.fabric.dropPerDoubling)) < 1);
});

test('GPUs without NVLink (intra-node bandwidth = PCIe host link) put in-node groups on PCIe', () => {
  const l40s = findGpu('l40s') as GpuSpec;
  assert.ok(l40s);
  const pl = plan({ model: gpt(8, 1024, 16), parallel: { tp: 4, dp: 2 }, cluster: { gpu: l40s, gpusPerNode: 8 } });
  assert.equal(axisLink(pl, 'tp').tier, 'pcie');
});

// An all-to-all across nodes is bound by each rank's own adapter: of a rank's message S, the share S·(n − perNode)/n for
// ranks on other nodes leaves through one 400 Gb/s adapter (50 GB/s, 0.9 of it reached: data/collectives.json
// busEfficiency.network), so busbw = S·(n − 1)/n / t = 45 GB/s × (n − 1)/(n − perNode). DeepEP's README measures its
// internode dispatch at the adapter's ~50 GB/s, not at NVLink's rate; a ring all-gather over the same two nodes reaches
// 184.6 GB/s (Ultra-Scale Playbook, the table above) because each chunk crosses between the nodes once.
for (const [nodes, perNode, want] of [
  [2, 8, 45 * 15 / 8], // EP 16 over two nodes of eight: 84.4 GB/s.
  [4, 8, 45 * 0.97 * 31 / 24], // EP 32 over four nodes: one doubling beyond two at the fabric's 3 % loss.
] as const) {
  test(`H100, EP all-to-all over ${nodes} nodes of ${perNode}: bus bandwidth at the adapter bound, ${want.toFixed(1)} GB/s`, () => {
    const n = nodes * perNode;
    const pl = plan({ model: moeModel(n), parallel: { dp: n, ep: n }, cluster: { gpu: H100, gpusPerNode: perNode } });
    const link = axisLink(pl, 'ep');
    assert.equal(link.tier, 'network');
    const a2a = kindBusBandwidth('all-to-all', link) / 1e9;
    assert.ok(Math.abs(a2a - want) < 0.5, `${a2a.toFixed(1)} GB/s`);
    // Below the ring all-gather's figure on the same group: a ring's chunk crosses between two nodes once.
    assert.ok(a2a < kindBusBandwidth('all-gather', link) / 1e9);
    // 1 GB per rank: 1e9 · (n − 1)/n bus bytes at that bandwidth (11 ms over two nodes), plus n − 1 network hops of
    // microseconds (NCCL's pairwise steps): within 2 %.
    const t = linkSeconds('all-to-all', 1e9, link);
    const wire = (1e9 * (n - 1) / n) / (a2a * 1e9);
    assert.ok(t >= wire && (t - wire) / wire < 0.02, `${t} s vs ${wire} s on the wire`);
  });
}

test('an all-to-all inside one node keeps the NVLink figure (no adapter on its path)', () => {
  const pl = plan({ model: moeModel(8), parallel: { dp: 8, ep: 8 }, cluster: { gpu: H100, gpusPerNode: 8 } });
  const link = axisLink(pl, 'ep');
  assert.equal(link.tier, 'nvlink');
  assert.equal(link.a2aBusbw, 0);
  // 450 GB/s × 0.78 × 0.71 (data/collectives.json busEfficiency.nvlink and kindEfficiency.nvlink all-to-all).
  assert.ok(Math.abs(kindBusBandwidth('all-to-all', link) / 1e9 - 450 * 0.78 * 0.71) < 0.5);
});
