/**
 * "Select GPU / Cluster" items: every catalog GPU is offered and can be found by the names it answers to, and the
 * GPUs-per-node step offers the GPU's own host first: a GB200 or GB300 NVL72 compute tray holds 4 GPUs (NVIDIA GB200
 * NVL72 reference: 18 compute trays of 2 Grace CPUs and 4 Blackwell GPUs), an HGX/DGX board 8.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findGpu, listGpus } from '../../../shared/hardware/gpus';
import { gpuItems, perNodeItems } from '../../../extension/commands/clusterItems';

describe('Select GPU / Cluster items', () => {
  test('one item per catalog GPU, the current one picked, its other names searchable', () => {
    const items = gpuItems(listGpus(), 'mi355x');
    assert.equal(items.length, listGpus().length);
    assert.deepEqual(items.filter((i) => i.picked).map((i) => i.id), ['mi355x']);
    const h100 = items.find((i) => i.id === 'h100-sxm')!;
    assert.match(h100.description, /GiB · h100\b/);
  });
  test('the GPUs-per-node step offers 4 first on a GB200 tray and 8 first on an HGX board, each size once', () => {
    const tray = perNodeItems(findGpu('gb200-nvl72')!);
    assert.equal(tray[0]!.label, '4');
    assert.match(tray[0]!.description, /compute tray/);
    const hgx = perNodeItems(findGpu('h100-sxm')!);
    assert.equal(hgx[0]!.label, '8');
    assert.match(hgx[0]!.description, /HGX\/DGX/);
    for (const list of [tray, hgx]) assert.equal(new Set(list.map((i) => i.label)).size, list.length);
    assert.deepEqual(hgx.map((i) => i.label).sort((a, b) => Number(a) - Number(b)), ['1', '2', '4', '8', '16']);
  });
});
