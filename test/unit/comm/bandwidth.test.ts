/**
 * The link model against measurements: Ultra-Scale Playbook H100 bus bandwidths (formulas.md §c, data/collectives.json),
 * 8 GPUs per node. Within one node and across two nodes the model's bus bandwidth lies between the measured all-gather
 * and all-reduce figures (NVLS lifts all-reduce above the link rate). From 4 nodes on, the measured cluster falls well
 * below its adapters' rate; the model's default fabric loses only fabric.dropPerDoubling per doubling (a measured
 * profile replaces it for the user's cluster).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import measured from '../../../data/collectives.json';
import { axisLink } from '../../../shared/comm/links';
import { findGpu } from '../../../shared/hardware/gpus';
import type { GpuSpec } from '../../../shared/plan/types';
import { gpt, plan } from '../sim/fixtures';

const H100 = findGpu('h100-sxm') as GpuSpec;
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
