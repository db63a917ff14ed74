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
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { TimeCache } from '../../../shared/time/cache';
import { stageComm } from '../../../shared/time/stageComm';

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

/**
 * Outside Megatron the experts are weights of the FSDP or ZeRO group: without EP, FSDP wraps them in their block and
 * gathers and reduce-scatters them with it (torch fully_shard; DeepSpeed ZeRO-3 partitions every parameter); with EP
 * under FSDP they are FSDP units of their own over the expert shard group (torchtitan's expert mesh, Axolotl's
 * dp_shard), with no separate expert all-reduce. Expected sizes from first principles on Qwen3-30B-A3B (experts
 * 48·128·3·2048·768, everything else 1,541,093,376 weights): one gather is Ψ·2 bytes (bf16 param_dtype), one
 * reduce-scatter Ψ·B_grad.
 */
describe('experts in FSDP groups (transformers models under Axolotl)', () => {
  const EXPERTS = 48 * 128 * 3 * 2048 * 768;
  const REST = 1541093376;
  const head = 'base_model: Qwen/Qwen3-30B-A3B-Instruct-2507\nsequence_len: 2048\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\nbf16: true\ngradient_checkpointing: true\nflash_attention: true\n'
    + 'fsdp_config:\n  fsdp_version: 2\n  reshard_after_forward: true\n';
  const traffic = async (text: string, settings: Record<string, unknown>) => {
    await initFormats();
    const plan = resolvePlan(parseConfig('file:///ws/ax.yaml', text), [], { settings }).plan!;
    const cache = new TimeCache();
    return { plan, k: cache.stageTraffic(plan, 0), ids: stageComm(plan, 0, cache).collectives.map((c) => c.id) };
  };

  test('without EP: one FSDP group gathers every weight, experts included; no expert-DP all-reduce', async () => {
    const { plan, k, ids } = await traffic(`${head}dp_shard_size: 8\n`, { gpu: 'h200', worldSize: 8 });
    const gB = plan.training.gradDtype === 'fp32' ? 4 : 2;
    assert.equal(k.agBytes, (EXPERTS + REST) * 2);
    assert.equal(k.rsBytes, (EXPERTS + REST) * gB);
    assert.equal(k.hasEdp, false);
    assert.ok(!ids.includes('edp-grad-allreduce'));
  });

  test('Axolotl EP 2 × dp_shard 2: the experts\' own gathers and reduce-scatters over dp_shard, E/ep of them', async () => {
    const { plan, k, ids } = await traffic(`${head}plugins:\n  - axolotl.integrations.expert_parallel.ExpertParallelPlugin\nexpert_parallel_size: 2\ndp_shard_size: 2\n`, { gpu: 'h200' });
    const gB = plan.training.gradDtype === 'fp32' ? 4 : 2;
    assert.equal(k.agBytes, REST * 2);
    assert.equal(k.expertAgBytes, (EXPERTS / 2) * 2);
    assert.equal(k.expertRsBytes, (EXPERTS / 2) * gB);
    assert.equal(k.hasEdp, false);
    assert.deepEqual(ids.filter((x) => x.startsWith('expert-fsdp') || x === 'edp-grad-allreduce').sort(), ['expert-fsdp-all-gather', 'expert-fsdp-reduce-scatter']);
  });

  test('Megatron keeps its expert-DP gradient all-reduce', () => {
    const p = plan({ engine: 'megatron', model: moe, parallel: { dp: 32, ep: 8, sharding: { style: 'megatron-distopt' } }, cluster: { gpu: H100, gpusPerNode: 8, nodes: 4 } });
    const cache = new TimeCache();
    assert.equal(cache.stageTraffic(p, 0).hasEdp, true);
    assert.ok(stageComm(p, 0, cache).collectives.some((c) => c.id === 'edp-grad-allreduce'));
  });
});
